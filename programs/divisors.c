/*
 * divisors: count the divisors of a number read from a task input file.
 *
 * The workload of the time-APIs experiment. It is deliberately simple and CPU-bound:
 * trial division of every i in 1..n, with a fixed 64-bit integer type so the amount of
 * work per input is the same on every platform (the width of `long` is not).
 * Besides the count it reports its own CPU time, measured two ways, as key=value lines:
 *   self-clock    clock() difference in seconds (what the thesis's program reported)
 *   self-cputime  CLOCK_PROCESS_CPUTIME_ID difference in seconds
 * Usage: divisors FILE   (FILE holds the number; lines starting with '#' are comments)
 *        divisors --version
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buildinfo.h"

static int read_number(const char *path, uint64_t *out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "divisors: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[256];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || *p == '\0') continue;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n') end++;
        if (errno || end == p || *end != '\0' || v == 0) {
            fprintf(stderr, "divisors: %s: expected one positive integer, got '%s'\n", path, p);
            fclose(f);
            return -1;
        }
        *out = (uint64_t)v;
        found = 1;
    }
    fclose(f);
    if (!found) fprintf(stderr, "divisors: %s: no number found\n", path);
    return found ? 0 : -1;
}

static double cputime_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t count_divisors(uint64_t n)
{
    uint64_t count = 0;
    for (uint64_t i = 1; i <= n; i++)
        if (n % i == 0) count++;
    return count;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("divisors %s (%s; %s; uint64_t)\n", KIT_VERSION, KIT_COMPILER, KIT_CFLAGS);
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: divisors FILE | --version\n");
        return 2;
    }
    uint64_t n;
    if (read_number(argv[1], &n) != 0) return 2;

    clock_t clock_start = clock();
    double cpu_start = cputime_now();
    uint64_t count = count_divisors(n);
    double cpu_end = cputime_now();
    clock_t clock_end = clock();

    printf("input=%" PRIu64 "\n", n);
    printf("divisors=%" PRIu64 "\n", count);
    printf("self-clock=%.6f\n", (double)(clock_end - clock_start) / CLOCKS_PER_SEC);
    printf("self-cputime=%.9f\n", cpu_end - cpu_start);
    return 0;
}
