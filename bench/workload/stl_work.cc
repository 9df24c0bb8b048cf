/* SPDX-License-Identifier: MIT */
// stl_work.cc — a C++ program for bench/perf_table.sh to record: every
// round sorts strings with a comparator (std::sort), fills and searches
// a std::map, and formats numbers through std::ostringstream, at the
// bottom of a recursion through std::function; the samples' stacks go
// through libstdc++ (the map's rebalancing, the stream's num_put, the
// strings' allocations) and libc (malloc, memcmp, vsnprintf).
//
//   stl_work [ROUNDS]   (default 400)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string key_of(unsigned long v)
{
    std::ostringstream out;
    out << (v * 2654435761ul) % 1000003ul << '.' << v * 0.37;
    return out.str();
}

unsigned long one_round(unsigned long seed)
{
    std::vector<std::string> keys;
    for (unsigned long i = 0; i < 2000; i++)
        keys.push_back(key_of(seed + i));
    std::sort(keys.begin(), keys.end(),
              [](const std::string &a, const std::string &b) {
                  return a.size() != b.size() ? a.size() < b.size() : a < b;
              });
    std::map<std::string, unsigned long> index;
    for (unsigned long i = 0; i < keys.size(); i++)
        index[keys[i]] = i;
    unsigned long found = 0;
    for (unsigned long i = 0; i < 2000; i += 3)
        found += index.count(key_of(seed + i));
    return found + index.size();
}

}  // namespace

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? std::atol(argv[1]) : 400;
    std::function<unsigned long(int, unsigned long)> nest =
        [&nest](int depth, unsigned long seed) -> unsigned long {
        if (depth > 0)
            return nest(depth - 1, seed) + 1;
        return one_round(seed);
    };
    unsigned long sum = 0;
    for (long r = 0; r < rounds; r++)
        sum += nest(static_cast<int>(8 + r % 8), static_cast<unsigned long>(r));
    std::printf("%lu\n", sum);
    return 0;
}
