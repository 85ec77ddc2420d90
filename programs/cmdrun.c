/*
 * cmdrun: runs one benchmarked command for tool_info.command (`timekit bench`, `timekit ab 'CMD' 'CMD'`).
 *
 * Usage: cmdrun [--cwd DIR] [--shell SHELL|none] [--prepare CMD] [--repeat K] [--warmup] [--escaped]
 *               -- COMMAND [ARG...]
 *        cmdrun --version
 *
 * With a shell (default sh) COMMAND is one string, run as `SHELL -c COMMAND SHELL ARG...` (the ARGs
 * are its $1, $2, ...); with `--shell none` COMMAND ARG... is executed directly. Each of the K executions (default 1) is preceded by the
 * --prepare command (always `sh -c`, as hyperfine does), which is not timed. Every execution is
 * timed here: wall time with CLOCK_MONOTONIC around fork, exec and wait4, user and system time
 * from wait4's rusage (the command's whole process tree, as far as it waits for its children).
 * One line per execution, `cmdrun-execution K wall=S user=S sys=S status=N`, then the means:
 * exec-walltime, exec-cputime (user + sys), exec-user, exec-sys (seconds, unit s), and executions=K.
 *
 * BenchExec measures cmdrun as a whole (cgroup CPU time and wall time): with K = 1 and no
 * --prepare that is the command plus one fork of cmdrun, and BenchExec's figures are the
 * measurement. --warmup only marks the run in its output (the tool-info module discards it).
 * --escaped: COMMAND and --prepare carry %24 for '$', %7E for '~' and %25 for '%', because
 * BenchExec expands $VARIABLES and ~ in every argument before the run; the shell gets them intact.
 *
 * Exit code: the first failing execution's (128 + signal for a signal), 2 on bad usage or a
 * failed --prepare, else 0.
 */
#define _GNU_SOURCE

#define NAME "cmdrun"
#include "kit.h"

#include <strings.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(void)
{
    fprintf(stderr, "usage: " NAME " [--cwd DIR] [--shell SHELL|none] [--prepare CMD] [--repeat K] [--warmup] "
                    "[--escaped] -- COMMAND [ARG...] | --version\n");
}

/* %24 -> '$', %7E -> '~', %25 -> '%', in place */
static void unescape(char *s)
{
    char *out = s;
    for (; *s; s++) {
        if (s[0] == '%' && s[1] && s[2]) {
            char code[3] = {s[1], s[2], 0};
            char c = strcmp(code, "24") == 0 ? '$' : strcasecmp(code, "7E") == 0 ? '~' : strcmp(code, "25") == 0 ? '%' : 0;
            if (c) {
                *out++ = c;
                s += 2;
                continue;
            }
        }
        *out++ = *s;
    }
    *out = '\0';
}

static double seconds(struct timeval t)
{
    return (double)t.tv_sec + (double)t.tv_usec * 1e-6;
}

/* fork, exec argv, wait4; the exit status as a shell reports it (128 + signal), -1 if fork failed */
static int run(char **argv, struct rusage *usage_out)
{
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, NAME ": fork failed: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, NAME ": cannot execute %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    while (wait4(pid, &status, 0, usage_out) < 0)
        if (errno != EINTR) {
            fprintf(stderr, NAME ": wait4 failed: %s\n", strerror(errno));
            return -1;
        }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
    if (kit_version(argc, argv, "")) return 0;
    const char *cwd = NULL, *shell = "sh";
    char *prepare = NULL;
    long repeat = 1;
    int warmup = 0, escaped = 0, i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--warmup") == 0) warmup = 1;
        else if (strcmp(argv[i], "--escaped") == 0) escaped = 1;
        else if (i + 1 < argc && strcmp(argv[i], "--cwd") == 0) cwd = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--shell") == 0) shell = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--prepare") == 0) prepare = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--repeat") == 0) {
            char *end;
            repeat = strtol(argv[++i], &end, 10);
            if (*end || repeat < 1) {
                fprintf(stderr, NAME ": --repeat must be a positive integer, got '%s'\n", argv[i]);
                return 2;
            }
        } else {
            usage();
            return 2;
        }
    }
    if (i + 1 >= argc) {
        usage();
        return 2;
    }
    char **command = argv + i + 1;
    int ncommand = argc - i - 1;
    if (escaped) {
        for (int k = 0; k < ncommand; k++) unescape(command[k]);
        if (prepare) unescape(prepare);
    }
    char **exec_argv = command;
    if (strcmp(shell, "none") != 0) { /* SHELL -c COMMAND SHELL ARG... */
        exec_argv = calloc((size_t)ncommand + 4, sizeof *exec_argv);
        if (!exec_argv) return 2;
        exec_argv[0] = (char *)shell;
        exec_argv[1] = "-c";
        exec_argv[2] = command[0];
        exec_argv[3] = (char *)shell;
        for (int k = 1; k < ncommand; k++) exec_argv[3 + k] = command[k];
    }
    char *prepare_argv[] = {"sh", "-c", prepare, NULL};
    if (cwd && chdir(cwd) != 0) {
        fprintf(stderr, NAME ": cannot change to directory %s: %s\n", cwd, strerror(errno));
        return 2;
    }
    if (warmup) printf("cmdrun: warmup run, discarded\n");
    fflush(stdout);

    double wall = 0, user = 0, sys = 0;
    int failed = 0;
    for (long k = 1; k <= repeat; k++) {
        struct rusage ru;
        if (prepare) {
            int code = run(prepare_argv, &ru);
            if (code != 0) {
                fprintf(stderr, NAME ": the --prepare command failed (exit code %d) before execution %ld\n", code, k);
                return 2;
            }
        }
        double start = kit_now();
        int code = run(exec_argv, &ru);
        double elapsed = kit_now() - start;
        if (code < 0) return 2;
        fflush(stdout);
        printf("cmdrun-execution %ld wall=%.9f user=%.6f sys=%.6f status=%d\n", k, elapsed, seconds(ru.ru_utime),
               seconds(ru.ru_stime), code);
        wall += elapsed;
        user += seconds(ru.ru_utime);
        sys += seconds(ru.ru_stime);
        if (code && !failed) failed = code;
    }
    printf("exec-walltime=%.9fs\nexec-cputime=%.6fs\nexec-user=%.6fs\nexec-sys=%.6fs\nexecutions=%ld\n", wall / repeat,
           (user + sys) / repeat, user / repeat, sys / repeat, repeat);
    return failed;
}
