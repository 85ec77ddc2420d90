/*
 * isort: an integer-sort kernel after the NAS IS benchmark (seed 002's negative control).
 *
 * The paper found NAS IS equally fast on every core; here it is the control next to cg and
 * the cache-stress microbenchmark. Written from scratch: `keys` integer keys in [0, max-key),
 * each the mean of four splitmix64 values mod max-key (a bell-shaped distribution as in NAS),
 * are ranked `iterations` times by a counting sort (histogram, prefix sum); before iteration
 * it (1-based) two keys change as in NAS: key[it] = it and key[it + iterations] = max-key - it.
 * After the timed iterations the keys are fully sorted with the last ranks and verified.
 *
 * Parameter file (key=value lines, '#' starts a comment):
 *   workload=isort   optional; any other name is refused
 *   keys=N (default 4194304)   max-key=N (default 65536)   iterations=N (default 10)   seed=N (default 1)
 * Output (key=value): workload, keys, max-key, iterations, self-seconds (CLOCK_MONOTONIC
 *   around the ranking iterations), self-cputime (CLOCK_PROCESS_CPUTIME_ID around the same),
 *   sorted (1 if the final sort verified, else 0),
 *   checksum (sum over i of (i+1) * sorted[i], modulo 2^64), cpu-start and cpu-end.
 * Usage: isort FILE | --version
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

#define NAME "isort"

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

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* rank[k] = number of keys < k, for k in 0..max_key (a histogram and its prefix sum). */
static void rank_keys(const uint32_t *key, uint64_t n, uint32_t *rank, uint64_t max_key)
{
    memset(rank, 0, (max_key + 1) * sizeof *rank);
    for (uint64_t i = 0; i < n; i++) rank[key[i] + 1]++;
    for (uint64_t k = 0; k < max_key; k++) rank[k + 1] += rank[k];
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf(NAME " %s (%s; %s)\n", KIT_VERSION, KIT_COMPILER, KIT_CFLAGS);
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: " NAME " FILE | --version\n");
        return 2;
    }
    uint64_t n = 4194304, max_key = 65536, iterations = 10, seed = 1;
    const struct param known[] = {
        {"keys", &n, NULL}, {"max-key", &max_key, NULL}, {"iterations", &iterations, NULL},
        {"seed", &seed, NULL}, {NULL, NULL, NULL},
    };
    if (read_params(argv[1], known) != 0) return 2;
    if (n >= UINT32_MAX || max_key >= UINT32_MAX || 2 * iterations >= n || iterations >= max_key) {
        fprintf(stderr, NAME ": %s: need keys, max-key < 2^32, 2 x iterations < keys and iterations < max-key\n", argv[1]);
        return 2;
    }
    uint32_t *key = malloc(n * sizeof *key), *sorted = malloc(n * sizeof *sorted);
    uint32_t *rank = malloc((max_key + 1) * sizeof *rank);
    if (!key || !sorted || !rank) {
        fprintf(stderr, NAME ": cannot allocate %" PRIu64 " keys\n", n);
        return 2;
    }
    uint64_t state = seed;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t sum = 0;
        for (int j = 0; j < 4; j++) sum += splitmix64(&state) % max_key;
        key[i] = (uint32_t)(sum / 4);
    }

    int cpu_start = sched_getcpu();
    double c0 = cputime(), t0 = now();
    for (uint64_t it = 1; it <= iterations; it++) {
        key[it] = (uint32_t)it;
        key[it + iterations] = (uint32_t)(max_key - it);
        rank_keys(key, n, rank, max_key);
    }
    double t1 = now(), c1 = cputime();
    int cpu_end = sched_getcpu();

    /* the full sort from the last ranks, then its verification */
    for (uint64_t i = 0; i < n; i++) sorted[rank[key[i]]++] = key[i];
    int ok = 1;
    uint64_t checksum = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (i > 0 && sorted[i - 1] > sorted[i]) ok = 0;
        checksum += (i + 1) * (uint64_t)sorted[i];
    }

    printf("workload=" NAME "\n");
    printf("keys=%" PRIu64 "\n", n);
    printf("max-key=%" PRIu64 "\n", max_key);
    printf("iterations=%" PRIu64 "\n", iterations);
    printf("self-seconds=%.9f\n", t1 - t0);
    printf("self-cputime=%.9f\n", c1 - c0);
    printf("sorted=%d\n", ok);
    printf("checksum=%" PRIu64 "\n", checksum);
    printf("cpu-start=%d\n", cpu_start);
    printf("cpu-end=%d\n", cpu_end);
    free(key);
    free(sorted);
    free(rank);
    return ok ? 0 : 1;
}
