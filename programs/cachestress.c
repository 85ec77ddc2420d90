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
#include <inttypes.h>

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
#include "kit.h"

#if HAVE_CLFLUSH
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
    int rc = kit_args(argc, argv, "FILE", HAVE_CLFLUSH ? "; clflush x86" : "; clflush unavailable");
    if (rc >= 0) return rc;
    uint64_t buffer = 4194304, repeats = 8;
    const struct kit_param known[] = {{"buffer", &buffer, NULL}, {"repeats", &repeats, NULL}, {NULL, NULL, NULL}};
    if (kit_read_params(argv[1], known) != 0) return 2;
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

    struct kit_span span;
    kit_span_start(&span);
    stress(buf, buffer, line, repeats);
    kit_span_stop(&span);

    uint64_t checksum = 0, lines = 0;
    for (uint64_t i = 0; i < buffer; i++) checksum += buf[i];
    for (uint64_t i = 0; i < buffer; i += line) lines++;
    free(buf);

    printf("workload=" NAME "\n");
    printf("buffer=%" PRIu64 "\n", buffer);
    printf("repeats=%" PRIu64 "\n", repeats);
    printf("line=%u\n", line);
    printf("lines=%" PRIu64 "\n", lines);
    printf("self-seconds=%.9f\n", span.t1 - span.t0);
    printf("self-cputime=%.9f\n", span.c1 - span.c0);
    printf("checksum=%" PRIu64 "\n", checksum);
    printf("cpu-start=%d\n", span.cpu_start);
    printf("cpu-end=%d\n", span.cpu_end);
    return 0;
#endif
}
