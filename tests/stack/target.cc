// SPDX-License-Identifier: MIT
// target.cc — a process for `cfisem stack` to unwind from outside
// (tests/check_stack.c): three threads, each blocked where it stays until
// killed, with frames in the program, in libstdc++ and in libc.
//
//   main       joins a std::thread: std::thread::join (libstdc++),
//              then pthread_join (libc);
//   sorter     started by std::thread (execute_native_thread_routine in
//              libstdc++), blocked inside a std::sort comparator called
//              through a std::function;
//   signalled  blocked in its SIGUSR1 handler, above the signal frame.
//
// Each thread writes one byte to the ready pipe just before it blocks;
// when both have, main prints "ready" and its pid, then joins. The test
// then waits until every thread sleeps in the kernel.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <functional>
#include <poll.h>
#include <pthread.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

int ready_pipe[2];

void block_forever()
{
    for (;;)
        poll(nullptr, 0, -1);
}

void announce()
{
    char byte = 1;
    if (write(ready_pipe[1], &byte, 1) != 1)
        _exit(3);
}

__attribute__((noinline)) bool blocking_less(int a, int b)
{
    static bool blocked;
    if (!blocked) {
        blocked = true;
        announce();
        block_forever();
    }
    return a < b;
}

void sorter()
{
    std::function<bool(int, int)> less = blocking_less;
    std::vector<int> values;
    for (int i = 0; i < 64; i++)
        values.push_back((i * 37) % 64);
    std::sort(values.begin(), values.end(), less);
}

void on_usr1(int)
{
    announce();
    block_forever();
}

void signalled()
{
    struct sigaction action = {};
    action.sa_handler = on_usr1;
    sigemptyset(&action.sa_mask);
    sigaction(SIGUSR1, &action, nullptr);
    pthread_kill(pthread_self(), SIGUSR1);
}

} // namespace

int main()
{
    if (pipe(ready_pipe) != 0)
        return 2;
    std::thread first(sorter);
    std::thread second(signalled);
    char bytes[2];
    for (size_t got = 0; got < sizeof bytes;) {
        ssize_t n = read(ready_pipe[0], bytes + got, sizeof bytes - got);
        if (n <= 0)
            return 2;
        got += (size_t)n;
    }
    std::printf("ready %d\n", (int)getpid());
    std::fflush(stdout);
    first.join();
    second.join();
    return 0;
}
