/*
 * kit.h: the code the kit's single-file workloads share, so each program keeps only its kernel
 * and main. Define _GNU_SOURCE first and NAME (the program's name, a string literal that starts
 * every message) before including it. Everything is static inline: a program that does not use
 * a function gets no code and no warning for it. Every name it defines starts with kit_ (KIT_).
 *   kit_version, kit_args     --version and usage
 *   kit_budget                the optional `budget-bytes=N` before the file (memory workloads)
 *   kit_read_lines            the one reader of key=value parameter files; each program's
 *                             setter takes the pairs (kit_refuse: its one-line complaint)
 *   kit_read_params           kit_read_lines with a table of positive numbers (struct kit_param)
 *   kit_trim, kit_cpuinfo_has, kit_cmp_double, kit_splitmix64
 *   kit_seconds, kit_ns, kit_now, kit_cputime, struct kit_span        clocks
 *   kit_ticks, kit_tick_pair, kit_tick_rate, kit_calibrate_tsc        the TSC and its rate
 */
#ifndef KIT_H
#define KIT_H

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "buildinfo.h"

#ifndef NAME
#error "define NAME (the program's name) before including kit.h"
#endif

/* ------------------------------------------------------------------------------------------
 * command line */

/* `NAME --version` prints the build and `extra` (e.g. "; 1 thread") and returns 1; else 0. */
static inline int kit_version(int argc, char **argv, const char *extra)
{
    if (argc != 2 || strcmp(argv[1], "--version") != 0) return 0;
    printf(NAME " %s (%s; %s%s)\n", KIT_VERSION, KIT_COMPILER, KIT_CFLAGS, extra);
    return 1;
}

/* kit_version; anything but one argument prints the usage (`file` names the argument).
 * Returns main's exit code, or -1 to go on. */
static inline int kit_args(int argc, char **argv, const char *file, const char *extra)
{
    if (kit_version(argc, argv, extra)) return 0;
    if (argc != 2) {
        fprintf(stderr, "usage: " NAME " %s | --version\n", file);
        return 2;
    }
    return -1;
}

/* `NAME [budget-bytes=N] FILE`: the bytes a memory workload's buffers may take in all, which its
 * tool-info module passes (tool_info/sizing.py: the run's memory limit less a reserve, at most half
 * of MemAvailable). Takes the argument off argv, so that kit_args sees `NAME FILE`. Returns the
 * budget, -1 when none is given, -2 (said on stderr) when the value is not a byte count. */
static inline long long kit_budget(int *argc, char ***argv)
{
    static const char key[] = "budget-bytes=";
    if (*argc < 3 || strncmp((*argv)[1], key, sizeof key - 1) != 0) return -1;
    const char *text = (*argv)[1] + sizeof key - 1;
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < 0) {
        fprintf(stderr, NAME ": expected budget-bytes=BYTES (a non-negative integer), got '%s'\n", (*argv)[1]);
        return -2;
    }
    (*argv)[1] = (*argv)[0];
    (*argv)++;
    (*argc)--;
    return v;
}

/* ------------------------------------------------------------------------------------------
 * parameter files */

/* s without leading blanks and trailing blanks and line ends (cut off in place) */
static inline char *kit_trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n')) *--e = '\0';
    return s;
}

/* Takes one pair of a parameter file; one it cannot take it refuses with one line on stderr,
 * `NAME: WHERE: ...` (WHERE is "FILE:LINE"), and a non-zero return. */
typedef int (*kit_setter)(void *ctx, const char *where, const char *key, const char *value);

/* The setter's line for a key it does not know or a value it refuses; returns -1. */
static inline int kit_refuse(const char *where, const char *key, const char *value)
{
    fprintf(stderr, NAME ": %s: unknown key or bad value: %s=%s\n", where, key, value);
    return -1;
}

/* Read `key=value` lines of any length ('#' starts a comment; blanks around key and value and
 * blank lines do not count) and hand each pair to set(ctx, where, key, value). Stops at the
 * first error, which is one line on stderr. Returns 0 or -1. */
static inline int kit_read_lines(const char *path, kit_setter set, void *ctx)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, NAME ": cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    char *line = NULL, where[1024];
    size_t size = 0;
    int lineno = 0, rc = 0;
    while (rc == 0 && getline(&line, &size, f) >= 0) {
        lineno++;
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        line[strcspn(line, "#")] = '\0';
        char *s = kit_trim(line);
        if (!*s) continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            fprintf(stderr, NAME ": %s: expected key=value, got '%s'\n", where, s);
            rc = -1;
            break;
        }
        *eq = '\0';
        rc = set(ctx, where, kit_trim(s), kit_trim(eq + 1)) ? -1 : 0;
    }
    free(line);
    fclose(f);
    return rc;
}

/* The keys a parameter file may set: unsigned integers (> 0) or doubles (> 0); the table ends
 * with a NULL key. */
struct kit_param {
    const char *key;
    uint64_t *u;
    double *d;
};

static inline int kit_set_param(void *ctx, const char *where, const char *key, const char *value)
{
    const struct kit_param *known = ctx;
    if (strcmp(key, "workload") == 0) {
        if (strcmp(value, NAME) == 0) return 0;
        fprintf(stderr, NAME ": %s: parameter file for '%s', not for " NAME "\n", where, value);
        return -1;
    }
    for (const struct kit_param *p = known; p->key; p++) {
        if (strcmp(key, p->key) != 0) continue;
        char *end;
        errno = 0;
        if (p->u) {
            unsigned long long v = strtoull(value, &end, 10);
            if (errno || end == value || *end != '\0' || v == 0 || value[0] == '-') {
                fprintf(stderr, NAME ": %s: %s must be a positive integer, got '%s'\n", where, key, value);
                return -1;
            }
            *p->u = (uint64_t)v;
        } else {
            double v = strtod(value, &end);
            if (errno || end == value || *end != '\0' || !(v > 0)) {
                fprintf(stderr, NAME ": %s: %s must be a positive number, got '%s'\n", where, key, value);
                return -1;
            }
            *p->d = v;
        }
        return 0;
    }
    fprintf(stderr, NAME ": %s: unknown key '%s' (known: workload", where, key);
    for (const struct kit_param *p = known; p->key; p++) fprintf(stderr, ", %s", p->key);
    fprintf(stderr, ")\n");
    return -1;
}

/* A parameter file of the keys in `known`; `workload=NAME` is also allowed (a file written for
 * another program fails instead of measuring). */
static inline int kit_read_params(const char *path, const struct kit_param *known)
{
    return kit_read_lines(path, kit_set_param, (void *)known);
}

/* ------------------------------------------------------------------------------------------
 * small tools */

/* 1 if the first "flags" line of /proc/cpuinfo lists `flag`, else 0 (also without /proc) */
static inline int kit_cpuinfo_has(const char *flag)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return 0;
    char *line = NULL, *save;
    size_t size = 0;
    int found = 0;
    while (!found && getline(&line, &size, f) >= 0) {
        if (strncmp(line, "flags", 5) != 0) continue;
        char *colon = strchr(line, ':');
        for (char *tok = strtok_r(colon ? colon + 1 : line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save))
            if (strcmp(tok, flag) == 0) found = 1;
        break;
    }
    free(line);
    fclose(f);
    return found;
}

/* qsort's comparison of doubles, ascending */
static inline int kit_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline uint64_t kit_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* ------------------------------------------------------------------------------------------
 * clocks */

static inline double kit_seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline uint64_t kit_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline double kit_now(void)
{
    return kit_seconds(CLOCK_MONOTONIC);
}

static inline double kit_cputime(void)
{
    return kit_seconds(CLOCK_PROCESS_CPUTIME_ID);
}

/* The timed part of a run: CPU (sched_getcpu) at start and end, wall-clock and CPU seconds. */
struct kit_span {
    int cpu_start, cpu_end;
    double t0, t1, c0, c1;
};

static inline void kit_span_start(struct kit_span *s)
{
    s->cpu_start = sched_getcpu();
    s->c0 = kit_cputime();
    s->t0 = kit_now();
}

static inline void kit_span_stop(struct kit_span *s)
{
    s->t1 = kit_now();
    s->c1 = kit_cputime();
    s->cpu_end = sched_getcpu();
}

/* ------------------------------------------------------------------------------------------
 * the time-stamp counter (x86-64; elsewhere CLOCK_MONOTONIC_RAW ns stand in for its ticks) */

#if defined(__x86_64__)
#define KIT_TICK_SOURCE "tsc"
static inline uint64_t kit_ticks(void)
{
    return __rdtsc();
}
#else
#define KIT_TICK_SOURCE "clock_gettime"
static inline uint64_t kit_ticks(void)
{
    return kit_ns(CLOCK_MONOTONIC_RAW);
}
#endif

/* A tick count and CLOCK_MONOTONIC_RAW ns of one instant: the clock read between two tick reads,
 * the narrowest of 9 tries (an interrupt widens only the try it hits); the tick is their middle. */
static inline void kit_tick_pair(uint64_t *tick, uint64_t *ns)
{
    uint64_t best = 0;
    for (int i = 0; i < 9; i++) {
        uint64_t a = kit_ticks(), t = kit_ns(CLOCK_MONOTONIC_RAW), b = kit_ticks();
        if (i == 0 || b - a < best) {
            best = b - a;
            *tick = a + (b - a) / 2;
            *ns = t;
        }
    }
}

/* Ticks per ns between two pairs of kit_tick_pair */
static inline double kit_tick_rate(uint64_t tick0, uint64_t ns0, uint64_t tick1, uint64_t ns1)
{
    return (double)(tick1 - tick0) / (double)(ns1 - ns0);
}

/* Ticks per ns against CLOCK_MONOTONIC_RAW: the median of `windows` (1 to 9) windows of `ms`
 * milliseconds each, spinning. If spread_ppm is not NULL it gets (max - min) / median in ppm. */
static inline double kit_calibrate_tsc(int windows, double ms, double *spread_ppm)
{
    double rate[9];
    if (windows < 1) windows = 1;
    if (windows > 9) windows = 9;
    for (int w = 0; w < windows; w++) {
        uint64_t tick0, ns0, tick1, ns1;
        kit_tick_pair(&tick0, &ns0);
        while (kit_ns(CLOCK_MONOTONIC_RAW) - ns0 < (uint64_t)(ms * 1e6)) {
        }
        kit_tick_pair(&tick1, &ns1);
        rate[w] = kit_tick_rate(tick0, ns0, tick1, ns1);
    }
    qsort(rate, (size_t)windows, sizeof *rate, kit_cmp_double);
    if (spread_ppm) *spread_ppm = (rate[windows - 1] - rate[0]) / rate[windows / 2] * 1e6;
    return rate[windows / 2];
}

#endif
