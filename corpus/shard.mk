# shard.mk — corpus/shard.sh's shards as the targets of a makefile, so
# that make -j runs as many at once as it is given:
#
#   make -f corpus/shard.mk -j4 MANIFEST=manifest.txt OUT=DIR SHARDS=8 \
#        [DIFF_OPTIONS='--engines il,interp,compiled --jobs 1']
#
# makes DIR/part-K-of-8.json for K = 1 to 8 (corpus/shard.sh run), then
# DIR/report.json and DIR/report.txt (corpus/shard.sh merge); its exit
# status is the merge's. A part already there is not made again.
SHARDS ?= 4
OUT ?= shards
SHARD_SH := $(dir $(lastword $(MAKEFILE_LIST)))shard.sh
ifndef MANIFEST
$(error MANIFEST is not set: make -f corpus/shard.mk MANIFEST=FILE)
endif
PARTS := $(foreach k,$(shell seq 1 $(SHARDS)),$(OUT)/part-$(k)-of-$(SHARDS).json)

.PHONY: all
all: $(OUT)/report.json

$(OUT)/report.json: $(PARTS)
	$(SHARD_SH) merge $(OUT) $(SHARDS) > $(OUT)/report.txt

$(OUT)/part-%-of-$(SHARDS).json:
	$(SHARD_SH) run $(MANIFEST) $(OUT) $* $(SHARDS) $(DIFF_OPTIONS)
