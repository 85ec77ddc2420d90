/*
 * kit.h: the code the kit's single-file workloads share, so each program keeps only its kernel
 * and main. Define _GNU_SOURCE first and NAME (the program's name, a string literal that starts
 * every message) before including it. Everything is static inline: a program that does not use
 * a function gets no code and no warning for it.
 *   kit_args           --version and usage
 *   kit_read_params    key=value files of positive numbers, checked against a table (struct param)
 *   kit_read_lines     key=value files handed line by line to the program's own setter
 *   now, cputime, struct span, splitmix64
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

#include "buildinfo.h"

#ifndef NAME
#error "define NAME (the program's name) before including kit.h"
#endif

/* `NAME --version` prints the build and `extra` (e.g. "; 1 thread"); anything but one argument
 * prints the usage (`file` names the argument). Returns main's exit code, or -1 to go on. */
static inline int kit_args(int argc, char **argv, const char *file, const char *extra)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf(NAME " %s (%s; %s%s)\n", KIT_VERSION, KIT_COMPILER, KIT_CFLAGS, extra);
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: " NAME " %s | --version\n", file);
        return 2;
    }
    return -1;
}

/* The keys a parameter file may set: unsigned integers (> 0) or doubles (> 0). */
struct param {
    const char *key;
    uint64_t *u;
    double *d;
};

static inline int kit_set_param(const struct param *known, const char *path, const char *key, const char *value)
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

/* Read `key=value` lines ('#' starts a comment, blanks around key and value are ignored) into
 * `known` (ended by a NULL key); `workload=NAME` is also allowed. The first error is one line. */
static inline int kit_read_params(const char *path, const struct param *known)
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
        rc = kit_set_param(known, path, s, value);
    }
    fclose(f);
    return rc;
}

/* s without leading blanks and trailing blanks and line ends (cut off in place) */
static inline char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n')) *--e = '\0';
    return s;
}

/* Read `key=value` lines ('#' starts a comment; lines are read in pieces of at most linesize - 1
 * bytes, 1023 at most) and hand each trimmed pair to set(ctx, key, value), which returns non-zero for an
 * unknown key or bad value. The first error is one line naming file and line number. */
static inline int kit_read_lines(const char *path, int linesize, int (*set)(void *, const char *, const char *), void *ctx)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, NAME ": cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, linesize < (int)sizeof line ? linesize : (int)sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *s = trim(line);
        if (!*s) continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            fprintf(stderr, NAME ": %s:%d: expected key=value, got '%s'\n", path, lineno, s);
            rc = -1;
            break;
        }
        *eq = '\0';
        char *key = trim(s), *value = trim(eq + 1);
        if ((rc = set(ctx, key, value)) != 0)
            fprintf(stderr, NAME ": %s:%d: unknown key or bad value: %s=%s\n", path, lineno, key, value);
    }
    fclose(f);
    return rc ? -1 : 0;
}

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double cputime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The timed part of a run: CPU (sched_getcpu) at start and end, wall-clock and CPU seconds. */
struct span {
    int cpu_start, cpu_end;
    double t0, t1, c0, c1;
};

static inline void span_start(struct span *s)
{
    s->cpu_start = sched_getcpu();
    s->c0 = cputime();
    s->t0 = now();
}

static inline void span_stop(struct span *s)
{
    s->t1 = now();
    s->c1 = cputime();
    s->cpu_end = sched_getcpu();
}

static inline uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

#endif
