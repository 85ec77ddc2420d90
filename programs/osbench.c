/*
 * osbench: lmbench-style microbenchmarks of the OS and the memory hierarchy, one measurement
 * per run, for the os-microbench experiment (seed 003, a course report "Performance
 * Measurement" after McVoy & Staelin's lmbench).
 *
 * Usage: osbench [budget-bytes=N] FILE   FILE holds `key=value` lines (`#` starts a comment);
 *        osbench --version               `measure=` names the measurement, the other keys override
 *                                        its defaults; budget-bytes caps the memory curves' buffers.
 *
 * Measurements (measure=...):
 *   timer          cost of reading the clock: CPUID;RDTSC..RDTSCP;CPUID (Paoloni 2010; CPUID
 *                  traps to the hypervisor in a VM), LFENCE;RDTSCP;LFENCE (the pattern every
 *                  other measurement here uses), clock_gettime(CLOCK_MONOTONIC) (vDSO) and
 *                  clock() (a system call)
 *   loop           one iteration of an empty counted loop; also kit.h's dependent-add chain
 *   call           a call of a noinline function with 0..7 int arguments, result consumed
 *   syscall        syscall(SYS_getppid) (enters the kernel) and a vDSO clock_gettime call
 *   process        fork+_exit and fork+exec(osbench_exit), until waitpid returns (fork+exec only
 *                  where the kernel can exec osbench_exit: not a cross-built one under qemu-user)
 *   thread         pthread_create+pthread_join of a thread that returns at once
 *   ctxsw-process  two processes on one CPU pass a byte through two pipes; one process
 *                  writing and reading its own pipe is the cost without a switch:
 *                  switch = (round trip - 2 x own pipe) / 2
 *   ctxsw-thread   the same with two threads of one process
 *   mem-latency    dependent loads through a random cyclic permutation, one pointer per
 *                  64-byte line, working sets from min-bytes to 4 x the last-level cache, or
 *                  to what budget-bytes holds (max-capped=1)
 *   mem-bandwidth  read (SSE2 loads summed) and write (SSE2 stores) bandwidth over sizes
 *   page-fault     first touch of every page of a fresh anonymous mapping (MADV_NOHUGEPAGE;
 *                  written, and read: zero page) and of a private mapping of a file in the
 *                  current directory; minor faults from getrusage confirm faults per page
 *
 * Time: on x86-64 with an invariant TSC (constant_tsc and nonstop_tsc in /proc/cpuinfo) and
 * RDTSCP, regions are timed with LFENCE;RDTSCP;LFENCE and TSC ticks are converted to ns with
 * a TSC rate calibrated against CLOCK_MONOTONIC_RAW; RDTSCP's TSC_AUX (the CPU number on
 * Linux) at both ends counts migrations. Elsewhere clock_gettime(CLOCK_MONOTONIC) and
 * sched_getcpu() do both jobs. TSC ticks are not core cycles: the core clock comes from kit.h's
 * probe (chains of dependent adds and of imul, and perf's cycle counter where there is a PMU),
 * which prints `core-ghz` only where its estimates agree; it is the only source of cycle figures.
 * The process pins itself to the first CPU it is allowed on before measuring. Every measurement
 * takes `use-tsc=0`, which forces the clock_gettime path (as where the TSC is not invariant).
 *
 * Output: key=value lines. Every variant V of a measurement prints V-median-U, V-p10-U,
 * V-p90-U, V-min-U and V-n over its samples (U = ns, or gbs for GB/s); `variant`, `unit`,
 * `median`, `p10`, `p90`, `min` and `n` repeat the measurement's main variant. Curves print
 * one key per point index NN: lat-bytes-NN, lat-median-ns-NN, ...; bw-bytes-NN, ...
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#define NAME "osbench"
#include "kit.h"

#if defined(__GNUC__) && !defined(__clang__)
#define OPAQUE __attribute__((noinline, noipa))
#else
#define OPAQUE __attribute__((noinline))
#endif
#define NOINLINE __attribute__((noinline))

#define LINE 64
#define MAX_POINTS 48 /* 2 per octave from 1 KiB reach 12 GiB: 4 x an LLC of 3 GiB */

static volatile uint64_t sink;

/* one line on stderr, exit code 2 */
static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, NAME ": ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

/* ------------------------------------------------------------------------------------------
 * parameters */

enum { P_SAMPLES, P_WARMUP, P_ITERATIONS, P_PAIRS, P_LOADS, P_PAGES, P_HUGEPAGES, P_STEPS,
       P_MIN_BYTES, P_MAX_BYTES, P_CAP_BYTES, P_SAMPLE_BYTES, P_LLC_BYTES, P_USE_TSC, P_COUNT };

static const char *param_names[P_COUNT] = {
    "samples", "warmup", "iterations", "pairs", "loads", "pages", "hugepages", "steps-per-octave",
    "min-bytes", "max-bytes", "cap-bytes", "sample-bytes", "llc-bytes", "use-tsc",
};

struct measure {
    const char *name;
    void (*run)(void);
    long long defaults[P_COUNT]; /* -1: the measurement does not use the key */
};

static long long param[P_COUNT];

#define KiB 1024LL
#define MiB (1024LL * 1024)
#define UNUSED -1

static void m_timer(void), m_loop(void), m_call(void), m_syscall(void), m_process(void),
    m_thread(void), m_ctxsw_process(void), m_ctxsw_thread(void), m_latency(void),
    m_bandwidth(void), m_pagefault(void);

/*                          samples warmup iter pairs loads pages huge steps min max cap sample llc use-tsc */
static const struct measure measures[] = {
    {"timer", m_timer, {201, 20, 1000, 20000, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1}},
    {"loop", m_loop, {101, 5, 1000000, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1}},
    {"call", m_call, {51, 3, 200000, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1}},
    {"syscall", m_syscall, {101, 5, 5000, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1}},
    {"process", m_process, {300, 10, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1}},
    {"thread", m_thread, {2000, 50, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1}},
    {"ctxsw-process", m_ctxsw_process, {51, 3, 1000, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1}},
    {"ctxsw-thread", m_ctxsw_thread, {51, 3, 1000, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1}},
    {"mem-latency", m_latency, {9, -1, -1, -1, 50000, -1, 1, 2, 1 * KiB, 0, 0, -1, 0, 1}},
    {"mem-bandwidth", m_bandwidth, {9, -1, -1, -1, -1, -1, 1, 1, 4 * KiB, 0, 0, 16 * MiB, 0, 1}},
    {"page-fault", m_pagefault, {25, 2, -1, -1, -1, 4096, -1, -1, -1, -1, -1, -1, -1, 1}},
};
#define N_MEASURES (sizeof measures / sizeof measures[0])

/* a count or size: digits, optionally K, M or G (KiB, MiB, GiB); -1 if it is none */
static long long parse_number(const char *text)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    long long factor = 1;
    if (*end == 'K' || *end == 'k') factor = KiB, end++;
    else if (*end == 'M') factor = MiB, end++;
    else if (*end == 'G') factor = 1024 * MiB, end++;
    if (factor > 1 && (*end == 'i' && end[1] == 'B')) end += 2;
    if (errno || end == text || *end != '\0' || v < 0 || v > LLONG_MAX / factor) return -1;
    return v * factor;
}

/* what a parameter file says: the measurement's name and the keys it gives (-2: not given) */
struct given {
    char measure[64];
    long long value[P_COUNT];
};

static int set_param(void *ctx, const char *where, const char *key, const char *value)
{
    struct given *g = ctx;
    if (strcmp(key, "measure") == 0) {
        snprintf(g->measure, sizeof g->measure, "%s", value);
        return 0;
    }
    int k;
    for (k = 0; k < P_COUNT; k++)
        if (strcmp(key, param_names[k]) == 0) break;
    if (k == P_COUNT) {
        fprintf(stderr, NAME ": %s: unknown key '%s'\n", where, key);
        return -1;
    }
    if ((g->value[k] = parse_number(value)) < 0) {
        fprintf(stderr, NAME ": %s: expected a non-negative integer (optionally with K, M or G) for '%s', got '%s'\n", where,
                key, value);
        return -1;
    }
    return 0;
}

static const struct measure *read_params(const char *path)
{
    struct given given = {.measure = ""};
    for (int i = 0; i < P_COUNT; i++) given.value[i] = -2;
    if (kit_read_lines(path, set_param, &given) != 0) exit(2); /* it has said why */
    const char *measure = given.measure;
    const struct measure *m = NULL;
    for (size_t i = 0; i < N_MEASURES; i++)
        if (strcmp(measure, measures[i].name) == 0) m = &measures[i];
    if (!m) die("%s: 'measure=' must name a measurement (timer, loop, call, syscall, process, thread, "
                "ctxsw-process, ctxsw-thread, mem-latency, mem-bandwidth, page-fault), got '%s'", path, measure);
    for (int k = 0; k < P_COUNT; k++) {
        if (given.value[k] != -2 && m->defaults[k] == UNUSED)
            die("%s: measure=%s does not use key '%s'", path, m->name, param_names[k]);
        param[k] = given.value[k] != -2 ? given.value[k] : m->defaults[k];
    }
    if (param[P_SAMPLES] < 1) die("%s: samples must be at least 1", path);
    for (int k = 0; k < P_COUNT; k++)
        if (k != P_WARMUP && k != P_MAX_BYTES && k != P_CAP_BYTES && k != P_LLC_BYTES && k != P_HUGEPAGES && k != P_USE_TSC &&
            m->defaults[k] != UNUSED &&
            param[k] < 1)
            die("%s: %s must be at least 1", path, param_names[k]);
    if (param[P_STEPS] != UNUSED && param[P_STEPS] > 2) die("%s: steps-per-octave must be 1 or 2", path);
    return m;
}

/* ------------------------------------------------------------------------------------------
 * time: invariant TSC via LFENCE;RDTSCP;LFENCE, else clock_gettime */

static int use_tsc;
static double ticks_per_ns = 1.0;
static long long migrations, regions;

typedef struct {
    uint64_t t;
    unsigned cpu;
} stamp_t;

static inline stamp_t stamp(void)
{
    stamp_t s;
#if defined(__x86_64__)
    if (use_tsc) {
        unsigned aux;
        _mm_lfence();
        s.t = __rdtscp(&aux);
        _mm_lfence();
        s.cpu = aux & 0xfff; /* Linux: TSC_AUX = node << 12 | cpu */
        return s;
    }
#endif
    s.t = kit_ns(CLOCK_MONOTONIC);
    s.cpu = (unsigned)sched_getcpu();
    return s;
}

/* ns between two stamps; counts the region and whether it ran on one CPU throughout */
static double since(stamp_t a, stamp_t b)
{
    regions++;
    if (a.cpu != b.cpu) migrations++;
    return (double)(b.t - a.t) / ticks_per_ns;
}

/* percentile q of sorted v (linear interpolation, as numpy's default) */
static double pct(const double *v, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;
    if (i >= n - 1) return v[n - 1];
    return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

static double median_of(double *v, int n)
{
    qsort(v, n, sizeof *v, kit_cmp_double);
    return pct(v, n, 0.5);
}

/* ns per dependent add of the kit's add chain (kit.h: 1 core cycle each), one value per sample */
static void add_samples(double *out, int n)
{
    const uint64_t iters = 125000;
    sink += kit_chain_add(iters / 10); /* warm-up */
    for (int s = 0; s < n; s++) {
        stamp_t a = stamp();
        uint64_t x = kit_chain_add(iters);
        stamp_t b = stamp();
        sink += x;
        out[s] = since(a, b) / ((double)KIT_CHAIN_OPS * (double)iters);
    }
}

static void setup_time(void)
{
    int invariant = kit_cpuinfo_has("constant_tsc") && kit_cpuinfo_has("nonstop_tsc");
#if defined(__x86_64__)
    int rdtscp = kit_cpuinfo_has("rdtscp");
    use_tsc = invariant && rdtscp && param[P_USE_TSC] > 0;
    if (use_tsc) {
        double spread;
        ticks_per_ns = kit_calibrate_tsc(5, 20, &spread); /* 5 windows of 20 ms */
        printf("tsc-calibration-spread-ppm=%.3f\n", spread);
    }
    printf("tsc-invariant=%d\nrdtscp=%d\n", invariant, rdtscp);
    if (!use_tsc)
        printf("tsc-note=%s: clock_gettime(CLOCK_MONOTONIC) times every region; TSC patterns not measured\n",
               !invariant ? "TSC not invariant (constant_tsc or nonstop_tsc missing)" : !rdtscp ? "no RDTSCP" : "use-tsc=0");
#else
    printf("tsc-invariant=%d\nrdtscp=0\n", invariant);
    printf("tsc-note=not x86-64: clock_gettime(CLOCK_MONOTONIC) times every region\n");
#endif
    printf("timer-source=%s\n", use_tsc ? "tsc" : "clock_gettime");
    if (use_tsc) printf("tsc-ghz=%.6f\n", ticks_per_ns);
    struct kit_core_clock clock;
    kit_core_clock(&clock);
    kit_print_core_clock(&clock);
}

/* ------------------------------------------------------------------------------------------
 * output */

/* V-median-U, V-p10-U, V-p90-U, V-min-U, V-n; sorts v */
static void emit(const char *variant, const char *unit, double *v, int n)
{
    qsort(v, n, sizeof *v, kit_cmp_double);
    const char *fmt = strcmp(unit, "ns") == 0 ? "%s-%s-%s=%.4f\n" : "%s-%s-%s=%.3f\n";
    printf(fmt, variant, "median", unit, pct(v, n, 0.5));
    printf(fmt, variant, "p10", unit, pct(v, n, 0.1));
    printf(fmt, variant, "p90", unit, pct(v, n, 0.9));
    printf(fmt, variant, "min", unit, v[0]);
    printf("%s-n=%d\n", variant, n);
}

/* the measurement's main variant in the columns every run has; v sorted */
static void emit_main(const char *variant, const char *unit, const double *v, int n)
{
    printf("variant=%s\nunit=%s\n", variant, strcmp(unit, "gbs") == 0 ? "GB/s" : unit);
    const char *fmt = strcmp(unit, "ns") == 0 ? "%s=%.4f\n" : "%s=%.3f\n";
    printf(fmt, "median", pct(v, n, 0.5));
    printf(fmt, "p10", pct(v, n, 0.1));
    printf(fmt, "p90", pct(v, n, 0.9));
    printf(fmt, "min", v[0]);
    printf("n=%d\n", n);
}

static double *samples_array(long n)
{
    double *v = calloc((size_t)n, sizeof *v);
    if (!v) die("out of memory for %ld samples", n);
    return v;
}

/* ------------------------------------------------------------------------------------------
 * timer */

#if defined(__x86_64__)
static inline uint64_t cpuid_rdtsc(void)
{
    unsigned a, b, c, d;
    __cpuid(0, a, b, c, d);
    __asm__ volatile("" : : "r"(a), "r"(b), "r"(c), "r"(d));
    return __rdtsc();
}

static inline uint64_t rdtscp_cpuid(void)
{
    unsigned aux, a, b, c, d;
    uint64_t t = __rdtscp(&aux);
    __cpuid(0, a, b, c, d);
    __asm__ volatile("" : : "r"(a), "r"(b), "r"(c), "r"(d));
    return t;
}
#endif

static OPAQUE uint64_t gettime_calls(long n)
{
    uint64_t acc = 0;
    struct timespec ts;
    for (long i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        acc += (uint64_t)ts.tv_nsec;
    }
    return acc;
}

static OPAQUE uint64_t clock_calls(long n)
{
    uint64_t acc = 0;
    for (long i = 0; i < n; i++) acc += (uint64_t)clock();
    return acc;
}

static void per_call(uint64_t (*fn)(long), long iters, double *out, long samples, long warmup)
{
    for (long s = -warmup; s < samples; s++) {
        stamp_t a = stamp();
        uint64_t x = fn(iters);
        stamp_t b = stamp();
        sink += x;
        double ns = since(a, b) / (double)iters;
        if (s >= 0) out[s] = ns;
    }
}

#if defined(__x86_64__)
/* one complete pattern (start and end stamp), as a program using it pays for it */
static OPAQUE uint64_t cpuid_pattern_calls(long n)
{
    uint64_t acc = 0;
    for (long i = 0; i < n; i++) {
        uint64_t t0 = cpuid_rdtsc();
        acc += rdtscp_cpuid() - t0;
    }
    return acc;
}

static OPAQUE uint64_t lfence_pattern_calls(long n)
{
    uint64_t acc = 0;
    for (long i = 0; i < n; i++) {
        stamp_t a = stamp();
        stamp_t b = stamp();
        acc += b.t - a.t;
    }
    return acc;
}
#endif

static void m_timer(void)
{
    long pairs = param[P_PAIRS], samples = param[P_SAMPLES], warmup = param[P_WARMUP], iters = param[P_ITERATIONS];
    double *v = samples_array(pairs > samples ? pairs : samples);
    double *main_v = NULL;
    int main_n = 0;
#if defined(__x86_64__)
    if (use_tsc) {
        /* floor: ns between the two reads of one pattern with nothing between them, i.e. what
         * the pattern adds to every interval it measures */
        stamp_t outer = stamp();
        for (long s = -warmup; s < pairs; s++) {
            uint64_t t0 = cpuid_rdtsc();
            uint64_t t1 = rdtscp_cpuid();
            if (s >= 0) v[s] = (double)(t1 - t0) / ticks_per_ns;
        }
        since(outer, stamp()); /* the whole batch stayed on one CPU? */
        emit("tsc-cpuid", "ns", v, (int)pairs);
        for (long s = -warmup; s < pairs; s++) {
            stamp_t a = stamp();
            stamp_t b = stamp();
            double ns = since(a, b);
            if (s >= 0) v[s] = ns;
        }
        emit("tsc-lfence", "ns", v, (int)pairs);
        main_v = samples_array(pairs);
        memcpy(main_v, v, (size_t)pairs * sizeof *v);
        main_n = (int)pairs;
        /* cost: wall time of one whole pattern (both stamps, CPUIDs included) per use */
        long cpuid_iters = iters / 10 > 0 ? iters / 10 : 1;
        per_call(cpuid_pattern_calls, cpuid_iters, v, samples, warmup / 10);
        emit("tsc-cpuid-cost", "ns", v, (int)samples);
        printf("tsc-cpuid-cost-calls=%ld\n", cpuid_iters);
        per_call(lfence_pattern_calls, iters, v, samples, warmup);
        emit("tsc-lfence-cost", "ns", v, (int)samples);
    }
#endif
    per_call(gettime_calls, iters, v, samples, warmup);
    emit("clock-gettime", "ns", v, (int)samples);
    if (!main_v) {
        main_v = samples_array(samples);
        memcpy(main_v, v, (size_t)samples * sizeof *v);
        main_n = (int)samples;
    }
    per_call(clock_calls, iters, v, samples, warmup);
    emit("clock", "ns", v, (int)samples);
    emit_main(use_tsc ? "tsc-lfence" : "clock-gettime", "ns", main_v, main_n);
    free(v);
    free(main_v);
}

/* ------------------------------------------------------------------------------------------
 * loop overhead */

static OPAQUE uint64_t empty_loop(uint64_t n)
{
    uint64_t i;
    for (i = 0; i < n; i++) __asm__ volatile("");
    return i;
}

static void m_loop(void)
{
    long samples = param[P_SAMPLES];
    uint64_t iters = (uint64_t)param[P_ITERATIONS];
    double *v = samples_array(samples);
    for (long s = -param[P_WARMUP]; s < samples; s++) {
        stamp_t a = stamp();
        uint64_t x = empty_loop(iters);
        stamp_t b = stamp();
        sink += x;
        double ns = since(a, b) / (double)iters;
        if (s >= 0) v[s] = ns;
    }
    emit("loop", "ns", v, (int)samples);
    emit_main("loop", "ns", v, (int)samples);
    double adds[51];
    add_samples(adds, 51);
    emit("add", "ns", adds, 51);
    free(v);
}

/* ------------------------------------------------------------------------------------------
 * procedure calls with 0..7 int arguments (SysV x86-64 passes 6 in registers, the 7th on the stack) */

#define BARRIER() __asm__ volatile("")
static OPAQUE int f0(void) { BARRIER(); return 1; }
static OPAQUE int f1(int a) { BARRIER(); return a; }
static OPAQUE int f2(int a, int b) { BARRIER(); return a + b; }
static OPAQUE int f3(int a, int b, int c) { BARRIER(); return a + b + c; }
static OPAQUE int f4(int a, int b, int c, int d) { BARRIER(); return a + b + c + d; }
static OPAQUE int f5(int a, int b, int c, int d, int e) { BARRIER(); return a + b + c + d + e; }
static OPAQUE int f6(int a, int b, int c, int d, int e, int f) { BARRIER(); return a + b + c + d + e + f; }
static OPAQUE int f7(int a, int b, int c, int d, int e, int f, int g) { BARRIER(); return a + b + c + d + e + f + g; }

#define CALL_LOOP(name, expr)                                         \
    static OPAQUE uint64_t name(uint64_t n)                           \
    {                                                                 \
        uint64_t acc = 0;                                             \
        for (uint64_t i = 0; i < n; i++) {                            \
            int k = (int)i;                                           \
            acc += (uint64_t)(expr);                                  \
        }                                                             \
        return acc;                                                   \
    }
CALL_LOOP(calls0, f0() + k)
CALL_LOOP(calls1, f1(k))
CALL_LOOP(calls2, f2(k, k + 1))
CALL_LOOP(calls3, f3(k, k + 1, k + 2))
CALL_LOOP(calls4, f4(k, k + 1, k + 2, k + 3))
CALL_LOOP(calls5, f5(k, k + 1, k + 2, k + 3, k + 4))
CALL_LOOP(calls6, f6(k, k + 1, k + 2, k + 3, k + 4, k + 5))
CALL_LOOP(calls7, f7(k, k + 1, k + 2, k + 3, k + 4, k + 5, k + 6))

static void m_call(void)
{
    uint64_t (*const loops[8])(uint64_t) = {calls0, calls1, calls2, calls3, calls4, calls5, calls6, calls7};
    long samples = param[P_SAMPLES];
    uint64_t iters = (uint64_t)param[P_ITERATIONS];
    double *v[8];
    for (int k = 0; k < 8; k++) v[k] = samples_array(samples);
    /* interleaved: sample s of every argument count before sample s+1, so drift hits all alike */
    for (long s = -param[P_WARMUP]; s < samples; s++)
        for (int k = 0; k < 8; k++) {
            stamp_t a = stamp();
            uint64_t x = loops[k](iters);
            stamp_t b = stamp();
            sink += x;
            double ns = since(a, b) / (double)iters;
            if (s >= 0) v[k][s] = ns;
        }
    char name[16];
    for (int k = 0; k < 8; k++) {
        snprintf(name, sizeof name, "call%d", k);
        emit(name, "ns", v[k], (int)samples);
    }
    emit_main("call0", "ns", v[0], (int)samples);
    for (int k = 0; k < 8; k++) free(v[k]);
}

/* ------------------------------------------------------------------------------------------
 * system call */

static OPAQUE uint64_t getppid_calls(long n)
{
    uint64_t acc = 0;
    for (long i = 0; i < n; i++) acc += (uint64_t)syscall(SYS_getppid);
    return acc;
}

static void m_syscall(void)
{
    long samples = param[P_SAMPLES], warmup = param[P_WARMUP];
    double *sys = samples_array(samples), *vdso = samples_array(samples);
    for (long s = -warmup; s < samples; s++) {
        double one;
        per_call(getppid_calls, param[P_ITERATIONS], &one, 1, 0);
        if (s >= 0) sys[s] = one;
        per_call(gettime_calls, param[P_ITERATIONS], &one, 1, 0);
        if (s >= 0) vdso[s] = one;
    }
    emit("getppid", "ns", sys, (int)samples);
    emit("vdso", "ns", vdso, (int)samples);
    emit_main("getppid", "ns", sys, (int)samples);
    free(sys);
    free(vdso);
}

/* ------------------------------------------------------------------------------------------
 * process creation */

static char exit_program[PATH_MAX];

static void find_exit_program(void)
{
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) die("cannot read /proc/self/exe: %s", strerror(errno));
    self[len] = '\0';
    char *slash = strrchr(self, '/');
    if (slash) *slash = '\0';
    if (strlen(self) + sizeof "/osbench_exit" > sizeof exit_program) die("path of osbench too long: %s", self);
    memcpy(exit_program, self, strlen(self));
    memcpy(exit_program + strlen(self), "/osbench_exit", sizeof "/osbench_exit");
    if (access(exit_program, X_OK) != 0)
        die("exec target %s is missing (build programs/ with make): %s", exit_program, strerror(errno));
}

static double one_process(int exec)
{
    fflush(stdout);
    stamp_t a = stamp();
    pid_t pid = fork();
    if (pid < 0) die("fork failed: %s", strerror(errno));
    if (pid == 0) {
        if (exec) {
            execl(exit_program, "osbench_exit", (char *)NULL);
            _exit(errno == ENOEXEC ? 126 : 127);
        }
        _exit(0);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) die("waitpid failed: %s", strerror(errno));
    stamp_t b = stamp();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) die("child (%s) did not exit with 0", exec ? "fork+exec" : "fork");
    return since(a, b);
}

/* 1 if this kernel can exec osbench_exit; 0 (said in exec-note) where the binary's format is foreign
 * to it: a cross-built osbench under qemu-user without binfmt_misc, whose exec the host kernel runs */
static int can_exec(void)
{
    pid_t pid = fork();
    if (pid < 0) die("fork failed: %s", strerror(errno));
    if (pid == 0) {
        execl(exit_program, "osbench_exit", (char *)NULL);
        _exit(errno == ENOEXEC ? 126 : 127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) die("waitpid failed: %s", strerror(errno));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 126) {
        printf("exec-note=cannot exec %s: %s (a binary of another architecture, run by qemu-user without "
               "binfmt_misc?): fork+exec not measured\n", exit_program, strerror(ENOEXEC));
        return 0;
    }
    return 1;
}

static void m_process(void)
{
    find_exit_program();
    printf("exec-target=osbench_exit\n");
    int exec = can_exec();
    long samples = param[P_SAMPLES];
    double *fe = samples_array(samples), *fx = samples_array(samples);
    for (long s = -param[P_WARMUP]; s < samples; s++) {
        double a = one_process(0), b = exec ? one_process(1) : 0;
        if (s >= 0) fe[s] = a, fx[s] = b;
    }
    emit("fork-exit", "ns", fe, (int)samples);
    if (exec) emit("fork-exec", "ns", fx, (int)samples);
    emit_main(exec ? "fork-exec" : "fork-exit", "ns", exec ? fx : fe, (int)samples);
    free(fe);
    free(fx);
}

/* ------------------------------------------------------------------------------------------
 * thread creation */

static void *nothing(void *arg)
{
    return arg;
}

static void m_thread(void)
{
    long samples = param[P_SAMPLES];
    double *v = samples_array(samples);
    for (long s = -param[P_WARMUP]; s < samples; s++) {
        pthread_t t;
        void *ret;
        stamp_t a = stamp();
        int rc = pthread_create(&t, NULL, nothing, NULL);
        if (rc != 0) die("pthread_create failed: %s", strerror(rc));
        pthread_join(t, &ret);
        stamp_t b = stamp();
        double ns = since(a, b);
        if (s >= 0) v[s] = ns;
    }
    emit("pthread", "ns", v, (int)samples);
    emit_main("pthread", "ns", v, (int)samples);
    free(v);
}

/* ------------------------------------------------------------------------------------------
 * context switches: a byte passed back and forth through two pipes on one CPU */

static void xwrite(int fd)
{
    char c = 'x';
    while (write(fd, &c, 1) != 1)
        if (errno != EINTR) die("pipe write failed: %s", strerror(errno));
}

/* 1 byte read, 0 at end of file */
static int xread(int fd)
{
    char c;
    ssize_t r;
    while ((r = read(fd, &c, 1)) < 0)
        if (errno != EINTR) die("pipe read failed: %s", strerror(errno));
    return (int)r;
}

static int ping[2], pong[2];

static void echo_until_eof(void)
{
    while (xread(ping[0])) xwrite(pong[1]);
}

static void *echo_thread(void *arg)
{
    echo_until_eof();
    return arg;
}

static void pipe_samples(const char *prefix, double *rt, double *own, double *sw, long samples)
{
    long iters = param[P_ITERATIONS];
    int self[2];
    if (pipe(self) != 0) die("pipe failed: %s", strerror(errno));
    for (long s = -param[P_WARMUP]; s < samples; s++) {
        stamp_t a = stamp();
        for (long i = 0; i < iters; i++) {
            xwrite(self[1]);
            xread(self[0]);
        }
        stamp_t b = stamp();
        double own_ns = since(a, b) / (double)iters;
        a = stamp();
        for (long i = 0; i < iters; i++) {
            xwrite(ping[1]);
            xread(pong[0]);
        }
        b = stamp();
        double rt_ns = since(a, b) / (double)iters;
        if (s >= 0) own[s] = own_ns, rt[s] = rt_ns;
    }
    close(self[0]);
    close(self[1]);
    double *own_sorted = samples_array(samples);
    memcpy(own_sorted, own, (size_t)samples * sizeof *own);
    double own_median = median_of(own_sorted, (int)samples);
    free(own_sorted);
    /* a round trip is two switches, two writes and two reads */
    for (long s = 0; s < samples; s++) sw[s] = (rt[s] - 2 * own_median) / 2;
    char name[64];
    snprintf(name, sizeof name, "%s-roundtrip", prefix);
    emit(name, "ns", rt, (int)samples);
    snprintf(name, sizeof name, "%s-pipe", prefix);
    emit(name, "ns", own, (int)samples);
    snprintf(name, sizeof name, "%s-switch", prefix);
    emit(name, "ns", sw, (int)samples);
    emit_main(name, "ns", sw, (int)samples);
}

static void m_ctxsw(int threads)
{
    long samples = param[P_SAMPLES];
    double *rt = samples_array(samples), *own = samples_array(samples), *sw = samples_array(samples);
    if (pipe(ping) != 0 || pipe(pong) != 0) die("pipe failed: %s", strerror(errno));
    fflush(stdout);
    if (threads) {
        pthread_t t;
        int rc = pthread_create(&t, NULL, echo_thread, NULL);
        if (rc != 0) die("pthread_create failed: %s", strerror(rc));
        pipe_samples("thread", rt, own, sw, samples);
        close(ping[1]);
        pthread_join(t, NULL);
    } else {
        pid_t pid = fork();
        if (pid < 0) die("fork failed: %s", strerror(errno));
        if (pid == 0) {
            close(ping[1]);
            close(pong[0]);
            echo_until_eof();
            _exit(0);
        }
        close(ping[0]);
        close(pong[1]);
        pipe_samples("process", rt, own, sw, samples);
        close(ping[1]);
        int status;
        waitpid(pid, &status, 0);
    }
    free(rt);
    free(own);
    free(sw);
}

static void m_ctxsw_process(void) { m_ctxsw(0); }
static void m_ctxsw_thread(void) { m_ctxsw(1); }

/* ------------------------------------------------------------------------------------------
 * memory: sizes, buffers */

static long long llc_bytes(void)
{
    if (param[P_LLC_BYTES] > 0) {
        printf("llc-source=parameter\n");
        return param[P_LLC_BYTES];
    }
    long long best = 0;
    for (int i = 0; i < 16; i++) {
        char path[128], text[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(text, sizeof text, f)) {
            char *end;
            long long v = strtoll(text, &end, 10);
            if (*end == 'K') v *= KiB;
            else if (*end == 'M') v *= MiB;
            if (v > best) best = v;
        }
        fclose(f);
    }
    if (best > 0) {
        printf("llc-source=sysfs\n");
        return best;
    }
    printf("llc-source=default\n");
    return 32 * MiB;
}

static long long budget = -1; /* budget-bytes before the file (kit_budget); -1: none given */

/* The largest buffer: max-bytes, else 4 x the last-level cache, capped by cap-bytes (0: none) and
 * by what the run's budget holds. The latency curve takes the buffer, its chase order (4 bytes
 * per 64-byte line) and 2 MiB of alignment: (budget - 2 MiB) x 16/17, whole lines, as
 * tool_info/sizing.py's CURVES computes it. */
static long long max_size(void)
{
    long long llc = llc_bytes();
    printf("llc-bytes=%lld\n", llc);
    long long max = param[P_MAX_BYTES] > 0 ? param[P_MAX_BYTES] : 4 * llc;
    long long cap = param[P_CAP_BYTES];
    if (budget >= 0) {
        printf("budget-bytes=%lld\n", budget);
        long long fits = budget > 2 * MiB ? (budget - 2 * MiB) * 16 / 17 / LINE * LINE : 0;
        if (cap == 0 || fits < cap) cap = fits;
    }
    if (budget >= 0 || cap > 0) printf("max-capped=%d\n", max > cap);
    if ((budget >= 0 || cap > 0) && max > cap) max = cap;
    if (max < param[P_MIN_BYTES]) max = param[P_MIN_BYTES];
    return max;
}

static void thp_mode(void)
{
    char text[256] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(text, sizeof text, f)) text[0] = '\0';
        fclose(f);
    }
    char *open = strchr(text, '['), *close = open ? strchr(open, ']') : NULL;
    if (open && close) {
        *close = '\0';
        printf("thp-mode=%s\n", open + 1);
    } else {
        printf("thp-mode=unknown\n");
    }
}

/* AnonHugePages of this process in KiB (-1: unknown) */
static long long anon_huge_kib(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f) return -1;
    char line[256];
    long long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %lld kB", &kib) == 1) break;
    fclose(f);
    return kib;
}

/* a 2 MiB-aligned anonymous buffer, transparent huge pages requested if asked */
static char *big_buffer(long long bytes)
{
    size_t align = 2 * MiB, len = (size_t)bytes + align;
    char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) die("cannot map %lld bytes: %s", bytes, strerror(errno));
    char *buf = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    int huge = 0;
    if (param[P_HUGEPAGES] > 0) huge = madvise(buf, (size_t)bytes, MADV_HUGEPAGE) == 0;
    printf("hugepages-requested=%d\n", huge);
    memset(buf, 1, (size_t)bytes);
    printf("anon-huge-kib=%lld\n", anon_huge_kib());
    return buf;
}

static int sizes(long long lo, long long hi, int per_octave, long long *out, long long granule)
{
    int n = 0;
    for (long long p = 1; p <= hi && n < MAX_POINTS; p *= 2) {
        long long cand[2] = {p, per_octave == 2 ? p + p / 2 : 0};
        for (int k = 0; k < 2 && n < MAX_POINTS; k++) {
            long long s = cand[k] / granule * granule;
            if (cand[k] && s >= lo && s <= hi && (n == 0 || s > out[n - 1])) out[n++] = s;
        }
    }
    return n;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Du;
}

/* ------------------------------------------------------------------------------------------
 * memory latency */

#define HOP p = (void **)*p;
static OPAQUE void *chase(void *start, uint64_t n)
{
    void **p = start;
    for (uint64_t i = 0; i < n; i += 16) {
        HOP HOP HOP HOP HOP HOP HOP HOP HOP HOP HOP HOP HOP HOP HOP HOP
    }
    return p;
}

static void m_latency(void)
{
    long long hi = max_size(), points[MAX_POINTS];
    int n = sizes(param[P_MIN_BYTES], hi, (int)param[P_STEPS], points, LINE);
    if (n == 0) die("no working-set size between min-bytes and max-bytes");
    thp_mode();
    char *buf = big_buffer(points[n - 1]);
    size_t max_lines = (size_t)(points[n - 1] / LINE);
    uint32_t *order = malloc(max_lines * sizeof *order);
    if (!order) die("out of memory for the permutation");
    long samples = param[P_SAMPLES];
    uint64_t loads = ((uint64_t)param[P_LOADS] + 15) / 16 * 16;
    double *v = samples_array(samples), *largest = samples_array(samples);
    printf("lat-points=%d\nlat-loads=%" PRIu64 "\n", n, loads);
    for (int i = 0; i < n; i++) {
        size_t lines = (size_t)(points[i] / LINE);
        /* one random cycle through every line: Sattolo's algorithm makes order[] a uniformly
         * random cyclic permutation, then line k points to line order[k] (written in address order) */
        for (size_t k = 0; k < lines; k++) order[k] = (uint32_t)k;
        for (size_t k = lines - 1; k > 0; k--) {
            size_t j = (size_t)(rng() % k);
            uint32_t t = order[k];
            order[k] = order[j];
            order[j] = t;
        }
        for (size_t k = 0; k < lines; k++) *(void **)(buf + k * LINE) = buf + (size_t)order[k] * LINE;
        void *p = buf;
        /* warm-up: the whole cycle once (caches, TLB), at most 2^17 loads beyond the caches */
        uint64_t warm = (lines + 15) / 16 * 16;
        if (warm > (1u << 17)) warm = 1u << 17;
        p = chase(p, warm < loads ? loads : warm);
        for (long s = 0; s < samples; s++) {
            stamp_t a = stamp();
            p = chase(p, loads);
            stamp_t b = stamp();
            v[s] = since(a, b) / (double)loads;
        }
        sink += (uintptr_t)p;
        qsort(v, samples, sizeof *v, kit_cmp_double);
        printf("lat-bytes-%02d=%lld\n", i, points[i]);
        printf("lat-median-ns-%02d=%.4f\nlat-p10-ns-%02d=%.4f\nlat-p90-ns-%02d=%.4f\n", i, pct(v, (int)samples, 0.5), i,
               pct(v, (int)samples, 0.1), i, pct(v, (int)samples, 0.9));
        if (i == n - 1) memcpy(largest, v, (size_t)samples * sizeof *v);
    }
    printf("lat-n=%ld\n", samples);
    emit_main("largest-working-set", "ns", largest, (int)samples);
    free(order);
    free(v);
    free(largest);
}

/* ------------------------------------------------------------------------------------------
 * memory bandwidth: unrolled 16-byte loads summed / 16-byte stores, 128 bytes per iteration */

#if defined(__x86_64__)
static OPAQUE uint64_t read_pass(const char *buf, size_t bytes)
{
    const __m128i *p = (const __m128i *)buf, *end = (const __m128i *)(buf + bytes);
    __m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;
    for (; p < end; p += 8) {
        a0 = _mm_add_epi64(a0, _mm_load_si128(p));
        a1 = _mm_add_epi64(a1, _mm_load_si128(p + 1));
        a2 = _mm_add_epi64(a2, _mm_load_si128(p + 2));
        a3 = _mm_add_epi64(a3, _mm_load_si128(p + 3));
        a0 = _mm_add_epi64(a0, _mm_load_si128(p + 4));
        a1 = _mm_add_epi64(a1, _mm_load_si128(p + 5));
        a2 = _mm_add_epi64(a2, _mm_load_si128(p + 6));
        a3 = _mm_add_epi64(a3, _mm_load_si128(p + 7));
    }
    __m128i s = _mm_add_epi64(_mm_add_epi64(a0, a1), _mm_add_epi64(a2, a3));
    return (uint64_t)_mm_cvtsi128_si64(s) + (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s));
}

static OPAQUE void write_pass(char *buf, size_t bytes, uint64_t value)
{
    __m128i *p = (__m128i *)buf, *end = (__m128i *)(buf + bytes);
    __m128i x = _mm_set1_epi64x((long long)value);
    for (; p < end; p += 8) {
        _mm_store_si128(p, x);
        _mm_store_si128(p + 1, x);
        _mm_store_si128(p + 2, x);
        _mm_store_si128(p + 3, x);
        _mm_store_si128(p + 4, x);
        _mm_store_si128(p + 5, x);
        _mm_store_si128(p + 6, x);
        _mm_store_si128(p + 7, x);
    }
    __asm__ volatile("" : : "r"(buf) : "memory");
}
#define BW_KERNEL "sse2-16B"
#else
static OPAQUE uint64_t read_pass(const char *buf, size_t bytes)
{
    const uint64_t *p = (const uint64_t *)buf, *end = (const uint64_t *)(buf + bytes);
    uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (; p < end; p += 16) {
        for (int k = 0; k < 16; k += 4) {
            a0 += p[k];
            a1 += p[k + 1];
            a2 += p[k + 2];
            a3 += p[k + 3];
        }
    }
    return a0 + a1 + a2 + a3;
}

static OPAQUE void write_pass(char *buf, size_t bytes, uint64_t value)
{
    uint64_t *p = (uint64_t *)buf, *end = (uint64_t *)(buf + bytes);
    for (; p < end; p += 16)
        for (int k = 0; k < 16; k++) p[k] = value;
    __asm__ volatile("" : : "r"(buf) : "memory");
}
#define BW_KERNEL "scalar-8B"
#endif

static void m_bandwidth(void)
{
    long long hi = max_size(), points[MAX_POINTS];
    int n = sizes(param[P_MIN_BYTES], hi, (int)param[P_STEPS], points, 128);
    if (n == 0) die("no size between min-bytes and max-bytes");
    thp_mode();
    char *buf = big_buffer(points[n - 1]);
    long samples = param[P_SAMPLES];
    double *rd = samples_array(samples), *wr = samples_array(samples), *largest = samples_array(samples);
    printf("bw-points=%d\nbw-kernel=%s\n", n, BW_KERNEL);
    for (int i = 0; i < n; i++) {
        size_t size = (size_t)points[i];
        long long passes = (param[P_SAMPLE_BYTES] + (long long)size - 1) / (long long)size;
        double bytes = (double)passes * (double)size;
        sink += read_pass(buf, size);
        write_pass(buf, size, 0);
        for (long s = 0; s < samples; s++) {
            uint64_t acc = 0;
            stamp_t a = stamp();
            for (long long k = 0; k < passes; k++) acc += read_pass(buf, size);
            stamp_t b = stamp();
            sink += acc;
            rd[s] = bytes / since(a, b); /* bytes per ns = GB/s */
            a = stamp();
            for (long long k = 0; k < passes; k++) write_pass(buf, size, (uint64_t)k);
            b = stamp();
            wr[s] = bytes / since(a, b);
        }
        sink += (uint64_t)buf[size - 1];
        qsort(rd, samples, sizeof *rd, kit_cmp_double);
        qsort(wr, samples, sizeof *wr, kit_cmp_double);
        int ns = (int)samples;
        printf("bw-bytes-%02d=%zu\n", i, size);
        printf("bw-read-median-gbs-%02d=%.3f\nbw-read-p10-gbs-%02d=%.3f\nbw-read-p90-gbs-%02d=%.3f\n", i, pct(rd, ns, 0.5), i,
               pct(rd, ns, 0.1), i, pct(rd, ns, 0.9));
        printf("bw-write-median-gbs-%02d=%.3f\nbw-write-p10-gbs-%02d=%.3f\nbw-write-p90-gbs-%02d=%.3f\n", i, pct(wr, ns, 0.5), i,
               pct(wr, ns, 0.1), i, pct(wr, ns, 0.9));
        if (i == n - 1) memcpy(largest, rd, (size_t)samples * sizeof *rd);
    }
    printf("bw-n=%ld\n", samples);
    emit_main("read-largest", "gbs", largest, (int)samples);
    free(rd);
    free(wr);
    free(largest);
}

/* ------------------------------------------------------------------------------------------
 * page faults */

static long minflt(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

static const char *fs_name(long type)
{
    switch ((unsigned long)type) {
    case 0xEF53: return "ext4";
    case 0x01021994: return "tmpfs";
    case 0x794c7630: return "overlayfs";
    case 0x65735546: return "fuse";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    default: return "other";
    }
}

/* kinds: 0 anonymous written, 1 anonymous read (zero page), 2 private file mapping read */
static void fault_sample(int kind, int fd, size_t pages, size_t page, double *ns_per_page, double *faults_per_page)
{
    size_t len = pages * page;
    char *m;
    if (kind == 2) {
        m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    } else {
        m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED) madvise(m, len, MADV_NOHUGEPAGE);
    }
    if (m == MAP_FAILED) die("mmap failed: %s", strerror(errno));
    uint64_t acc = 0;
    long f0 = minflt();
    stamp_t a = stamp();
    if (kind == 0)
        for (size_t i = 0; i < pages; i++) ((volatile char *)m)[i * page] = 1;
    else
        for (size_t i = 0; i < pages; i++) acc += (uint64_t)((volatile char *)m)[i * page];
    stamp_t b = stamp();
    long f1 = minflt();
    sink += acc;
    *ns_per_page = since(a, b) / (double)pages;
    *faults_per_page = (double)(f1 - f0) / (double)pages;
    munmap(m, len);
}

static void m_pagefault(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = (size_t)param[P_PAGES];
    long samples = param[P_SAMPLES];
    thp_mode();
    printf("page-bytes=%zu\npages=%zu\n", page, pages);
    /* the file: in the current directory (a BenchExec run's own), unlinked at once, so nothing
     * is left behind even if the run is killed; written first, so its pages are in the page cache */
    char name[64];
    snprintf(name, sizeof name, "osbench-pagefault.%ld.tmp", (long)getpid());
    int fd = open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) die("cannot create %s in the current directory: %s", name, strerror(errno));
    unlink(name);
    struct statfs fs;
    printf("file-fs=%s\n", fstatfs(fd, &fs) == 0 ? fs_name((long)fs.f_type) : "unknown");
    char *chunk = malloc(page);
    if (!chunk) die("out of memory");
    memset(chunk, 7, page);
    for (size_t i = 0; i < pages; i++)
        if (write(fd, chunk, page) != (ssize_t)page) die("cannot write %s: %s", name, strerror(errno));
    free(chunk);
    static const char *kinds[3] = {"anon-write", "anon-read", "file-read"};
    double *ns[3], *fpp[3], *per_fault[3];
    for (int k = 0; k < 3; k++) ns[k] = samples_array(samples), fpp[k] = samples_array(samples), per_fault[k] = samples_array(samples);
    for (long s = -param[P_WARMUP]; s < samples; s++)
        for (int k = 0; k < 3; k++) {
            double t, f;
            fault_sample(k, fd, pages, page, &t, &f);
            if (s < 0) continue;
            ns[k][s] = t;
            fpp[k][s] = f;
            per_fault[k][s] = f > 0 ? t / f : 0;
        }
    close(fd);
    char key[64];
    for (int k = 0; k < 3; k++) {
        snprintf(key, sizeof key, "%s-page", kinds[k]);
        emit(key, "ns", ns[k], (int)samples);
        snprintf(key, sizeof key, "%s-fault", kinds[k]);
        emit(key, "ns", per_fault[k], (int)samples);
        qsort(fpp[k], samples, sizeof *fpp[k], kit_cmp_double);
        printf("%s-faults-per-page=%.4f\n", kinds[k], pct(fpp[k], (int)samples, 0.5));
    }
    emit_main("anon-write-page", "ns", ns[0], (int)samples);
    for (int k = 0; k < 3; k++) free(ns[k]), free(fpp[k]), free(per_fault[k]);
}

/* ------------------------------------------------------------------------------------------ */

static void pin(void)
{
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) die("sched_getaffinity failed: %s", strerror(errno));
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed)) {
            first = c;
            break;
        }
    printf("allowed-cpus=%d\n", CPU_COUNT(&allowed));
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) die("cannot pin to CPU: %s", strerror(errno));
    printf("cpu=%d\n", first);
}

int main(int argc, char **argv)
{
    budget = kit_budget(&argc, &argv);
    if (budget == -2) return 2;
    int rc = kit_args(argc, argv, "[budget-bytes=N] FILE", "");
    if (rc >= 0) return rc;
    const struct measure *m = read_params(argv[1]);
    printf("measure=%s\n", m->name);
    pin();
    setup_time();
    m->run();
    printf("migrations=%lld\nregions=%lld\n", migrations, regions);
    return 0;
}
