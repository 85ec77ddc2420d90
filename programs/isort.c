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
#include <inttypes.h>

#define NAME "isort"
#include "kit.h"

/* rank[k] = number of keys < k, for k in 0..max_key (a histogram and its prefix sum). */
static void rank_keys(const uint32_t *key, uint64_t n, uint32_t *rank, uint64_t max_key)
{
    memset(rank, 0, (max_key + 1) * sizeof *rank);
    for (uint64_t i = 0; i < n; i++) rank[key[i] + 1]++;
    for (uint64_t k = 0; k < max_key; k++) rank[k + 1] += rank[k];
}

int main(int argc, char **argv)
{
    int rc = kit_args(argc, argv, "FILE", "");
    if (rc >= 0) return rc;
    uint64_t n = 4194304, max_key = 65536, iterations = 10, seed = 1;
    const struct kit_param known[] = {
        {"keys", &n, NULL}, {"max-key", &max_key, NULL}, {"iterations", &iterations, NULL},
        {"seed", &seed, NULL}, {NULL, NULL, NULL},
    };
    if (kit_read_params(argv[1], known) != 0) return 2;
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
        for (int j = 0; j < 4; j++) sum += kit_splitmix64(&state) % max_key;
        key[i] = (uint32_t)(sum / 4);
    }

    struct kit_span span;
    kit_span_start(&span);
    for (uint64_t it = 1; it <= iterations; it++) {
        key[it] = (uint32_t)it;
        key[it + iterations] = (uint32_t)(max_key - it);
        rank_keys(key, n, rank, max_key);
    }
    kit_span_stop(&span);

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
    printf("self-seconds=%.9f\n", span.t1 - span.t0);
    printf("self-cputime=%.9f\n", span.c1 - span.c0);
    printf("sorted=%d\n", ok);
    printf("checksum=%" PRIu64 "\n", checksum);
    printf("cpu-start=%d\n", span.cpu_start);
    printf("cpu-end=%d\n", span.cpu_end);
    free(key);
    free(sorted);
    free(rank);
    return ok ? 0 : 1;
}
