/*
 * stream: sustainable memory bandwidth after John McCalpin's STREAM definition, written anew
 * for the kit (one thread; run it under `numactl --cpunodebind=C --membind=M` to measure a pair
 * of NUMA nodes).
 *
 * Three arrays of doubles a, b, c, each llc-factor (default 4) times the last-level cache, so no
 * kernel runs from cache, unless the run's budget (`stream budget-bytes=N FILE`, passed by
 * tool_info/stream.py from the memory limit and MemAvailable, tool_info/sizing.py) holds less:
 * then each array is a third of the budget, and the output says so (budget-bytes, array-bytes,
 * llc-bytes). Four kernels, in this order, per trial:
 *   copy   c = a            2 arrays moved (16 bytes per element)
 *   scale  b = q c          2 arrays
 *   add    c = a + b        3 arrays (24 bytes per element)
 *   triad  a = b + q c      3 arrays
 * Each kernel is timed per trial (CLOCK_MONOTONIC); its bandwidth is bytes moved / best time
 * over all trials but the first (which also pays for warming up), in MB/s (10^6 bytes), as
 * STREAM reports it. Afterwards every element must equal the value the same sequence gives in
 * scalar arithmetic (relative error below 1e-13): checksum-ok=1, else the run fails.
 * Parameters (key=value lines; '#' starts a comment):
 *   trials=10  llc-factor=4  scalar=3  array-mib=N (overrides llc-factor)  llc-bytes=N (overrides /sys)
 * Output: copy-mbs, scale-mbs, add-mbs, triad-mbs (best), *-avg-mbs, array-elements,
 *   array-bytes, llc-bytes, llc-source, budget-bytes (when given), trials, checksum-ok, cpu,
 *   cpu-node (where it ran), mem-node (where the arrays' pages are), total-time.
 * Usage: stream [budget-bytes=N] PARAMETER-FILE | --version
 */
#define _GNU_SOURCE
#include <glob.h>
#include <inttypes.h>
#include <math.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NAME "stream"
#include "kit.h"

#define KERNELS 4
static const char *const NAMES[KERNELS] = {"copy", "scale", "add", "triad"};
static const int ARRAYS_MOVED[KERNELS] = {2, 2, 3, 3};

struct params {
    long trials;
    double llc_factor;
    double scalar;
    double array_mib; /* 0: from llc_factor */
    double llc_bytes; /* 0: from /sys */
};

static int set_param(void *ctx, const char *where, const char *key, const char *value)
{
    struct params *p = ctx;
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    int ok = !errno && end != value && !*end;
    if (ok && !strcmp(key, "trials") && v >= 2 && v <= 1000 && v == floor(v)) p->trials = (long)v;
    else if (ok && !strcmp(key, "llc-factor") && v > 0) p->llc_factor = v;
    else if (ok && !strcmp(key, "scalar") && v != 0) p->scalar = v;
    else if (ok && !strcmp(key, "array-mib") && v > 0) p->array_mib = v;
    else if (ok && !strcmp(key, "llc-bytes") && v > 0) p->llc_bytes = v;
    else return kit_refuse(where, key, value);
    return 0;
}

static long parse_size(const char *text)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*end == 'K' || *end == 'k') v <<= 10;
    else if (*end == 'M' || *end == 'm') v <<= 20;
    else if (*end == 'G' || *end == 'g') v <<= 30;
    return v;
}

/* bytes of the largest data (or unified) cache this CPU sees, 0 if /sys does not say */
static long llc_bytes(int cpu)
{
    char pattern[128];
    snprintf(pattern, sizeof pattern, "/sys/devices/system/cpu/cpu%d/cache/index[0-9]*", cpu < 0 ? 0 : cpu);
    glob_t g;
    long best = 0;
    int best_level = 0;
    if (glob(pattern, 0, NULL, &g)) return 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char path[512], type[32] = "", size[32] = "";
        int level = 0;
        FILE *f;
        snprintf(path, sizeof path, "%s/level", g.gl_pathv[i]);
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%d", &level) != 1) level = 0;
            fclose(f);
        }
        snprintf(path, sizeof path, "%s/type", g.gl_pathv[i]);
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%31s", type) != 1) type[0] = '\0';
            fclose(f);
        }
        snprintf(path, sizeof path, "%s/size", g.gl_pathv[i]);
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%31s", size) != 1) size[0] = '\0';
            fclose(f);
        }
        if (strcmp(type, "Data") && strcmp(type, "Unified")) continue;
        long bytes = parse_size(size);
        if (level > best_level || (level == best_level && bytes > best)) {
            best_level = level;
            best = bytes;
        }
    }
    globfree(&g);
    return best;
}

/* NUMA node of the page holding addr (get_mempolicy with MPOL_F_NODE | MPOL_F_ADDR), -1 if unknown */
static int node_of(const void *addr)
{
#ifdef SYS_get_mempolicy
    int node = -1;
    if (syscall(SYS_get_mempolicy, &node, NULL, 0UL, addr, 1UL | 2UL) == 0) return node;
#else
    (void)addr;
#endif
    return -1;
}

/* the online NUMA nodes and the firmware's distances from this node, as /sys says */
static void print_numa(int node)
{
    char line[4096], path[128];
    FILE *f = fopen("/sys/devices/system/node/online", "r");
    if (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0'; /* printed with its own line end: a full buffer has no room for one */
        printf("numa-nodes=%s\n", line);
    }
    if (f) fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/node/node%d/distance", node);
    f = fopen(path, "r");
    if (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        for (char *c = line; *c; c++)
            if (*c == ' ') *c = ',';
        printf("node-distances=%s\n", line);
    }
    if (f) fclose(f);
}

/* relative error of the array against the value every element should hold */
static double max_relative_error(const double *x, size_t n, double expected)
{
    double worst = 0;
    for (size_t j = 0; j < n; j++) {
        double e = fabs(x[j] - expected) / fabs(expected);
        if (e > worst || isnan(e)) worst = isnan(e) ? INFINITY : e;
    }
    return worst;
}

int main(int argc, char **argv)
{
    long long budget = kit_budget(&argc, &argv);
    if (budget == -2) return 2;
    int rc = kit_args(argc, argv, "[budget-bytes=N] PARAMETER-FILE", "; 1 thread, double");
    if (rc >= 0) return rc;
    struct params p = {.trials = 10, .llc_factor = 4, .scalar = 3, .array_mib = 0, .llc_bytes = 0};
    if (kit_read_lines(argv[1], set_param, &p)) return 2;
    double start_all = kit_now();

    int cpu = sched_getcpu();
    unsigned int cpu_u = 0, cpu_node = 0;
    int have_node = syscall(SYS_getcpu, &cpu_u, &cpu_node, NULL) == 0;
    const char *llc_source = p.llc_bytes > 0 ? "parameter" : "sys";
    long llc = p.llc_bytes > 0 ? (long)p.llc_bytes : llc_bytes(cpu);
    size_t bytes;
    if (p.array_mib > 0) {
        bytes = (size_t)(p.array_mib * 1048576.0);
    } else {
        if (llc <= 0) {
            fprintf(stderr, NAME ": /sys does not give the last-level cache size; set llc-bytes or array-mib\n");
            return 2;
        }
        bytes = (size_t)(p.llc_factor * (double)llc);
    }
    if (budget >= 0 && bytes > (size_t)budget / 3) bytes = (size_t)budget / 3; /* three arrays */
    size_t n = bytes / 64 * 64 / sizeof(double); /* whole cache lines, as tool_info/sizing.py counts */
    if (n < 1024) {
        fprintf(stderr, NAME ": arrays of %zu elements are too small", n);
        if (budget >= 0) fprintf(stderr, " (budget-bytes=%lld holds no more)", budget);
        fputc('\n', stderr);
        return 2;
    }
    double *a, *b, *c;
    if (posix_memalign((void **)&a, 64, n * sizeof(double)) || posix_memalign((void **)&b, 64, n * sizeof(double)) ||
        posix_memalign((void **)&c, 64, n * sizeof(double))) {
        fprintf(stderr, NAME ": cannot allocate 3 arrays of %zu bytes\n", n * sizeof(double));
        return 3;
    }
    /* first touch by the measuring thread: the pages land on the node its policy says */
    double start_init = kit_now();
    for (size_t j = 0; j < n; j++) {
        a[j] = 1.0;
        b[j] = 2.0;
        c[j] = 0.0;
    }
    double init_time = kit_now() - start_init;
    int mem_node = node_of(a + n / 2);
    int mem_node_b = node_of(b + n / 2), mem_node_c = node_of(c + n / 2);
    if (mem_node_b != mem_node || mem_node_c != mem_node) mem_node = -2; /* mixed */

    const double q = p.scalar;
    double best[KERNELS], sum[KERNELS];
    for (int k = 0; k < KERNELS; k++) {
        best[k] = INFINITY;
        sum[k] = 0;
    }
    for (long trial = 0; trial < p.trials; trial++) {
        double t[KERNELS + 1];
        t[0] = kit_now();
        for (size_t j = 0; j < n; j++) c[j] = a[j];
        t[1] = kit_now();
        for (size_t j = 0; j < n; j++) b[j] = q * c[j];
        t[2] = kit_now();
        for (size_t j = 0; j < n; j++) c[j] = a[j] + b[j];
        t[3] = kit_now();
        for (size_t j = 0; j < n; j++) a[j] = b[j] + q * c[j];
        t[4] = kit_now();
        if (trial == 0) continue;
        for (int k = 0; k < KERNELS; k++) {
            double dt = t[k + 1] - t[k];
            if (dt < best[k]) best[k] = dt;
            sum[k] += dt;
        }
    }

    /* the same sequence on one scalar per array */
    double ea = 1.0, eb = 2.0, ec = 0.0;
    for (long trial = 0; trial < p.trials; trial++) {
        ec = ea;
        eb = q * ec;
        ec = ea + eb;
        ea = eb + q * ec;
    }
    double err = fmax(max_relative_error(a, n, ea), fmax(max_relative_error(b, n, eb), max_relative_error(c, n, ec)));
    int ok = err < 1e-13;

    for (int k = 0; k < KERNELS; k++) {
        double moved = (double)ARRAYS_MOVED[k] * (double)n * sizeof(double);
        printf("%s-mbs=%.1f\n", NAMES[k], moved / best[k] / 1e6);
        printf("%s-avg-mbs=%.1f\n", NAMES[k], moved / (sum[k] / (double)(p.trials - 1)) / 1e6);
        printf("%s-best-time=%.6fs\n", NAMES[k], best[k]);
    }
    printf("array-elements=%zu\n", n);
    printf("array-bytes=%zuB\n", n * sizeof(double));
    printf("llc-bytes=%ldB\n", llc);
    printf("llc-source=%s\n", llc_source);
    if (budget >= 0) printf("budget-bytes=%lldB\n", budget);
    printf("trials=%ld\n", p.trials);
    printf("threads=1\n");
    printf("cpu=%d\n", cpu);
    if (have_node) printf("cpu-node=%u\n", cpu_node);
    else printf("cpu-node=-1\n");
    printf("mem-node=%d\n", mem_node);
    print_numa(have_node ? (int)cpu_node : 0);
    printf("max-relative-error=%.3g\n", err);
    printf("checksum-ok=%d\n", ok);
    printf("init-time=%.3fs\n", init_time);
    printf("total-time=%.3fs\n", kit_now() - start_all);
    free(a);
    free(b);
    free(c);
    if (!ok) {
        fprintf(stderr, NAME ": results differ from the expected values (relative error %.3g)\n", err);
        return 1;
    }
    return 0;
}
