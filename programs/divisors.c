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
#define _GNU_SOURCE
#include <inttypes.h>

#define NAME "divisors"
#include "kit.h"

static int read_number(const char *path, uint64_t *out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, NAME ": cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[256];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char *p = kit_trim(line);
        if (*p == '#' || *p == '\0') continue;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno || end == p || *end != '\0' || v == 0 || *p == '-') {
            fprintf(stderr, NAME ": %s: expected one positive integer, got '%s'\n", path, p);
            fclose(f);
            return -1;
        }
        *out = (uint64_t)v;
        found = 1;
    }
    fclose(f);
    if (!found) fprintf(stderr, NAME ": %s: no number found\n", path);
    return found ? 0 : -1;
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
    int rc = kit_args(argc, argv, "FILE", "; uint64_t");
    if (rc >= 0) return rc;
    uint64_t n;
    if (read_number(argv[1], &n) != 0) return 2;

    clock_t clock_start = clock();
    double cpu_start = kit_cputime();
    /* Compiler barriers: n is unknown until after the clocks start, and count must exist before
     * they stop, so the optimizer can neither move the work out of the timed region nor drop it. */
    __asm__ volatile("" : "+r"(n) : : "memory");
    uint64_t count = count_divisors(n);
    __asm__ volatile("" : : "r"(count) : "memory");
    double cpu_end = kit_cputime();
    clock_t clock_end = clock();

    printf("input=%" PRIu64 "\n", n);
    printf("divisors=%" PRIu64 "\n", count);
    printf("self-clock=%.6f\n", (double)(clock_end - clock_start) / CLOCKS_PER_SEC);
    printf("self-cputime=%.9f\n", cpu_end - cpu_start);
    return 0;
}
