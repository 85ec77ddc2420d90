/*
 * workload: one program, several kinds of work, each proportional to its argument, for measuring
 * whether `timekit ab`'s designs find the ratio two commands have when each runs alone
 * (benchmarks/designs_truth.py): `workload chase-llc 1000` against `workload chase-llc 1020` is a
 * pair of "builds" where B does 2 % more of the same work (apart from starting the process and a
 * set-up that is the same for any UNITS).
 *
 * Each kind stresses another part of the machine (the comment above its function says which),
 * about 20-40 ms of CPU time at UNITS=1000 on a 2-3 GHz x86-64 core. Fixed seeds: a kind and its
 * UNITS always do the same work. It reads nothing but /proc/self/exe (pagecache) and writes
 * nothing; forkexec runs /bin/true.
 * Usage: workload KIND UNITS | --version
 */
#define _GNU_SOURCE

#define NAME "workload"
#include "kit.h"

#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define LINE 64                    /* bytes of a cache line */
#define PAGE 4096

static volatile uint64_t sink;     /* every kind ends here, so that no work is folded away */

static inline uint64_t xorshift64(uint64_t x)
{
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

/* n steps of xorshift64, one dependent chain */
static uint64_t xorshift_chain(uint64_t x, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) x = xorshift64(x);
    return x;
}

/* The core's integer pipeline: a dependent chain of shifts and xors, no memory, no branches
 * but the loop's. */
static int compute(uint64_t units)
{
    sink = xorshift_chain(88172645463325252u, units * 16000);
    return 0;
}

/* The branch predictor: two branches per step on bits of a pseudo-random sequence, taken half
 * of the time at random (the empty asm in each arm keeps the compiler from turning them into
 * conditional moves). */
static int branchy(uint64_t units)
{
    uint64_t x = 0x9E3779B97F4A7C15u, a = 0, b = 0;
    for (uint64_t i = 0; i < units * 4500; i++) {
        x = xorshift64(x);
        if (x & 0x100) {
            a += x;
            __asm__ volatile("" : "+r"(a));
        } else {
            b ^= x >> 3;
            __asm__ volatile("" : "+r"(b));
        }
        if (x & 0x200000) {
            a ^= b;
            __asm__ volatile("" : "+r"(a));
        } else {
            b += 7;
            __asm__ volatile("" : "+r"(b));
        }
    }
    sink = a ^ b;
    return 0;
}

/* The latency of one level of the cache hierarchy: `steps` dependent loads along one random
 * cycle through every line of `bytes` (Sattolo's shuffle: one cycle, no line twice before all). */
static int chase(uint64_t bytes, uint64_t steps)
{
    size_t n = bytes / LINE, stride = LINE / sizeof(size_t);
    size_t *next = aligned_alloc(LINE, bytes);
    size_t *order = malloc(n * sizeof *order);
    if (!next || !order) {
        fprintf(stderr, NAME ": out of memory\n");
        return 1;
    }
    uint64_t seed = 42;
    for (size_t i = 0; i < n; i++) order[i] = i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)(kit_splitmix64(&seed) % i), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < n; i++) next[i * stride] = order[i] * stride;  /* line i -> line order[i] */
    free(order);
    size_t p = 0;
    for (uint64_t i = 0; i < steps; i++) p = next[p];
    sink = p;
    free(next);
    return 0;
}

/* The L2 cache: a pointer chase over 256 KiB */
static int chase_l2(uint64_t units)
{
    return chase(256u << 10, units * 5500);
}

/* The last-level cache: a pointer chase over 8 MiB (more than an L2, less than a 16-32 MiB L3) */
static int chase_llc(uint64_t units)
{
    return chase(8u << 20, units * 180);
}

/* Memory bandwidth: a sum over a 64 MiB array of uint64, read in order and wrapping around.
 * The array is written once first (huge pages where the kernel gives them), the same cost for
 * any UNITS. */
static int stream(uint64_t units)
{
    size_t n = (64u << 20) / sizeof(uint64_t);
    uint64_t *a = mmap(NULL, n * sizeof *a, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) {
        fprintf(stderr, NAME ": mmap: %s\n", strerror(errno));
        return 1;
    }
    madvise(a, n * sizeof *a, MADV_HUGEPAGE);
    for (size_t i = 0; i < n; i++) a[i] = i;
    uint64_t total = units * 40000, sum = 0;
    size_t at = 0;
    while (total > 0) {
        size_t len = n - at < total ? n - at : (size_t)total;
        for (size_t i = at; i < at + len; i++) sum += a[i];
        total -= len;
        at = (at + len) % n;
    }
    sink = sum;
    munmap(a, n * sizeof *a);
    return 0;
}

/* The cost of entering and leaving the kernel: getppid(), which does almost nothing inside */
static int syscalls(uint64_t units)
{
    uint64_t s = 0;
    for (uint64_t i = 0; i < units * 150; i++) s += (uint64_t)syscall(SYS_getppid);
    sink = s;
    return 0;
}

/* The kernel's page faults and zeroing of fresh pages: map 1 MiB, write one byte per page,
 * unmap, again; UNITS * 20 pages in all (the last mapping touches only what is left). */
static int pagefault(uint64_t units)
{
    const size_t bytes = 1u << 20, pages = bytes / PAGE;
    uint64_t left = units * 20;
    while (left > 0) {
        char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            fprintf(stderr, NAME ": mmap: %s\n", strerror(errno));
            return 1;
        }
        size_t touch = left < pages ? (size_t)left : pages;
        for (size_t i = 0; i < touch; i++) p[i * PAGE] = (char)i;
        left -= touch;
        munmap(p, bytes);
    }
    return 0;
}

/* The allocator: 64 slots, each step frees a seeded slot and allocates there anew, 16 B to
 * 32 KiB (mostly small), and writes its first byte. */
static int alloc(uint64_t units)
{
    enum { SLOTS = 64 };
    char *slot[SLOTS] = {0};
    uint64_t seed = 7, s = 0;
    mallopt(M_TRIM_THRESHOLD, 256 << 20);   /* fixed thresholds: no brk up and down, no mmap */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    for (uint64_t i = 0; i < units * 550; i++) {
        uint64_t r = kit_splitmix64(&seed);
        size_t k = r % SLOTS, size = (size_t)16 << ((r >> 8) % 12);    /* 16 B .. 32 KiB */
        size += (size_t)((r >> 16) % size);                            /* not only powers of 2 */
        free(slot[k]);
        slot[k] = malloc(size);
        if (!slot[k]) {
            fprintf(stderr, NAME ": out of memory\n");
            return 1;
        }
        slot[k][0] = (char)r;
        s += (unsigned char)slot[k][0];
    }
    for (int k = 0; k < SLOTS; k++) free(slot[k]);
    sink = s;
    return 0;
}

/* Creating processes: fork, execv("/bin/true"), waitpid, UNITS/20 times (rounded to the nearest: exact
 * for changes of 2 and 10 % of 1000, not of 5 %; the children's
 * CPU time is counted for whoever waits for this process). */
static int forkexec(uint64_t units)
{
    uint64_t n = (units + 10) / 20;
    if (n == 0) n = 1;
    for (uint64_t i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, NAME ": fork: %s\n", strerror(errno));
            return 1;
        }
        if (pid == 0) {
            char *argv[] = {"/bin/true", NULL};
            execv(argv[0], argv);
            _exit(127);
        }
        int status;
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, NAME ": /bin/true failed\n");
            return 1;
        }
    }
    return 0;
}

/* Reading from the page cache: pread of 4 KiB chunks of this program's own binary, cycling
 * through it, UNITS * 45 reads. */
static int pagecache(uint64_t units)
{
    int fd = open("/proc/self/exe", O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, NAME ": /proc/self/exe: %s\n", strerror(errno));
        return 1;
    }
    char buf[PAGE];
    off_t at = 0;
    uint64_t s = 0;
    for (uint64_t i = 0; i < units * 45; i++) {
        ssize_t got = pread(fd, buf, sizeof buf, at);
        if (got < 0) {
            fprintf(stderr, NAME ": pread: %s\n", strerror(errno));
            close(fd);
            return 1;
        }
        if (got < (ssize_t)sizeof buf) {
            at = 0;                         /* the end: from the start again (a short read counts) */
        } else {
            at += got;
        }
        s += (unsigned char)buf[0];
    }
    close(fd);
    sink = s;
    return 0;
}

/* Two threads in lock step: each runs the compute chain in ROUNDS rounds with a spin barrier
 * (an atomic counter, busy-waiting) between rounds. On two cores the barrier costs little; with
 * both threads on one core a waiting thread spins away its time slice, and the run is very slow. */
#define ROUNDS 200

struct team {
    atomic_uint arrived;
    atomic_uint generation;
    uint64_t per_thread;
};

static void spin_barrier(struct team *t)
{
    unsigned gen = atomic_load_explicit(&t->generation, memory_order_acquire);
    if (atomic_fetch_add_explicit(&t->arrived, 1, memory_order_acq_rel) == 1) {
        atomic_store_explicit(&t->arrived, 0, memory_order_relaxed);
        atomic_store_explicit(&t->generation, gen + 1, memory_order_release);
        return;
    }
    while (atomic_load_explicit(&t->generation, memory_order_acquire) == gen) {
    }
}

struct member {
    struct team *team;
    uint64_t result;
};

static void *team_member(void *arg)
{
    struct member *m = arg;
    uint64_t x = 88172645463325252u, done = 0;
    for (uint64_t r = 0; r < ROUNDS; r++) {
        uint64_t until = m->team->per_thread * (r + 1) / ROUNDS;
        x = xorshift_chain(x, until - done);
        done = until;
        spin_barrier(m->team);
    }
    m->result = x;
    return NULL;
}

static int threads(uint64_t units)
{
    struct team t = {.per_thread = units * 8000};
    atomic_init(&t.arrived, 0);
    atomic_init(&t.generation, 0);
    struct member us = {&t, 0}, them = {&t, 0};
    pthread_t other;
    if (pthread_create(&other, NULL, team_member, &them) != 0) {
        fprintf(stderr, NAME ": pthread_create failed\n");
        return 1;
    }
    team_member(&us);
    pthread_join(other, NULL);
    sink = us.result ^ them.result;
    return 0;
}

static const struct {
    const char *name;
    int (*run)(uint64_t units);
} kinds[] = {
    {"compute", compute},   {"branchy", branchy},   {"chase-l2", chase_l2},   {"chase-llc", chase_llc},
    {"stream", stream},     {"syscalls", syscalls}, {"pagefault", pagefault}, {"alloc", alloc},
    {"forkexec", forkexec}, {"pagecache", pagecache}, {"threads", threads},
};

int main(int argc, char **argv)
{
    if (kit_version(argc, argv, "")) return 0;
    char *end = NULL;
    unsigned long long units = argc == 3 && argv[2][0] != '-' ? strtoull(argv[2], &end, 10) : 0;
    if (argc == 3 && end && !*end && units > 0 && units <= UINT64_C(1) << 32)
        for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
            if (strcmp(argv[1], kinds[i].name) == 0) return kinds[i].run((uint64_t)units);
    fprintf(stderr, "usage: " NAME " compute|branchy|chase-l2|chase-llc|stream|syscalls|pagefault|alloc|forkexec|"
                    "pagecache|threads UNITS (a positive integer: 1000 is about 30 ms of CPU) | --version\n");
    return 2;
}
