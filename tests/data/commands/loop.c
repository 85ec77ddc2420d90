/*
 * loop: a small CPU-bound program for the tests and benchmarks of `timekit ab` / `timekit bench`
 * on shell commands. It adds MILLIONS million numbers; two builds with different -DMILLIONS=
 * are "two builds of your program" where one does more work.
 *     cc -O2 -DMILLIONS=600 -o loop-a loop.c && cc -O2 -DMILLIONS=660 -o loop-b loop.c
 * Built with -DSELF_REPORT it also times itself (its process CPU time and main's wall time) and
 * prints "loop-self cpu=S wall=S", appended to $LOOP_SELF_LOG as well where that is set: the
 * reference benchmarks/hyperfine_agreement.py holds each tool's figures against, execution by
 * execution, so that the machine's drift between the tools' turns cancels.
 */
#include <stdint.h>
#ifdef SELF_REPORT
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
#endif

#ifndef MILLIONS
#define MILLIONS 600
#endif

int main(void)
{
#ifdef SELF_REPORT
    double start = seconds(CLOCK_MONOTONIC);
#endif
    volatile uint64_t sink = 0;
    for (uint64_t i = 0; i < (uint64_t)MILLIONS * 1000000u; i++) sink += i;
#ifdef SELF_REPORT
    double cpu = seconds(CLOCK_PROCESS_CPUTIME_ID), wall = seconds(CLOCK_MONOTONIC) - start;
    printf("loop-self cpu=%.6f wall=%.6f\n", cpu, wall);
    const char *log = getenv("LOOP_SELF_LOG");
    FILE *f = log ? fopen(log, "a") : NULL;
    if (f) {
        fprintf(f, "loop-self cpu=%.6f wall=%.6f\n", cpu, wall);
        fclose(f);
    }
#endif
    return sink == 42;   /* never: the sum is far larger; keeps the loop from being optimized away */
}
