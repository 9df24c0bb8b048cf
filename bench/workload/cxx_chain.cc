/* SPDX-License-Identifier: MIT */
// cxx_chain.cc — a C++ stack through libstdc++ (workload.h): `depth`
// frames with destructors to run (their FDEs have an LSDA), then
// libstdc++'s std::ostream::operator<<(long) and its num_put, which
// write into a stream buffer of ours; its xsputn calls the leaf.
#include <ostream>
#include <streambuf>

#include "workload.h"

namespace {

struct Guard {
    volatile long value;
    ~Guard() { value = 0; }
};

class LeafBuffer : public std::streambuf {
public:
    LeafBuffer(workload_leaf_fn *leaf, void *arg) : leaf_(leaf), arg_(arg) {}

protected:
    std::streamsize xsputn(const char *, std::streamsize n) override
    {
        call_leaf();
        return n;
    }
    int_type overflow(int_type c) override
    {
        call_leaf();
        return traits_type::not_eof(c);
    }

private:
    void call_leaf()
    {
        if (!called_) {
            called_ = true;
            leaf_(arg_);
        }
    }
    workload_leaf_fn *leaf_;
    void *arg_;
    bool called_ = false;
};

long chain(int depth, LeafBuffer *buffer);
long (*volatile chain_call)(int, LeafBuffer *) = chain;

long chain(int depth, LeafBuffer *buffer)
{
    Guard guard{depth};
    if (depth <= 0) {
        std::ostream out(buffer);
        out << 1234567L;
        return 1;
    }
    return chain_call(depth - 1, buffer) + guard.value;
}

} // namespace

extern "C" long workload_cxx(int depth, workload_leaf_fn *leaf, void *arg)
{
    LeafBuffer buffer(leaf, arg);
    return chain(depth, &buffer);
}
