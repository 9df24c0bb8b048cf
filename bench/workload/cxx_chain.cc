// cxx_chain.cc — a C++ stack through libstdc++ (workload.h): `depth`
// frames with destructors to run (their FDEs have an LSDA), then
// libstdc++'s operator new, which calls the new-handler when the
// allocation fails; the handler calls the leaf, then throws
// std::bad_alloc, which the innermost frame catches.
#include <cstddef>
#include <new>

#include "workload.h"

namespace {

struct Guard {
    volatile long value;
    ~Guard() { value = 0; }
};

workload_leaf_fn *current_leaf;
void *current_arg;

void call_leaf_then_fail()
{
    std::set_new_handler(nullptr);
    current_leaf(current_arg);
    throw std::bad_alloc();
}

long chain(int depth);
long (*volatile chain_call)(int) = chain;

long chain(int depth)
{
    Guard guard{depth};
    if (depth <= 0) {
        std::set_new_handler(call_leaf_then_fail);
        try {
            void *p = ::operator new(static_cast<std::size_t>(-1) / 4);
            ::operator delete(p);
        } catch (const std::bad_alloc &) {
        }
        return 1;
    }
    return chain_call(depth - 1) + guard.value;
}

} // namespace

extern "C" long workload_cxx(int depth, workload_leaf_fn *leaf, void *arg)
{
    current_leaf = leaf;
    current_arg = arg;
    return chain(depth);
}
