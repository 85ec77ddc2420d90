/*
 * spin: CPU-bound work proportional to its argument, for the A/B benchmarks and tests of
 * `timekit ab`: `spin 20000` against `spin 20400` is a pair of "builds" where B does 2 % more work.
 *
 * Adds UNITS thousand numbers in a dependent chain (a volatile sink keeps the compiler from
 * folding it); it reads no input and writes nothing, so its time is its CPU work and the cost of
 * starting a process. About 1 ms per 1000 units on a 2-3 GHz core.
 * Usage: spin UNITS | --version
 */
#define _GNU_SOURCE

#define NAME "spin"
#include "kit.h"

int main(int argc, char **argv)
{
    if (kit_version(argc, argv, "")) return 0;
    char *end = NULL;
    unsigned long long units = argc == 2 ? strtoull(argv[1], &end, 10) : 0;
    if (argc != 2 || !end || *end || units == 0) {
        fprintf(stderr, "usage: " NAME " UNITS (a positive integer: thousands of additions)\n");
        return 2;
    }
    volatile uint64_t sink = 0;
    for (uint64_t i = 0; i < (uint64_t)units * 1000u; i++) sink += i;
    return 0;
}
