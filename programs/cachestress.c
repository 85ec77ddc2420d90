/*
 * cachestress: a cache-stress microbenchmark for core-to-core heterogeneity (seed 002).
 *
 * Walks a buffer one cache line at a time: increments one byte of the line, then evicts the
 * line from every cache level with clflush; after each pass over the buffer an mfence waits
 * for all of it to finish. Every access therefore misses and goes to memory, so the run time
 * is dominated by the cache and memory path of the core the program runs on.
 *
 * Parameter file (key=value lines, '#' starts a comment):
 *   workload=cachestress   optional; any other name is refused (the file belongs to another program)
 *   buffer=BYTES           buffer size (default 4194304)
 *   repeats=N              passes over the buffer (default 8)
 * Output (key=value, BenchExec column identifiers):
 *   workload, buffer, repeats, line (bytes per cache line, from CPUID), lines,
 *   self-seconds (CLOCK_MONOTONIC around the passes), self-cputime (CLOCK_PROCESS_CPUTIME_ID
 *   around the same; below self-seconds when other processes took the CPU), checksum (sum of
 *   all bytes afterwards, = lines * (repeats mod 256)), cpu-start and cpu-end (sched_getcpu
 *   before and after).
 * Where clflush does not exist (not x86, or CPUID says so) it prints `unsupported=REASON`
 * and exits with code 3.
 * Usage: cachestress FILE | --version
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buildinfo.h"

/* -DCACHESTRESS_NO_CLFLUSH builds the non-x86 variant on x86 too (the tests use it). */
#if (defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))) && !defined(CACHESTRESS_NO_CLFLUSH)
#include <cpuid.h>
#include <emmintrin.h>
#define HAVE_CLFLUSH 1
#else
#define HAVE_CLFLUSH 0
#endif

#define NAME "cachestress"
#define EXIT_UNSUPPORTED 3

/* The keys a parameter file may set: unsigned integers (> 0) or doubles (> 0). */
struct param {
    const char *key;
    uint64_t *u;
    double *d;
};

static int set_param(const struct param *known, const char *path, const char *key, const char *value)
{
    if (strcmp(key, "workload") == 0) {
        if (strcmp(value, NAME) != 0) {
            fprintf(stderr, NAME ": %s: parameter file for '%s', not for " NAME "\n", path, value);
            return -1;
        }
        return 0;
    }
    for (const struct param *p = known; p->key; p++) {
        if (strcmp(key, p->key) != 0) continue;
        char *end;
        errno = 0;
        if (p->u) {
            unsigned long long v = strtoull(value, &end, 10);
            if (errno || end == value || *end != '\0' || v == 0 || value[0] == '-') {
                fprintf(stderr, NAME ": %s: %s must be a positive integer, got '%s'\n", path, key, value);
                return -1;
            }
            *p->u = (uint64_t)v;
        } else {
            double v = strtod(value, &end);
            if (errno || end == value || *end != '\0' || !(v > 0)) {
                fprintf(stderr, NAME ": %s: %s must be a positive number, got '%s'\n", path, key, value);
                return -1;
            }
            *p->d = v;
        }
        return 0;
    }
    fprintf(stderr, NAME ": %s: unknown key '%s' (known: workload", path, key);
    for (const struct param *p = known; p->key; p++) fprintf(stderr, ", %s", p->key);
    fprintf(stderr, ")\n");
    return -1;
}

/* Read `key=value` lines ('#' starts a comment, blanks around key and value are ignored). */
static int read_params(const char *path, const struct param *known)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, NAME ": cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[512];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        char *s = line;
        s[strcspn(s, "#\r\n")] = '\0';
        while (*s == ' ' || *s == '\t') s++;
        if (*s == '\0') continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            fprintf(stderr, NAME ": %s: expected key=value, got '%s'\n", path, s);
            rc = -1;
            break;
        }
        *eq = '\0';
        char *value = eq + 1;
        for (char *k = eq; k > s && (k[-1] == ' ' || k[-1] == '\t'); k--) k[-1] = '\0';
        while (*value == ' ' || *value == '\t') value++;
        for (size_t n = strlen(value); n > 0 && (value[n - 1] == ' ' || value[n - 1] == '\t'); n--) value[n - 1] = '\0';
        rc = set_param(known, path, s, value);
    }
    fclose(f);
    return rc;
}

#if HAVE_CLFLUSH
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cputime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Bytes clflush evicts (CPUID leaf 1: EDX bit 19 says clflush exists, EBX bits 15:8 give the
 * line in units of 8 bytes); 0 if clflush is absent. */
static unsigned clflush_line(void)
{
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(edx & (1u << 19))) return 0;
    unsigned line = ((ebx >> 8) & 0xff) * 8;
    return line ? line : 64;
}

static void stress(volatile unsigned char *buf, uint64_t size, uint64_t line, uint64_t repeats)
{
    for (uint64_t r = 0; r < repeats; r++) {
        for (uint64_t i = 0; i < size; i += line) {
            buf[i]++;
            _mm_clflush((const void *)&buf[i]);
        }
        _mm_mfence();
    }
}
#endif

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf(NAME " %s (%s; %s; clflush %s)\n", KIT_VERSION, KIT_COMPILER, KIT_CFLAGS,
               HAVE_CLFLUSH ? "x86" : "unavailable");
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: " NAME " FILE | --version\n");
        return 2;
    }
    uint64_t buffer = 4194304, repeats = 8;
    const struct param known[] = {{"buffer", &buffer, NULL}, {"repeats", &repeats, NULL}, {NULL, NULL, NULL}};
    if (read_params(argv[1], known) != 0) return 2;
#if !HAVE_CLFLUSH
    printf("unsupported=clflush needs x86\n");
    fprintf(stderr, NAME ": clflush is an x86 instruction; cannot run on this architecture\n");
    return EXIT_UNSUPPORTED;
#else
    unsigned line = clflush_line();
    if (line == 0) {
        printf("unsupported=CPU lacks clflush\n");
        fprintf(stderr, NAME ": CPUID reports no clflush on this CPU\n");
        return EXIT_UNSUPPORTED;
    }
    unsigned char *buf = malloc(buffer);
    if (!buf) {
        fprintf(stderr, NAME ": cannot allocate %" PRIu64 " bytes\n", buffer);
        return 2;
    }
    memset(buf, 0, buffer);  /* every page mapped before the clock starts */

    int cpu_start = sched_getcpu();
    double c0 = cputime(), t0 = now();
    stress(buf, buffer, line, repeats);
    double t1 = now(), c1 = cputime();
    int cpu_end = sched_getcpu();

    uint64_t checksum = 0, lines = 0;
    for (uint64_t i = 0; i < buffer; i++) checksum += buf[i];
    for (uint64_t i = 0; i < buffer; i += line) lines++;
    free(buf);

    printf("workload=" NAME "\n");
    printf("buffer=%" PRIu64 "\n", buffer);
    printf("repeats=%" PRIu64 "\n", repeats);
    printf("line=%u\n", line);
    printf("lines=%" PRIu64 "\n", lines);
    printf("self-seconds=%.9f\n", t1 - t0);
    printf("self-cputime=%.9f\n", c1 - c0);
    printf("checksum=%" PRIu64 "\n", checksum);
    printf("cpu-start=%d\n", cpu_start);
    printf("cpu-end=%d\n", cpu_end);
    return 0;
#endif
}
