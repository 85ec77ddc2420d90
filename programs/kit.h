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
 *   kit_core_clock, kit_print_core_clock     the core clock: two dependent chains and the PMU
 */
#ifndef KIT_H
#define KIT_H

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#if defined(__linux__)
#include <linux/perf_event.h>
#endif

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

/* ------------------------------------------------------------------------------------------
 * the core clock
 *
 * TSC ticks are not core cycles, and a chain of `add $1, reg` is not one add per cycle either:
 * Golden Cove (Intel, 2021) executes chains of add-immediate several per cycle, so a clock timed
 * that way read 20 GHz there. Two dependent chains that no CPU shortcuts, timed against
 * CLOCK_MONOTONIC_RAW, each give the clock from their instruction's documented latency:
 *   add   x += y; y += x; ...  register-register adds whose operands are both the previous add's
 *                              result: no value is known before it is computed, so nothing can be
 *                              folded or eliminated at rename; 1 cycle on every x86-64 and Armv8
 *                              core [Fog, instruction tables; Arm's software optimisation guides]
 *   imul  x *= y; y *= x; ...  (x86-64) imul r64, r64: 3 cycles on Intel since Nehalem (P and
 *                              E cores) and AMD since Zen [Fog]; the multiplier is another unit
 *                              than the adders, so a trick that speeds up one chain leaves the
 *                              other alone (a chain of xor or of add reg would not check that);
 *                              odd operands stay odd, never zero
 *   eor   (aarch64)            x ^= y; y ^= x: 1 cycle; Arm's 64-bit multiply latency differs
 *                              between cores (2 to 5 cycles), so no multiply chain there
 *   xor   (plain C elsewhere)  x ^= y; y ^= x with a register barrier after each operation
 * (define KIT_PLAIN_C_CHAINS to build the plain-C chains on any architecture.) The chains run in
 * KIT_CLOCK_TRIALS interleaved trials of about KIT_CLOCK_TRIAL_NS each, so that both see the same
 * clock; the fastest trial counts (losing the CPU only slows a trial). Where the kernel exposes a
 * hardware PMU, perf_event_open's PERF_COUNT_HW_CPU_CYCLES counts the user-mode cycles of each add
 * trial: a third estimate, from the hardware itself.
 * The clock is `core-ghz` only when every estimate agrees with the others within KIT_CLOCK_AGREE,
 * lies in KIT_GHZ_MIN..KIT_GHZ_MAX and, where /sys reports the CPU's cpufreq limits, between
 * min / KIT_CPUFREQ_MARGIN and max x KIT_CPUFREQ_MARGIN (boost: acpi-cpufreq reports the highest
 * non-boost state as max); otherwise `core-clock-note` says why, with the figures.
 * analysis/core/instruments.py holds the same range and agreement (a test compares them).
 */

#define KIT_GHZ_MIN 0.1         /* slower than any CPU the kit targets */
#define KIT_GHZ_MAX 7.0         /* stock boost clocks reach 6.2 GHz (2024); beyond 7 only with liquid nitrogen */
#define KIT_CLOCK_AGREE 0.05    /* estimates agree when (largest - smallest) / smallest <= 5 % */
#define KIT_CPUFREQ_MARGIN 2.0
#define KIT_CLOCK_TRIALS 41      /* short trials, many: on a busy CPU some still run undisturbed */
#define KIT_CLOCK_TRIAL_NS 0.25e6
#define KIT_CHAIN_OPS 16        /* dependent operations per loop iteration */

#if defined(__x86_64__) && !defined(KIT_PLAIN_C_CHAINS)
#define KIT_ARCH "x86_64"
#define KIT_CHAINS "x86-64 asm"
#define KIT_CHECK_CHAIN "imul"
#define KIT_CHECK_CYCLES 3
#elif defined(__aarch64__) && !defined(KIT_PLAIN_C_CHAINS)
#define KIT_ARCH "aarch64"
#define KIT_CHAINS "aarch64 asm"
#define KIT_CHECK_CHAIN "eor"
#define KIT_CHECK_CYCLES 1
#else
#define KIT_CHAINS "plain C"
#define KIT_CHECK_CHAIN "xor"
#define KIT_CHECK_CYCLES 1
#endif
#if !defined(KIT_ARCH)
#if defined(__x86_64__)
#define KIT_ARCH "x86_64"
#elif defined(__aarch64__)
#define KIT_ARCH "aarch64"
#elif defined(__riscv) && __riscv_xlen == 64
#define KIT_ARCH "riscv64"
#elif defined(__powerpc64__)
#define KIT_ARCH "ppc64"
#elif defined(__s390x__)
#define KIT_ARCH "s390x"
#else
#define KIT_ARCH "other"
#endif
#endif

#define KIT_X8(s) s s s s s s s s

/* n x KIT_CHAIN_OPS dependent adds, 1 cycle each */
static inline uint64_t kit_chain_add(uint64_t n)
{
    uint64_t x = 1, y = 2;
    for (uint64_t i = 0; i < n; i++) {
#if defined(__x86_64__) && !defined(KIT_PLAIN_C_CHAINS)
        __asm__ volatile(KIT_X8("add %1, %0\n\tadd %0, %1\n\t") : "+r"(x), "+r"(y));
#elif defined(__aarch64__) && !defined(KIT_PLAIN_C_CHAINS)
        __asm__ volatile(KIT_X8("add %0, %0, %1\n\tadd %1, %1, %0\n\t") : "+r"(x), "+r"(y));
#else
        for (int k = 0; k < KIT_CHAIN_OPS / 2; k++) {
            x += y;
            __asm__ volatile("" : "+r"(x));
            y += x;
            __asm__ volatile("" : "+r"(y));
        }
#endif
    }
    return x + y;
}

/* n x KIT_CHAIN_OPS dependent operations of the check chain, KIT_CHECK_CYCLES each */
static inline uint64_t kit_chain_check(uint64_t n)
{
    uint64_t x = 3, y = 5;
    for (uint64_t i = 0; i < n; i++) {
#if defined(__x86_64__) && !defined(KIT_PLAIN_C_CHAINS)
        __asm__ volatile(KIT_X8("imul %1, %0\n\timul %0, %1\n\t") : "+r"(x), "+r"(y));
#elif defined(__aarch64__) && !defined(KIT_PLAIN_C_CHAINS)
        __asm__ volatile(KIT_X8("eor %0, %0, %1\n\teor %1, %1, %0\n\t") : "+r"(x), "+r"(y));
#else
        for (int k = 0; k < KIT_CHAIN_OPS / 2; k++) {
            x ^= y;
            __asm__ volatile("" : "+r"(x));
            y ^= x;
            __asm__ volatile("" : "+r"(y));
        }
#endif
    }
    return x + y;
}

/* A counter of the calling thread's user-mode core cycles (perf_event_open), or -1 with errno. */
static inline int kit_perf_cycles_open(void)
{
#if defined(__linux__) && defined(SYS_perf_event_open)
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = PERF_COUNT_HW_CPU_CYCLES;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/* Why perf_event_open gave no cycle counter, in words */
static inline const char *kit_perf_why(int err)
{
    switch (err) {
    case ENOENT: case ENODEV: case EOPNOTSUPP: return "no hardware PMU exposed by the kernel";
    case EACCES: case EPERM: return "not permitted (kernel.perf_event_paranoid or a seccomp filter)";
    case ENOSYS: return "no perf_event_open system call here";
    default: return "cannot count cycles";
    }
}

/* Wall ns of one trial of `chain`; with a perf counter (fd >= 0) also the cycles it counted
 * (NAN if the counter was not running all the time: multiplexed with other events). */
static inline double kit_chain_trial(uint64_t (*chain)(uint64_t), uint64_t n, int fd, double *cycles, uint64_t *sink)
{
#if defined(__linux__)
    if (fd >= 0) {
        ioctl(fd, PERF_EVENT_IOC_RESET, 0);
        ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    }
#endif
    uint64_t t0 = kit_ns(CLOCK_MONOTONIC_RAW);
    *sink += chain(n);
    uint64_t t1 = kit_ns(CLOCK_MONOTONIC_RAW);
#if defined(__linux__)
    if (fd >= 0) {
        uint64_t v[3] = {0, 0, 0};
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        int whole = read(fd, v, sizeof v) == (ssize_t)sizeof v && v[2] > 0 && v[2] == v[1];
        *cycles = whole ? (double)v[0] : NAN;
    }
#else
    (void)fd;
    (void)cycles;
#endif
    return (double)(t1 - t0);
}

/* Iterations of `chain` that take about `ns` (doubling until a trial takes a quarter of it) */
static inline uint64_t kit_chain_iterations(uint64_t (*chain)(uint64_t), double ns, uint64_t *sink)
{
    uint64_t n = 64;
    double took = 0;
    while (n < (UINT64_C(1) << 40) && (took = kit_chain_trial(chain, n, -1, NULL, sink)) < ns / 4) n *= 2;
    uint64_t scaled = took > 0 ? (uint64_t)((double)n * ns / took) : n;
    return scaled > 0 ? scaled : 1;
}

/* Every estimate of the core clock (GHz; NAN where not measured) and the verdict on them */
struct kit_core_clock {
    double add, check, perf;    /* add chain, check chain, perf cycles over the add trials */
    int perf_errno;             /* 0 when perf counted */
    double cpufreq_min, cpufreq_max; /* the kernel's limits for this CPU, GHz (NAN: none in /sys) */
    double ghz;                 /* the agreed clock, NAN when not measured */
    char note[256];             /* why not, with the figures */
};

/* cpuinfo_{min,max}_freq of `cpu` in GHz, NAN where /sys has none */
static inline double kit_cpufreq_ghz(int cpu, const char *which)
{
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_%s_freq", cpu, which);
    FILE *f = fopen(path, "r");
    double khz = NAN;
    if (f) {
        if (fscanf(f, "%lf", &khz) != 1 || !(khz > 0)) khz = NAN;
        fclose(f);
    }
    return khz / 1e6;
}

/* The verdict on the estimates: c->ghz, or c->note */
static inline void kit_judge_core_clock(struct kit_core_clock *c)
{
    const char *names[3] = {"add chain", KIT_CHECK_CHAIN " chain", "perf cycles"};
    double est[3] = {c->add, c->check, c->perf}, lo = INFINITY, hi = 0;
    int n = 0;
    char figures[160] = "";
    for (int i = 0; i < 3; i++) {
        if (!(est[i] > 0) && i < 2) {
            snprintf(c->note, sizeof c->note, "the %s could not be timed", names[i]);
            return;
        }
        if (!(est[i] > 0)) continue;
        size_t used = strlen(figures);
        /* a figure outside any core's clock range is the rate the chain ran at, not a clock */
        if (est[i] >= KIT_GHZ_MIN && est[i] <= KIT_GHZ_MAX)
            snprintf(figures + used, sizeof figures - used, "%s%s %.3f GHz", n ? ", " : "", names[i], est[i]);
        else
            snprintf(figures + used, sizeof figures - used, "%s%s %.4g steps per ns", n ? ", " : "", names[i], est[i]);
        lo = est[i] < lo ? est[i] : lo;
        hi = est[i] > hi ? est[i] : hi;
        n++;
    }
    if ((hi - lo) / lo > KIT_CLOCK_AGREE)
        snprintf(c->note, sizeof c->note, "%s disagree by %.0f %% (more than %.0f %%)", figures, 100 * (hi - lo) / lo,
                 100 * KIT_CLOCK_AGREE);
    else if (lo < KIT_GHZ_MIN || hi > KIT_GHZ_MAX)
        snprintf(c->note, sizeof c->note, "%s: outside the physical range %g-%g GHz", figures, KIT_GHZ_MIN, KIT_GHZ_MAX);
    else if ((c->cpufreq_min > 0 && lo < c->cpufreq_min / KIT_CPUFREQ_MARGIN) ||
             (c->cpufreq_max > 0 && hi > c->cpufreq_max * KIT_CPUFREQ_MARGIN))
        snprintf(c->note, sizeof c->note, "%s: outside the kernel's cpufreq range %.3f-%.3f GHz (with a factor %g "
                 "either side for boost and throttling)", figures, c->cpufreq_min, c->cpufreq_max, KIT_CPUFREQ_MARGIN);
    else
        c->ghz = c->add;
}

/* Measure the core clock (about 2 x KIT_CLOCK_TRIALS x KIT_CLOCK_TRIAL_NS: 20 ms) on the CPU the
 * caller is pinned to. */
static inline void kit_core_clock(struct kit_core_clock *c)
{
    uint64_t sink = 0;
    c->add = c->check = c->perf = c->ghz = NAN;
    c->note[0] = '\0';
    int cpu = sched_getcpu();
    c->cpufreq_min = kit_cpufreq_ghz(cpu < 0 ? 0 : cpu, "min");
    c->cpufreq_max = kit_cpufreq_ghz(cpu < 0 ? 0 : cpu, "max");
    int fd = kit_perf_cycles_open();
    c->perf_errno = fd < 0 ? errno : 0;
    uint64_t n_add = kit_chain_iterations(kit_chain_add, KIT_CLOCK_TRIAL_NS, &sink);
    uint64_t n_check = kit_chain_iterations(kit_chain_check, KIT_CLOCK_TRIAL_NS, &sink);
    double ops_add = (double)n_add * KIT_CHAIN_OPS, cycles_check = (double)n_check * KIT_CHAIN_OPS * KIT_CHECK_CYCLES;
    double best_add = 0, best_check = 0, best_perf = 0;
    for (int t = 0; t < 2 * KIT_CLOCK_TRIALS; t++) {
        /* add, check, check, add, ...: neither chain always follows the other into a time slice */
        if ((t % 4 == 0) || (t % 4 == 3)) {
            double cycles = NAN, ns = kit_chain_trial(kit_chain_add, n_add, fd, &cycles, &sink);
            if (ns > 0 && ops_add / ns > best_add) best_add = ops_add / ns;
            if (ns > 0 && cycles / ns > best_perf) best_perf = cycles / ns;
        } else {
            double ns = kit_chain_trial(kit_chain_check, n_check, -1, NULL, &sink);
            if (ns > 0 && cycles_check / ns > best_check) best_check = cycles_check / ns;
        }
    }
    if (fd >= 0) close(fd);
    if (fd >= 0 && !(best_perf > 0)) c->perf_errno = EBUSY; /* opened, but never counted a whole trial */
    c->add = best_add > 0 ? best_add : NAN;
    c->check = best_check > 0 ? best_check : NAN;
    c->perf = best_perf > 0 ? best_perf : NAN;
    kit_judge_core_clock(c);
    __asm__ volatile("" : : "r"(sink));
}

/* The estimates as key=value lines: arch, core-ghz-add, core-ghz-<check chain>, core-ghz-perf
 * (or core-ghz-perf-note), cpufreq-min-ghz and cpufreq-max-ghz where /sys has them, and core-ghz
 * or core-clock-note. */
static inline void kit_print_core_clock(const struct kit_core_clock *c)
{
    printf("arch=%s\n", KIT_ARCH);
    printf("core-clock-chains=add (1 cycle), " KIT_CHECK_CHAIN " (%d cycle%s); " KIT_CHAINS "\n", KIT_CHECK_CYCLES,
           KIT_CHECK_CYCLES == 1 ? "" : "s");
    printf("core-ghz-add=%.4f\n", c->add);
    printf("core-ghz-" KIT_CHECK_CHAIN "=%.4f\n", c->check);
    if (c->perf > 0)
        printf("core-ghz-perf=%.4f\n", c->perf);
    else if (c->perf_errno == EBUSY)
        printf("core-ghz-perf-note=perf_event_open(PERF_COUNT_HW_CPU_CYCLES): the counter never ran a whole trial\n");
    else
        printf("core-ghz-perf-note=perf_event_open(PERF_COUNT_HW_CPU_CYCLES): %s (%s)\n", strerror(c->perf_errno),
               kit_perf_why(c->perf_errno));
    if (c->cpufreq_min > 0) printf("cpufreq-min-ghz=%.4f\n", c->cpufreq_min);
    if (c->cpufreq_max > 0) printf("cpufreq-max-ghz=%.4f\n", c->cpufreq_max);
    if (c->ghz > 0)
        printf("core-ghz=%.4f\n", c->ghz);
    else
        printf("core-clock-note=core clock not measured here: %s\n", c->note);
}

#endif
