/*
 * tracer: when was this process running, and when not? An activity tracer after seed 004.
 *
 * It reads the time-stamp counter (TSC) in a tight loop. Consecutive reads are normally a few
 * tens of cycles apart; a gap far above that means the process was not running (an interrupt,
 * the host taking the virtual CPU, another process). The threshold comes from the measured gaps:
 * a calibration loop of the same kind records `calibration-reads` gaps first, and
 *     threshold = threshold-factor x median gap
 * so it scales with how fast this machine reads the TSC. Every gap above the threshold is an
 * inactive period; the time between two of them an active period. They are written to
 * `periods-file` (CSV, in the working directory, which BenchExec keeps as a result file) and
 * summarised as key=value lines:
 *   tsc-frequency     TSC ticks per second of CLOCK_MONOTONIC_RAW over the whole trace (MHz)
 *   kernel-tsc        the kernel's TSC frequency: its log ("Refined TSC clocksource calibration"
 *                     or "Detected ... MHz processor") where readable, else /proc/cpuinfo "cpu MHz";
 *                     kernel-tsc-source says which
 *   core-ghz-add, core-ghz-imul, core-ghz-perf, core-ghz or core-clock-note, arch
 *                     the core clock from kit.h's probe: two dependent chains and perf's cycle
 *                     counter, `core-ghz` only where they agree (kit_core_clock)
 *   dominant-period   the most frequent distance between the starts of two gaps (all pairs up to
 *                     max-period-ms apart, period-bin-ms bins, lags below min-period-ms ignored:
 *                     gaps of one burst are no period), the fundamental of its highest peak
 *   interruption-mean/-median/-max, lost-per-ms (inactive time per ms of trace), gaps
 * Modes (parameter `mode`):
 *   trace            one process, pinned to one CPU (parameter cpu, default: where it starts)
 *   context-switch   parent and child pinned to the same CPU, both tracing; each switch shows as
 *                    one side's inactive period that the other side's activity fills. Per switch:
 *                    from one side's last read to the other side's first read (context-switch,
 *                    median; -mean), and the seed's estimate: (inactive period of one side minus
 *                    the other side's active time inside it) / 2 (context-switch-seed). A gap
 *                    whose hand-over at either end takes longer than max-switch-ms (default 1)
 *                    had a third task in between: counted as third-party-gaps, left out
 *   replay           no clock: reads TSC values (one decimal number per line) from replay-file and
 *                    runs the same calibration and gap detection on them (tsc-hz converts to ms);
 *                    the tests feed it synthetic traces with known gaps
 * Usage: tracer PARAMETER-FILE    (key=value lines; '#' starts a comment)
 *        tracer --version
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NAME "tracer"
#include "kit.h"

#define MAX_GAPS (1u << 20)

/* ------------------------------------------------------------------------------------------ */
/* parameters */

struct params {
    char mode[32];
    double duration_ms;
    long calibration_reads;
    double threshold_factor;
    char periods_file[512];
    int cpu;
    char replay_file[512];
    double tsc_hz;          /* replay only: ticks per second */
    double min_period_ms, max_period_ms, period_bin_ms;
    double max_switch_ms;   /* a longer hand-over means a third task ran in between */
};

static void defaults(struct params *p)
{
    memset(p, 0, sizeof *p);
    strcpy(p->mode, "trace");
    p->duration_ms = 1000;
    p->calibration_reads = 200000;
    p->threshold_factor = 50;
    strcpy(p->periods_file, "periods.csv");
    p->cpu = -1;
    p->min_period_ms = 0.5;
    p->max_period_ms = 20;
    p->period_bin_ms = 0.01;
    p->max_switch_ms = 1;
}

static int copy_text(char *dst, size_t size, const char *value)
{
    if (strlen(value) >= size) return -1;
    strcpy(dst, value);
    return 0;
}

static int number(const char *value, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(value, &end);
    return (errno || end == value || *end) ? -1 : 0;
}

/* 0 if the pair is known and its value in range, else -1 */
static int take_param(struct params *p, const char *key, const char *value)
{
    double v;
    if (!strcmp(key, "mode")) {
        if (strcmp(value, "trace") && strcmp(value, "context-switch") && strcmp(value, "replay")) return -1;
        return copy_text(p->mode, sizeof p->mode, value);
    }
    if (!strcmp(key, "periods-file")) return copy_text(p->periods_file, sizeof p->periods_file, value);
    if (!strcmp(key, "replay-file")) return copy_text(p->replay_file, sizeof p->replay_file, value);
    if (number(value, &v)) return -1;
    if (!strcmp(key, "duration-ms") && v > 0 && v <= 600000) p->duration_ms = v;
    else if (!strcmp(key, "calibration-reads") && v >= 100 && v <= 1e8) p->calibration_reads = (long)v;
    else if (!strcmp(key, "threshold-factor") && v > 1) p->threshold_factor = v;
    else if (!strcmp(key, "cpu") && v >= -1 && v < CPU_SETSIZE && v == floor(v)) p->cpu = (int)v;
    else if (!strcmp(key, "tsc-hz") && v > 0) p->tsc_hz = v;
    else if (!strcmp(key, "min-period-ms") && v >= 0) p->min_period_ms = v;
    else if (!strcmp(key, "max-period-ms") && v > 0 && v <= 1000) p->max_period_ms = v;
    else if (!strcmp(key, "period-bin-ms") && v > 0) p->period_bin_ms = v;
    else if (!strcmp(key, "max-switch-ms") && v > 0) p->max_switch_ms = v;
    else return -1;
    return 0;
}

static int set_param(void *ctx, const char *where, const char *key, const char *value)
{
    return take_param(ctx, key, value) ? kit_refuse(where, key, value) : 0;
}

static int read_params(const char *path, struct params *p)
{
    if (kit_read_lines(path, set_param, p)) return -1;
    if (!strcmp(p->mode, "replay") && (!p->replay_file[0] || p->tsc_hz <= 0)) {
        fprintf(stderr, NAME ": %s: mode=replay needs replay-file and tsc-hz\n", path);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* gap detection: the same code for live traces and replayed ones */

struct trace {
    uint64_t start, end;      /* first and last read */
    uint64_t threshold;       /* a gap above this (ticks) is an inactive period */
    uint64_t reads;
    size_t n, dropped;
    uint64_t *gap_start;      /* tick of the last read before the gap */
    uint64_t *gap_len;        /* ticks until the next read */
};

static inline void observe(struct trace *t, uint64_t prev, uint64_t now)
{
    uint64_t d = now - prev;
    if (d > t->threshold) {
        if (t->n < MAX_GAPS) {
            t->gap_start[t->n] = prev;
            t->gap_len[t->n] = d;
            t->n++;
        } else {
            t->dropped++;
        }
    }
}

/* trace until the TSC passes `until` */
static void trace_live(struct trace *t, uint64_t until)
{
    uint64_t prev = kit_ticks(), now, reads = 0;
    t->start = prev;
    do {
        now = kit_ticks();
        observe(t, prev, now);
        prev = now;
        reads++;
    } while (now < until);
    t->end = now;
    t->reads = reads;
}

static void trace_replay(struct trace *t, const uint64_t *stamps, size_t count)
{
    t->start = stamps[0];
    for (size_t i = 1; i < count; i++) observe(t, stamps[i - 1], stamps[i]);
    t->end = stamps[count - 1];
    t->reads = count - 1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

struct calibration {
    uint64_t median, p99, p999, threshold;
};

/* gaps between consecutive stamps -> median, quantiles and the threshold */
static void calibrate(const uint64_t *stamps, size_t count, double factor, struct calibration *c)
{
    size_t n = count - 1;
    uint64_t *d = malloc(n * sizeof *d);
    if (!d) {
        perror(NAME ": malloc");
        exit(3);
    }
    for (size_t i = 0; i < n; i++) d[i] = stamps[i + 1] - stamps[i];
    qsort(d, n, sizeof *d, cmp_u64);
    c->median = d[n / 2];
    c->p99 = d[(size_t)(0.99 * (double)(n - 1))];
    c->p999 = d[(size_t)(0.999 * (double)(n - 1))];
    double thr = factor * (double)(c->median ? c->median : 1);
    c->threshold = (uint64_t)thr;
    free(d);
}

static void calibrate_live(long reads, double factor, struct calibration *c)
{
    uint64_t *stamps = malloc((size_t)reads * sizeof *stamps);
    if (!stamps) {
        perror(NAME ": malloc");
        exit(3);
    }
    memset(stamps, 0, (size_t)reads * sizeof *stamps); /* fault the pages in before reading */
    for (long i = 0; i < reads; i++) stamps[i] = kit_ticks();
    calibrate(stamps, (size_t)reads, factor, c);
    free(stamps);
}

/* ------------------------------------------------------------------------------------------ */
/* summaries */

struct summary {
    double mean_us, median_us, max_us, lost_per_ms_us, duration_s;
    double period_ms, period_share;
    size_t pairs;
};

static void summarize(const struct trace *t, double hz, const struct params *p, struct summary *s)
{
    memset(s, 0, sizeof *s);
    s->duration_s = (double)(t->end - t->start) / hz;
    s->period_ms = NAN;
    s->mean_us = s->median_us = s->max_us = NAN;
    uint64_t total = 0, max = 0;
    for (size_t i = 0; i < t->n; i++) {
        total += t->gap_len[i];
        if (t->gap_len[i] > max) max = t->gap_len[i];
    }
    s->lost_per_ms_us = s->duration_s > 0 ? (double)total / hz * 1e6 / (s->duration_s * 1e3) : NAN;
    if (!t->n) return;
    s->mean_us = (double)total / (double)t->n / hz * 1e6;
    s->max_us = (double)max / hz * 1e6;
    uint64_t *sorted = malloc(t->n * sizeof *sorted);
    if (!sorted) return;
    memcpy(sorted, t->gap_len, t->n * sizeof *sorted);
    qsort(sorted, t->n, sizeof *sorted, cmp_u64);
    s->median_us = (double)sorted[t->n / 2] / hz * 1e6;
    free(sorted);

    /* dominant period: histogram of the distances between the starts of all pairs of gaps up
       to max-period apart (an autocorrelation of the gap train), lags below min-period ignored
       (gaps in one burst), counts summed over three neighbouring bins (jitter splits a peak).
       A train with period T has peaks at T, 2T, 3T ... of about equal height, other sources add
       to some of them: the period is the smallest P = peak/k whose multiples P, 2P, ..., kP all
       reach half the highest peak's height above the median count (the level random coincidences
       give every lag). Refined to the mean distance of the pairs in its bins. */
    size_t bins = (size_t)ceil(p->max_period_ms / p->period_bin_ms) + 2;
    unsigned long *hist = calloc(bins, sizeof *hist), *smooth = calloc(bins, sizeof *smooth);
    if (!hist || !smooth) {
        free(hist);
        free(smooth);
        return;
    }
    uint64_t max_lag = (uint64_t)(p->max_period_ms * 1e-3 * hz);
    uint64_t min_lag = (uint64_t)(p->min_period_ms * 1e-3 * hz);
    double bin_ticks = p->period_bin_ms * 1e-3 * hz;
    for (size_t i = 0; i < t->n; i++)
        for (size_t j = i + 1; j < t->n; j++) {
            uint64_t lag = t->gap_start[j] - t->gap_start[i];
            if (lag > max_lag) break;
            if (lag < min_lag) continue;
            size_t b = (size_t)((double)lag / bin_ticks);
            if (b < bins) hist[b]++;
        }
    /* random coincidences give every lag a base count: peaks are measured above the median */
    size_t first_bin = (size_t)ceil((double)min_lag / bin_ticks) + 1, last_bin = bins - 2;
    if (last_bin <= first_bin) {
        free(hist);
        free(smooth);
        return;
    }
    for (size_t b = 1; b + 1 < bins; b++) smooth[b] = hist[b - 1] + hist[b] + hist[b + 1];
    size_t range = last_bin - first_bin + 1;
    uint64_t *sorted_counts = malloc(range * sizeof *sorted_counts);
    if (!sorted_counts) {
        free(hist);
        free(smooth);
        return;
    }
    for (size_t b = first_bin; b <= last_bin; b++) sorted_counts[b - first_bin] = smooth[b];
    qsort(sorted_counts, range, sizeof *sorted_counts, cmp_u64);
    double base = (double)sorted_counts[range / 2];
    free(sorted_counts);
    size_t best = first_bin;
    for (size_t b = first_bin; b <= last_bin; b++)
        if (smooth[b] > smooth[best]) best = b;
    double top_excess = (double)smooth[best] - base;
    if (smooth[best] == 0 || top_excess <= 0) {
        free(hist);
        free(smooth);
        return;
    }
    size_t chosen = best;
    for (size_t k = best / first_bin; k >= 2; k--) {
        int supported = 1;
        size_t first = 0;
        for (size_t m = 1; m <= k && supported; m++) {
            /* the highest bin within +-2 bins of m * best / k */
            size_t centre = (size_t)llround((double)best * (double)m / (double)k), top = 0;
            for (size_t b = centre > first_bin + 2 ? centre - 2 : first_bin; b <= centre + 2 && b <= last_bin; b++)
                if (!top || smooth[b] > smooth[top]) top = b;
            if (!top || 2 * ((double)smooth[top] - base) < top_excess) supported = 0;
            if (m == 1) first = top;
        }
        if (supported) {
            chosen = first;
            break;
        }
    }
    double lo = ((double)chosen - 1) * bin_ticks, hi = ((double)chosen + 2) * bin_ticks, sum = 0;
    size_t count = 0;
    for (size_t i = 0; i < t->n; i++)
        for (size_t j = i + 1; j < t->n; j++) {
            double lag = (double)(t->gap_start[j] - t->gap_start[i]);
            if (lag >= hi) break;
            if (lag >= lo && lag >= (double)min_lag) {
                sum += lag;
                count++;
            }
        }
    free(smooth);
    if (!count) {
        free(hist);
        return;
    }
    s->period_ms = sum / (double)count / hz * 1e3;
    s->pairs = count;
    /* share of gaps that have a partner one period later (within the three bins) */
    size_t with_partner = 0, eligible = 0;
    double period = sum / (double)count;
    for (size_t i = 0, j = 0; i < t->n; i++) {
        if ((double)(t->end - t->gap_start[i]) < period + bin_ticks * 1.5) break;
        eligible++;
        if (j < i + 1) j = i + 1;
        while (j < t->n && (double)(t->gap_start[j] - t->gap_start[i]) < period - bin_ticks * 1.5) j++;
        if (j < t->n && (double)(t->gap_start[j] - t->gap_start[i]) <= period + bin_ticks * 1.5) with_partner++;
    }
    s->period_share = eligible ? (double)with_partner / (double)eligible : NAN;
    free(hist);
}

static void print_summary(const struct trace *t, const struct calibration *c, double hz,
                          const struct summary *s, const struct params *p)
{
    printf("threshold-factor=%g\n", p->threshold_factor);
    printf("median-gap-cycles=%" PRIu64 "\n", c->median);
    printf("p99-gap-cycles=%" PRIu64 "\n", c->p99);
    printf("p999-gap-cycles=%" PRIu64 "\n", c->p999);
    printf("threshold-cycles=%" PRIu64 "\n", c->threshold);
    printf("threshold=%.4fus\n", (double)c->threshold / hz * 1e6);
    printf("reads=%" PRIu64 "\n", t->reads);
    printf("read-interval=%.3fns\n", s->duration_s / (double)(t->reads ? t->reads : 1) * 1e9);
    printf("trace-duration=%.6fs\n", s->duration_s);
    printf("gaps=%zu\n", t->n);
    printf("gaps-dropped=%zu\n", t->dropped);
    printf("interruption-mean=%.4fus\n", s->mean_us);
    printf("interruption-median=%.4fus\n", s->median_us);
    printf("interruption-max=%.4fus\n", s->max_us);
    printf("lost-per-ms=%.4fus\n", s->lost_per_ms_us);
    printf("dominant-period=%.5fms\n", s->period_ms);
    printf("dominant-period-share=%.4f\n", s->period_share);
}

/* ------------------------------------------------------------------------------------------ */
/* machine facts: TSC frequency, kernel's value, invariance */

static double cpuinfo_mhz(int cpu)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return NAN;
    char line[8192];
    int current = -1;
    double mhz = NAN, first = NAN;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "processor", 9)) current = atoi(strchr(line, ':') ? strchr(line, ':') + 1 : "-1");
        double v;
        if (!strncmp(line, "cpu MHz", 7) && sscanf(strchr(line, ':') ? strchr(line, ':') + 1 : "", "%lf", &v) == 1) {
            if (isnan(first)) first = v;
            if (current == cpu) mhz = v;
        }
    }
    fclose(f);
    return isnan(mhz) ? first : mhz;
}

/* the kernel's TSC frequency in MHz and where it came from */
static double kernel_tsc_mhz(int cpu, const char **source)
{
    double refined = NAN, detected = NAN;
    int size = klogctl(10, NULL, 0); /* SYSLOG_ACTION_SIZE_BUFFER */
    if (size > 0) {
        char *buf = malloc((size_t)size + 1);
        int n = buf ? klogctl(3, buf, size) : -1; /* SYSLOG_ACTION_READ_ALL */
        if (n > 0) {
            buf[n] = '\0';
            for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
                const char *r = strstr(line, "Refined TSC clocksource calibration: ");
                const char *d = strstr(line, "tsc: Detected ");
                double v;
                if (r && sscanf(r + strlen("Refined TSC clocksource calibration: "), "%lf MHz", &v) == 1) refined = v;
                if (d && sscanf(d + strlen("tsc: Detected "), "%lf MHz processor", &v) == 1) detected = v;
            }
        }
        free(buf);
    }
    if (!isnan(refined)) {
        *source = "kernel-log-refined";
        return refined;
    }
    if (!isnan(detected)) {
        *source = "kernel-log-detected";
        return detected;
    }
    *source = "proc-cpuinfo";
    return cpuinfo_mhz(cpu);
}

static void read_line(const char *path, char *out, size_t size)
{
    FILE *f = fopen(path, "r");
    out[0] = '\0';
    if (!f) return;
    if (fgets(out, (int)size, f)) out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

/* ------------------------------------------------------------------------------------------ */
/* output of periods */

static void write_periods(FILE *f, const char *process, const struct trace *t, uint64_t origin, double hz)
{
    uint64_t active_start = t->start;
    for (size_t i = 0; i <= t->n; i++) {
        uint64_t active_end = i < t->n ? t->gap_start[i] : t->end;
        fprintf(f, "%s,active,%zu,%" PRIu64 ",%" PRIu64 ",%.6f,%.6f\n", process, i, active_start - origin,
                active_end - active_start, (double)(active_start - origin) / hz * 1e3,
                (double)(active_end - active_start) / hz * 1e3);
        if (i < t->n) {
            fprintf(f, "%s,inactive,%zu,%" PRIu64 ",%" PRIu64 ",%.6f,%.6f\n", process, i, t->gap_start[i] - origin,
                    t->gap_len[i], (double)(t->gap_start[i] - origin) / hz * 1e3, (double)t->gap_len[i] / hz * 1e3);
            active_start = t->gap_start[i] + t->gap_len[i];
        }
    }
}

static FILE *open_periods(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, NAME ": cannot write %s: %s\n", path, strerror(errno));
        return NULL;
    }
    fprintf(f, "process,kind,index,start_cycles,duration_cycles,start_ms,duration_ms\n");
    return f;
}

static void *shared_alloc(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror(NAME ": mmap");
        exit(3);
    }
    memset(p, 0, bytes); /* fault in now, not while tracing */
    return p;
}

static void trace_init(struct trace *t, uint64_t threshold)
{
    memset(t, 0, sizeof *t);
    t->threshold = threshold;
    t->gap_start = shared_alloc(MAX_GAPS * sizeof(uint64_t));
    t->gap_len = shared_alloc(MAX_GAPS * sizeof(uint64_t));
}

/* ------------------------------------------------------------------------------------------ */
/* context switches: where one side's gap is filled by the other side's activity */

/* index of the gap of `t` containing tick x (gap_start <= x < gap_start + len), or -1 */
static long gap_containing(const struct trace *t, uint64_t x)
{
    size_t lo = 0, hi = t->n; /* first gap with start > x */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->gap_start[mid] <= x) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return -1;
    size_t i = lo - 1;
    return x < t->gap_start[i] + t->gap_len[i] ? (long)i : -1;
}

/* inactive ticks of `t` inside [a, b) */
static uint64_t gap_time_within(const struct trace *t, uint64_t a, uint64_t b)
{
    uint64_t total = 0;
    long i = gap_containing(t, a);
    size_t k = i >= 0 ? (size_t)i : 0;
    for (; k < t->n && t->gap_start[k] < b; k++) {
        uint64_t s = t->gap_start[k], e = s + t->gap_len[k];
        if (e <= a) continue;
        total += (e < b ? e : b) - (s > a ? s : a);
    }
    return total;
}

struct switches {
    double *boundary; /* ticks per switch */
    size_t n_boundary;
    size_t third_party; /* gaps left out: a hand-over took longer than max-switch */
    double max_ticks;
    double seed_sum; /* sum over switch gaps of (gap - other's active time within) */
    size_t n_seed;
};

static void collect_switches(const struct trace *self, const struct trace *other, struct switches *sw)
{
    for (size_t i = 0; i < self->n; i++) {
        uint64_t gs = self->gap_start[i], ge = gs + self->gap_len[i];
        long in = gap_containing(other, gs);
        long out = gap_containing(other, ge);
        /* the other side was waiting when this side stopped and ran again before it resumed */
        if (in < 0 || out < 0 || in == out) continue;
        uint64_t other_resumed = other->gap_start[in] + other->gap_len[in];
        uint64_t other_stopped = other->gap_start[out];
        if (other_resumed >= ge || other_stopped <= gs) continue;
        if ((double)(other_resumed - gs) > sw->max_ticks || (double)(ge - other_stopped) > sw->max_ticks) {
            sw->third_party++;
            continue;
        }
        sw->boundary[sw->n_boundary++] = (double)(other_resumed - gs);
        sw->boundary[sw->n_boundary++] = (double)(ge - other_stopped);
        uint64_t other_active = (ge - gs) - gap_time_within(other, gs, ge);
        sw->seed_sum += (double)(ge - gs) - (double)other_active;
        sw->n_seed++;
    }
}

static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) {
        fprintf(stderr, NAME ": cannot pin to CPU %d: %s\n", cpu, strerror(errno));
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */

static int run_replay(const struct params *p)
{
    FILE *f = fopen(p->replay_file, "r");
    if (!f) {
        fprintf(stderr, NAME ": cannot open %s: %s\n", p->replay_file, strerror(errno));
        return 2;
    }
    size_t cap = 1 << 16, count = 0;
    uint64_t *stamps = malloc(cap * sizeof *stamps);
    char line[128];
    while (stamps && fgets(line, sizeof line, f)) {
        char *s = kit_trim(line), *end;
        if (!*s || *s == '#') continue;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || end == s || *end || (count && v < stamps[count - 1])) {
            fprintf(stderr, NAME ": %s: expected increasing tick counts, got '%s'\n", p->replay_file, s);
            fclose(f);
            free(stamps);
            return 2;
        }
        if (count == cap) stamps = realloc(stamps, (cap *= 2) * sizeof *stamps);
        if (stamps) stamps[count++] = v;
    }
    fclose(f);
    if (!stamps) {
        perror(NAME ": malloc");
        return 3;
    }
    size_t cal = (size_t)p->calibration_reads;
    if (count < cal + 2) {
        fprintf(stderr, NAME ": %s: %zu tick counts, need more than calibration-reads=%zu\n", p->replay_file, count, cal);
        free(stamps);
        return 2;
    }
    struct calibration c;
    calibrate(stamps, cal, p->threshold_factor, &c);
    struct trace t;
    trace_init(&t, c.threshold);
    trace_replay(&t, stamps + cal, count - cal);
    free(stamps);
    FILE *out = open_periods(p->periods_file);
    if (!out) return 2;
    write_periods(out, "tracer", &t, t.start, p->tsc_hz);
    fclose(out);
    struct summary s;
    summarize(&t, p->tsc_hz, p, &s);
    printf("mode=replay\n");
    printf("tsc-frequency=%.4fMHz\n", p->tsc_hz / 1e6);
    print_summary(&t, &c, p->tsc_hz, &s, p);
    printf("periods-file=%s\n", p->periods_file);
    return 0;
}

static int run_live(const struct params *p)
{
    int cs = !strcmp(p->mode, "context-switch");
    int cpu = p->cpu >= 0 ? p->cpu : sched_getcpu();
    if (cpu < 0 || pin(cpu)) return 2;

    struct calibration c;
    calibrate_live(p->calibration_reads, p->threshold_factor, &c);
    /* the child's trace lives in shared memory: the parent reads what the child recorded */
    struct trace parent, *child = cs ? shared_alloc(sizeof *child) : NULL;
    trace_init(&parent, c.threshold);
    if (cs) trace_init(child, c.threshold);

    uint64_t tick0, ns0, tick1, ns1;
    kit_tick_pair(&tick0, &ns0);
    /* the deadline in ticks needs the frequency: a first estimate over 20 ms of spinning */
    double rough_hz = kit_calibrate_tsc(1, 20, NULL) * 1e9;
    uint64_t until = kit_ticks() + (uint64_t)(p->duration_ms * 1e-3 * rough_hz);

    pid_t pid = -1;
    if (cs) {
        fflush(stdout);
        pid = fork();
        if (pid < 0) {
            perror(NAME ": fork");
            return 3;
        }
        if (pid == 0) {
            trace_live(child, until);
            _exit(0);
        }
    }
    trace_live(&parent, until);
    if (cs) {
        int status;
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
            fprintf(stderr, NAME ": the child tracer failed\n");
            return 3;
        }
    }
    kit_tick_pair(&tick1, &ns1);
    double hz = kit_tick_rate(tick0, ns0, tick1, ns1) * 1e9;

    const char *source;
    double kernel = kernel_tsc_mhz(cpu, &source);
    int invariant = kit_cpuinfo_has("constant_tsc") && kit_cpuinfo_has("nonstop_tsc");
    struct kit_core_clock core;
    kit_core_clock(&core);
    char clocksource[64];
    read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", clocksource, sizeof clocksource);

    FILE *out = open_periods(p->periods_file);
    if (!out) return 2;
    uint64_t origin = cs && child->start < parent.start ? child->start : parent.start;
    write_periods(out, cs ? "parent" : "tracer", &parent, origin, hz);
    if (cs) write_periods(out, "child", child, origin, hz);
    if (fclose(out)) {
        fprintf(stderr, NAME ": cannot write %s: %s\n", p->periods_file, strerror(errno));
        return 2;
    }

    struct summary s;
    summarize(&parent, hz, p, &s);
    printf("mode=%s\n", p->mode);
    printf("cpu=%d\n", cpu);
    printf("tick-source=%s\n", KIT_TICK_SOURCE);
    printf("clocksource=%s\n", clocksource[0] ? clocksource : "unknown");
    printf("tsc-invariant=%d\n", invariant);
    printf("tsc-known-freq=%d\n", kit_cpuinfo_has("tsc_known_freq"));
    printf("tsc-frequency=%.4fMHz\n", hz / 1e6);
    printf("kernel-tsc=%.4fMHz\n", kernel);
    printf("kernel-tsc-source=%s\n", source);
    kit_print_core_clock(&core);
    print_summary(&parent, &c, hz, &s, p);
    if (cs) {
        printf("child-gaps=%zu\n", child->n);
        struct switches sw = {0};
        sw.max_ticks = p->max_switch_ms * 1e-3 * hz;
        sw.boundary = malloc(4 * (parent.n + child->n + 1) * sizeof(double));
        if (!sw.boundary) return 3;
        collect_switches(&parent, child, &sw);
        collect_switches(child, &parent, &sw);
        printf("switches=%zu\n", sw.n_boundary);
        printf("third-party-gaps=%zu\n", sw.third_party);
        if (sw.n_boundary) {
            qsort(sw.boundary, sw.n_boundary, sizeof(double), kit_cmp_double);
            double sum = 0;
            for (size_t i = 0; i < sw.n_boundary; i++) sum += sw.boundary[i];
            printf("context-switch=%.4fus\n", sw.boundary[sw.n_boundary / 2] / hz * 1e6);
            printf("context-switch-mean=%.4fus\n", sum / (double)sw.n_boundary / hz * 1e6);
            printf("context-switch-seed=%.4fus\n", sw.seed_sum / (double)sw.n_seed / 2 / hz * 1e6);
        } else {
            printf("context-switch=nan\ncontext-switch-mean=nan\ncontext-switch-seed=nan\n");
        }
        free(sw.boundary);
    }
    printf("periods-file=%s\n", p->periods_file);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = kit_args(argc, argv, "PARAMETER-FILE", "; ticks: " KIT_TICK_SOURCE);
    if (rc >= 0) return rc;
    struct params p;
    defaults(&p);
    if (read_params(argv[1], &p)) return 2;
    return !strcmp(p.mode, "replay") ? run_replay(&p) : run_live(&p);
}
