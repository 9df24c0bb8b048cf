#!/bin/bash -eu
# SPDX-License-Identifier: MIT
# ClusterFuzzLite's build: the OSS-Fuzz script, from the tree's top
# (WORKDIR $SRC/cfisem).
cd "$SRC/cfisem"
exec fuzz/oss-fuzz/build.sh
