/*
 * loop: a small CPU-bound program for the tests and benchmarks of `timekit ab` / `timekit bench`
 * on shell commands. It adds MILLIONS million numbers; two builds with different -DMILLIONS=
 * are "two builds of your program" where one does more work.
 *     cc -O2 -DMILLIONS=600 -o loop-a loop.c && cc -O2 -DMILLIONS=660 -o loop-b loop.c
 */
#include <stdint.h>

#ifndef MILLIONS
#define MILLIONS 600
#endif

int main(void)
{
    volatile uint64_t sink = 0;
    for (uint64_t i = 0; i < (uint64_t)MILLIONS * 1000000u; i++) sink += i;
    return sink == 42;   /* never: the sum is far larger; keeps the loop from being optimized away */
}
