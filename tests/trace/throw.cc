// throw.cc — an exception thrown four calls deep, caught in main; the
// frames between have destructors to run (cleanup landing pads).
#include <stdexcept>

struct guard {
    volatile int *counter;
    ~guard() { ++*counter; }
};

static volatile int cleaned;

__attribute__((noinline)) static int thrower(int n)
{
    guard g{&cleaned};
    if (n == 0)
        throw std::runtime_error("deep");
    return thrower(n - 1) + 1;
}

int main()
{
    try {
        thrower(3);
    } catch (const std::exception &) {
        return cleaned == 4 ? 0 : 1;
    }
    return 2;
}
