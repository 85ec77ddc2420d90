/*
 * busy: the background load of the time-APIs experiment (the thesis's `garb`).
 *
 * Counts the divisors of a large number (default 1234567891234, as in the thesis) over and
 * over, so it stays CPU-bound until it is killed. Apart from --version it never writes anything.
 * Usage: busy [NUMBER] | --version
 */
#define _GNU_SOURCE

#define NAME "busy"
#include "kit.h"

int main(int argc, char **argv)
{
    if (kit_version(argc, argv, "")) return 0;
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : UINT64_C(1234567891234);
    if (n == 0) n = UINT64_C(1234567891234);
    volatile uint64_t sink = 0;
    for (;;) {
        uint64_t count = 0;
        for (uint64_t i = 1; i <= n; i++)
            if (n % i == 0) count++;
        sink += count;
    }
}
