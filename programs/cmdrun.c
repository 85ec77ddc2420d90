/*
 * cmdrun: runs one benchmarked command for tool_info.command (`timekit bench`, `timekit ab 'CMD' 'CMD'`),
 * or a pair of commands timed together (`timekit ab` with blocks, interleaved or duet).
 *
 * Usage: cmdrun [--cwd DIR] [--shell SHELL|none] [--prepare CMD] [--repeat K] [--warmup] [--ignore-failure] [--escaped]
 *               [--output null|pipe|inherit|FILE] -- COMMAND [ARG...]
 *        cmdrun [the options above] [--seed N] [--duet|--interleave [--sentinel S]] -- COMMAND_A [ARG...] --- COMMAND_B [ARG...]
 *        cmdrun --version
 *
 * With a shell (default sh) COMMAND is one string, run as `SHELL -c COMMAND SHELL ARG...` (the ARGs
 * are its $1, $2, ...), but under sh a command of plain words is executed directly (plain_words);
 * with `--shell none` COMMAND ARG... is executed directly. Each of the K executions (default 1) is preceded by the
 * --prepare command (always `sh -c`, as hyperfine does), which is not timed. Every execution is
 * timed here: wall time with CLOCK_MONOTONIC around fork, exec and wait4, user and system time
 * from wait4's rusage (the command's whole process tree, as far as it waits for its children).
 * One line per execution, `cmdrun-execution K wall=S user=S sys=S status=N`, then the means:
 * exec-walltime, exec-cputime (user + sys), exec-user, exec-sys (seconds, unit s), and executions=K.
 *
 * BenchExec measures cmdrun as a whole (cgroup CPU time and wall time): with K = 1 and no
 * --prepare that is the command plus one fork of cmdrun, and BenchExec's figures are the
 * measurement. --warmup only marks the run in its output (the tool-info module discards it).
 * --ignore-failure (hyperfine's): an execution that exits non-zero is timed and counted as any
 * other, and cmdrun exits 0 all the same (BenchExec counts a run that exits non-zero as failed);
 * the first failing execution's code is printed as exit-code=C (0: none), and every execution's
 * in its line. A failing --prepare still exits 2.
 * --escaped: COMMAND and --prepare carry %24 for '$', %7E for '~' and %25 for '%', because
 * BenchExec expands $VARIABLES and ~ in every argument before the run; the shell gets them intact.
 *
 * Pairs: a lone `---` among the words splits them into side a and side b, each a command as above.
 * A and B timed in separate runs meet the machine at different moments (other load, heat, clock
 * changes); timed in pairs they meet it together, and ln(b/a) per pair cancels what both met. Each
 * of the K executions is a pair, one line per side in the order they started, `cmdrun-execution K
 * side=a|b wall=S user=S sys=S status=N [core=C]`, each side after its own --prepare. Back to back
 * (default), pairs come in couples of opposite orders (ab then ba, or ba then ab) and the order of
 * couple c is the low bit of the c-th splitmix64 value from --seed N (0: a first; default seed 0):
 * neither side always runs second, on caches the other warmed; each side starts first in half the
 * pairs (one more for either in an odd last pair), so an order effect weighs on both alike; a
 * linear drift over a couple cancels in it; and a seed repeats its orders. --duet starts both at once, pinned to the first two CPUs of cmdrun's CPU
 * set (a on the first in odd pairs, on the second in even ones: a faster core favours neither),
 * released together once both are forked and prepared; each is timed from the release to its own
 * end. The side that ends first runs its command again, untimed and its output discarded, until
 * the other ends (then it is killed): each side is timed beside the other for all of its time, and
 * a longer side does not run its tail alone, which read +5 % of work as +11.5 % of CPU time. It
 * needs two CPUs in the set. --interleave starts both at once on the first CPU of the set and hands
 * that core to each in turn, for 1.2 to 2.2 ms at a time (each side first in half the pairs, drawn
 * as back to back); the side that ends first is replaced by a filler until the other ends; only the CPU
 * times compare (interleave()). --sentinel S, with --duet or --interleave, runs one couple of every S
 * (drawn from the seed; at least one per run) back to back instead: the run then holds each side
 * timed alone beside its times under the design, and `timekit ab` checks that the design leaves
 * each side's cost as it is alone. Such lines end in mode=alone, the others in mode=duet or
 * mode=interleave. The summary is then a-walltime, a-cputime, b-walltime,
 * b-cputime (means per execution, s), logratio-walltime and logratio-cputime (the mean over the
 * pairs of ln(b/a); nan when a time of some pair is 0), pairs=K, executions=2K and, with --duet,
 * duet=1, with --interleave, interleave=1.
 *
 * --output (hyperfine's): where the commands' standard output goes. null (default): /dev/null, as
 * hyperfine does, so that a compressor writing to stdout is timed as it is used and its bytes never
 * reach BenchExec's log (where they would be decoded as text, and a line without its newline would
 * swallow the next cmdrun-execution line); pipe: a pipe that a child of cmdrun drains (for programs
 * that behave differently on /dev/null); inherit: cmdrun's own output, BenchExec's log (each
 * cmdrun-execution line then starts on a line of its own); FILE: that file, truncated once, every
 * execution's output after the previous one's. Except under inherit, the commands' standard error
 * goes to a memory file: of the first execution that fails, its last lines (at most TAIL_BYTES) are
 * copied to cmdrun's standard error, so that the failure says why without the log holding every
 * execution's messages.
 *
 * Exit code: the first failing execution's (128 + signal for a signal; 0 with --ignore-failure), 2 on
 * bad usage, a failed --prepare or --duet without two CPUs, else 0.
 */
#define _GNU_SOURCE

#define NAME "cmdrun"
#include "kit.h"

#include <ctype.h>
#include <fcntl.h>
#include <signal.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(void)
{
    fprintf(stderr, "usage: " NAME " [--cwd DIR] [--shell SHELL|none] [--prepare CMD] [--repeat K] [--warmup] "
                    "[--ignore-failure] [--escaped] [--output null|pipe|inherit|FILE] [--seed N] [--duet|--interleave [--sentinel S]] -- COMMAND [ARG...] [--- COMMAND_B [ARG...]] | --version\n");
}

/* In a child right after fork: it is killed when cmdrun ends, however cmdrun ends (a kill of the
 * kit's group, a SIGKILL of cmdrun itself). A side stopped for the other's turn would otherwise
 * stay stopped for ever once cmdrun is gone, where the kernel's hang-up of an orphaned group
 * misses it (it stopped itself after cmdrun died). */
static pid_t cmdrun_pid;
static void die_with_cmdrun(void)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != cmdrun_pid) _exit(128 + SIGKILL); /* cmdrun is gone already */
}

/* Where the commands' output goes (--output): set up once in main, applied in every child */
enum output_mode { OUTPUT_NULL, OUTPUT_PIPE, OUTPUT_INHERIT, OUTPUT_FILE };
static enum output_mode output_mode = OUTPUT_NULL;
static int output_fd = -1; /* the children's stdout: /dev/null, the drained pipe or FILE (-1: inherit) */
static int stderr_fd = -1; /* the children's stderr: a memory file, emptied before each execution (-1: inherit) */
static int failure_shown = 0; /* the stderr tail of a failing execution was copied once already */
#define TAIL_BYTES 4096

/* In a child before exec: its stdout and stderr where --output says */
static void redirect_output(void)
{
    if (output_fd >= 0) dup2(output_fd, STDOUT_FILENO);
    if (stderr_fd >= 0) dup2(stderr_fd, STDERR_FILENO);
}

/* Before an execution (or a pair): the memory file holds only what it writes */
static void clear_stderr(void)
{
    if (stderr_fd >= 0 && ftruncate(stderr_fd, 0) != 0) fprintf(stderr, NAME ": cannot empty the error buffer: %s\n", strerror(errno));
}

/* After a failing execution: the last lines it wrote on stderr, on cmdrun's stderr (once a run) */
static void show_stderr_tail(void)
{
    if (stderr_fd < 0 || failure_shown) return;
    failure_shown = 1;
    off_t size = lseek(stderr_fd, 0, SEEK_END);
    if (size <= 0) return;
    off_t from = size > TAIL_BYTES ? size - TAIL_BYTES : 0;
    char buffer[TAIL_BYTES + 1];
    ssize_t got = pread(stderr_fd, buffer, (size_t)(size - from), from);
    if (got <= 0) return;
    buffer[got] = '\0';
    char *start = buffer;
    if (from > 0) { /* begin at a whole line */
        char *newline = memchr(buffer, '\n', (size_t)got);
        if (newline) start = newline + 1;
    }
    fflush(stdout);
    fputs(start, stderr);
    if (got > 0 && buffer[got - 1] != '\n') fputc('\n', stderr);
    fflush(stderr);
}

/* A child that reads the pipe the commands write to and discards it (--output pipe); returns the
 * pipe's write end, or -1 (said on stderr) */
static pid_t drainer = -1;
static int start_drainer(void)
{
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) {
        fprintf(stderr, NAME ": pipe failed: %s\n", strerror(errno));
        return -1;
    }
    fflush(stdout);
    drainer = fork();
    if (drainer < 0) {
        fprintf(stderr, NAME ": fork failed: %s\n", strerror(errno));
        return -1;
    }
    if (drainer == 0) {
        die_with_cmdrun();
        close(ends[1]);
        char buffer[65536];
        while (read(ends[0], buffer, sizeof buffer) > 0 || errno == EINTR) errno = 0;
        _exit(0);
    }
    close(ends[0]);
    return ends[1];
}

static void stop_drainer(void)
{
    if (drainer <= 0) return;
    close(output_fd);
    output_fd = -1;
    while (waitpid(drainer, NULL, 0) < 0 && errno == EINTR) continue;
    drainer = -1;
}

/* --output WHERE: the children's stdout and stderr set up; 0, or 2 (said on stderr) */
static int open_output(const char *where)
{
    if (strcmp(where, "inherit") == 0) {
        output_mode = OUTPUT_INHERIT;
        return 0;
    }
    stderr_fd = memfd_create("cmdrun-stderr", MFD_CLOEXEC);
    if (stderr_fd < 0 || fcntl(stderr_fd, F_SETFL, O_APPEND) != 0) {
        fprintf(stderr, NAME ": cannot create the error buffer: %s\n", strerror(errno));
        return 2;
    }
    if (strcmp(where, "null") == 0) {
        output_mode = OUTPUT_NULL;
        output_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    } else if (strcmp(where, "pipe") == 0) {
        output_mode = OUTPUT_PIPE;
        output_fd = start_drainer();
    } else {
        output_mode = OUTPUT_FILE;
        output_fd = open(where, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (output_fd < 0) {
            fprintf(stderr, NAME ": cannot write the commands' output to %s: %s\n", where, strerror(errno));
            return 2;
        }
    }
    return output_fd < 0 ? 2 : 0;
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

/* The exit status as a shell reports it (128 + signal) */
static int exit_code(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* sh's builtins and the words it gives a meaning of its own (dash's list): a command naming one
 * keeps the shell, so that it means what it means under sh */
static const char *const SH_WORDS[] = {
    ".", ":", "alias", "bg", "break", "cd", "chdir", "command", "continue", "echo", "eval", "exec", "exit",
    "export", "false", "fc", "fg", "getopts", "hash", "jobs", "kill", "local", "printf", "pwd", "read",
    "readonly", "return", "set", "shift", "test", "times", "trap", "true", "type", "ulimit", "umask",
    "unalias", "unset", "wait", "case", "do", "done", "elif", "else", "esac", "fi", "for", "if", "in",
    "then", "until", "while", NULL};

/* The words of a command that sh would only split at blanks and exec (no quote, variable, glob,
 * redirection, operator, assignment or builtin: letters, digits and - _ . / , : @ % + = ^ only),
 * NULL-terminated; NULL when the shell is needed or out of memory. Run directly, as make runs
 * such a recipe line, a command is timed without sh's start-up (1.2 ms of CPU an execution on the
 * development VM, 7 % of a 20 ms command), which dilutes a change of the command by as much and
 * adds sh's own noise. */
static char **plain_words(const char *command)
{
    size_t n = 0;
    for (const char *c = command; *c; c++) {
        if (*c == ' ' || *c == '\t') {
            continue;
        }
        if (!isalnum((unsigned char)*c) && !strchr("-_./,:@%+=^", *c)) return NULL;
        if (c == command || c[-1] == ' ' || c[-1] == '\t') n++;
    }
    if (n == 0) return NULL;
    char *copy = strdup(command);
    char **argv = calloc(n + 1, sizeof *argv);
    if (!copy || !argv) {
        free(copy);
        free(argv);
        return NULL;
    }
    size_t k = 0;
    for (char *word = strtok(copy, " \t"); word; word = strtok(NULL, " \t")) argv[k++] = word;
    int keep_shell = strchr(argv[0], '=') != NULL;
    for (int w = 0; SH_WORDS[w] && !keep_shell; w++) keep_shell = strcmp(argv[0], SH_WORDS[w]) == 0;
    if (keep_shell) {
        free(copy);
        free(argv);
        return NULL;
    }
    return argv;
}

/* The argv that runs the n words (NULL-terminated): `SHELL -c WORD0 SHELL WORD1...`, or the words
 * themselves with `--shell none`. Under sh, a plain command (plain_words) is executed without it:
 * the ARGs after it are then unused, as sh leaves $1... unread in a command without a `$`.
 * NULL if out of memory */
static char **command_argv(const char *shell, char **words, int n)
{
    if (strcmp(shell, "none") == 0) return words;
    if (strcmp(shell, "sh") == 0 || strcmp(shell, "/bin/sh") == 0) {
        char **direct = plain_words(words[0]);
        if (direct) return direct;
    }
    char **argv = calloc((size_t)n + 4, sizeof *argv);
    if (!argv) return NULL;
    argv[0] = (char *)shell;
    argv[1] = "-c";
    argv[2] = words[0];
    argv[3] = (char *)shell;
    for (int k = 1; k < n; k++) argv[3 + k] = words[k];
    return argv;
}

/* fork, exec argv (its output where --output says, if `redirect`), wait4; the exit status as a
 * shell reports it (128 + signal), -1 if fork failed */
static int run(char **argv, struct rusage *usage_out, int redirect)
{
    fflush(stdout); /* the child's copy of the buffer is never written, but keeps the lines in order */
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, NAME ": fork failed: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        die_with_cmdrun();
        if (redirect) redirect_output();
        execvp(argv[0], argv);
        fprintf(stderr, NAME ": cannot execute %s: %s\n", argv[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126); /* as sh: not found, or found but not executable */
    }
    int status;
    while (wait4(pid, &status, 0, usage_out) < 0)
        if (errno != EINTR) {
            fprintf(stderr, NAME ": wait4 failed: %s\n", strerror(errno));
            return -1;
        }
    return exit_code(status);
}

/* One timed execution of a side */
struct execution {
    double wall;
    struct rusage ru;
    int code, core; /* core -1: not pinned */
    const char *mode; /* "interleave" or "duet" when timed beside the other side, "alone" for a sentinel pair */
};

/* A filler: side s's command again on its core, untimed, its output discarded, at SCHED_IDLE (cmdrun's
 * own wake-up on that core does not wait for it), in its own process group (stop_filler ends what a
 * shell started, too). It is forked before the duet starts and waits on `gate` for one byte, so
 * that starting it is a write, not a fork at the moment the other side's end is being timed; EOF
 * on the gate ends it unused. */
struct filler {
    pid_t pid;
    int gate; /* the write end; -1 once released or closed */
};

static struct filler fork_filler(char **argv, int core)
{
    struct filler f = {-1, -1};
    int gate[2];
    if (pipe2(gate, O_CLOEXEC) != 0) return f;
    fflush(stdout);
    f.pid = fork();
    if (f.pid == 0) {
        die_with_cmdrun();
        setpgid(0, 0);
        for (int fd = 3; fd < 1024; fd++) /* no other pipe's end: the duet's gate and the other filler's see EOF */
            if (fd != gate[0]) close(fd);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, STDOUT_FILENO), dup2(null, STDERR_FILENO);
        struct sched_param idle = {0};
        sched_setscheduler(0, SCHED_IDLE, &idle);
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(core, &one);
        char c;
        ssize_t got;
        while ((got = read(gate[0], &c, 1)) < 0 && errno == EINTR) continue;
        if (got == 1 && sched_setaffinity(0, sizeof one, &one) == 0) execvp(argv[0], argv);
        _exit(got == 1 ? 127 : 0);
    }
    close(gate[0]);
    if (f.pid < 0) {
        close(gate[1]);
        return f;
    }
    setpgid(f.pid, f.pid); /* both sides set it: no race with stop_filler */
    f.gate = gate[1];
    return f;
}

static void release_filler(struct filler *f)
{
    if (f->gate < 0) return;
    while (write(f->gate, "x", 1) < 0 && errno == EINTR) continue;
    close(f->gate);
    f->gate = -1;
}

static void stop_filler(struct filler *f)
{
    if (f->pid <= 0) return;
    if (f->gate >= 0) { /* never released: EOF ends it */
        close(f->gate);
        f->gate = -1;
    } else {
        kill(-f->pid, SIGKILL);
    }
    while (waitpid(f->pid, NULL, 0) < 0 && errno == EINTR) continue;
    f->pid = -1;
}

/* A child reaped while both sides of a pair run: a filler that ended before the other side is
 * replaced by another (returns -1); a side's execution is recorded, its wall time `wall` (returns s). */
static int reaped(pid_t done, int status, const struct rusage *ru, double wall, char **argv[2], const pid_t pid[2],
                  const int cores[2], int busy, struct filler filler[2], struct execution ex[2])
{
    if (busy >= 0 && done == filler[busy].pid) {
        filler[busy] = fork_filler(argv[busy], cores[busy]);
        release_filler(&filler[busy]);
        return -1;
    }
    int s = done == pid[0] ? 0 : done == pid[1] ? 1 : -1;
    if (s >= 0) {
        ex[s].wall = wall;
        ex[s].ru = *ru;
        ex[s].code = exit_code(status);
        ex[s].core = cores[s];
    }
    return s;
}

/* Both sides at once: side s forked and pinned to cores[s], then both released by closing a pipe
 * they wait on; each one's wall time runs from the release to the wait4 that reaped it. Returns 0,
 * or -1 (said on stderr) when they could not be started; never returns with a child left. */
static int duet(char **argv[2], const int cores[2], int first, struct execution ex[2])
{
    int gate[2];
    if (pipe2(gate, O_CLOEXEC) != 0) {
        fprintf(stderr, NAME ": pipe failed: %s\n", strerror(errno));
        return -1;
    }
    fflush(stdout);
    pid_t pid[2] = {-1, -1};
    for (int j = 0; j < 2; j++) { /* forked in the pair's order, as interleave() does */
        int s = j ? !first : first;
        pid[s] = fork();
        if (pid[s] < 0) {
            fprintf(stderr, NAME ": fork failed: %s\n", strerror(errno));
            break;
        }
        if (pid[s] == 0) {
            die_with_cmdrun();
            close(gate[1]);
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cores[s], &one);
            if (sched_setaffinity(0, sizeof one, &one) != 0) {
                fprintf(stderr, NAME ": cannot pin side %c to CPU %d: %s\n", 'a' + s, cores[s], strerror(errno));
                _exit(127);
            }
            char c;
            while (read(gate[0], &c, 1) < 0 && errno == EINTR) continue;
            redirect_output();
            execvp(argv[s][0], argv[s]);
            fprintf(stderr, NAME ": cannot execute %s: %s\n", argv[s][0], strerror(errno));
            _exit(127);
        }
    }
    close(gate[0]);
    if (pid[0] < 0 || pid[1] < 0) { /* the side forked first waits at the gate: it never starts */
        if (pid[first] > 0) {
            kill(pid[first], SIGKILL);
            while (waitpid(pid[first], NULL, 0) < 0 && errno == EINTR) continue;
        }
        close(gate[1]);
        return -1;
    }
    struct filler filler[2];
    filler[first] = fork_filler(argv[first], cores[first]);
    filler[!first] = fork_filler(argv[!first], cores[!first]);
    double start = kit_now();
    close(gate[1]);
    int busy = -1; /* the side whose filler runs */
    for (int left = 2; left > 0;) {
        int status;
        struct rusage ru;
        pid_t done = wait4(-1, &status, 0, &ru);
        double end = kit_now();
        if (done < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, NAME ": wait4 failed: %s\n", strerror(errno));
            stop_filler(&filler[0]);
            stop_filler(&filler[1]);
            return -1; /* ECHILD: no child left */
        }
        int s = reaped(done, status, &ru, end - start, argv, pid, cores, busy, filler, ex);
        if (s < 0) continue;
        left--;
        if (left == 1 && ex[s].code == 0) { /* the shorter side: its core stays busy until the other ends */
            release_filler(&filler[s]);
            busy = s;
        }
    }
    stop_filler(&filler[0]);
    stop_filler(&filler[1]);
    return 0;
}

/* Both sides at once on one core, handed it in turn (--interleave): each forked into its own process
 * group, pinned to `core`, stopped before its exec; then the core goes to one side for a turn
 * (SIGCONT to its group), then to the other (SIGSTOP, SIGCONT), and so on. A slow spell of the
 * machine (another guest on the host, a clock change) falls on both sides within a few turns,
 * where back to back it may fall on one side only. A turn lasts 1.2 to 2.2 ms, drawn anew each time
 * from `turns`: turns of exactly 1 ms beat with something on the development VM's host that recurs
 * every millisecond, and a 0.1 s loop's pairs spread twice as wide as under turns of random length. The side that ends first is replaced by a
 * filler (its command again, untimed) that takes its turns, so the longer side's tail is
 * interleaved as the rest of it was: run alone, it ran faster, which read +5 % of work as +4 %.
 * Only the CPU time of each side means something: its wall time includes the other's turns.
 * Returns 0, or -1 (said on stderr) when they could not be started; never returns with a child left. */
#define TURN_MIN_NS 1200000L
#define TURN_SPREAD_NS 1000000L
static pid_t fork_stopped(char **argv, int core)
{
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, NAME ": fork failed: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        die_with_cmdrun();
        setpgid(0, 0);
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(core, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) {
            fprintf(stderr, NAME ": cannot pin a side to CPU %d: %s\n", core, strerror(errno));
            _exit(127);
        }
        raise(SIGSTOP); /* until its first turn */
        redirect_output();
        execvp(argv[0], argv);
        fprintf(stderr, NAME ": cannot execute %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* both sides set it: no race with the first SIGCONT */
    int status;
    while (waitpid(pid, &status, WUNTRACED) < 0 && errno == EINTR) continue;
    return WIFSTOPPED(status) ? pid : -1; /* else it could not be pinned, and is reaped already */
}

static void kill_side(pid_t pid)
{
    if (pid <= 0) return;
    kill(-pid, SIGKILL);
    kill(-pid, SIGCONT);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) continue;
}

static int interleave(char **argv[2], int core, int first, uint64_t *turns, struct execution ex[2])
{
    fflush(stdout);
    /* forked in the order of the turns, which alternates: the side forked first pays for it (a null
     * pair read side a 4 % dearer, 0.05 ms, when a was always forked first), so each side pays it in
     * half the pairs and the ratio keeps no sign of it */
    pid_t pid[2] = {-1, -1};
    pid[first] = fork_stopped(argv[first], core);
    if (pid[first] > 0) pid[!first] = fork_stopped(argv[!first], core);
    if (pid[0] < 0 || pid[1] < 0) {
        kill_side(pid[first]);
        return -1;
    }
    const int cores[2] = {core, core};
    struct filler filler[2];
    filler[first] = fork_filler(argv[first], core);
    filler[!first] = fork_filler(argv[!first], core);
    int turn = first, left = 2, busy = -1, alive[2] = {1, 1};
    double start = kit_now();
    kill(-pid[turn], SIGCONT);
    while (left > 0) {
        struct timespec turn_length = {0, TURN_MIN_NS + (long)(kit_splitmix64(turns) % TURN_SPREAD_NS)};
        nanosleep(&turn_length, NULL);
        int status;
        struct rusage ru;
        pid_t done;
        while ((done = wait4(-1, &status, WNOHANG, &ru)) > 0) {
            double end = kit_now();
            int s = reaped(done, status, &ru, end - start, argv, pid, cores, busy, filler, ex);
            if (s < 0) continue;
            ex[s].core = -1; /* one core for both: the strata are who had the first turn, as back to back */
            alive[s] = 0;
            left--;
            if (left == 1 && ex[s].code == 0) { /* its filler takes its turns while the other runs on */
                release_filler(&filler[s]);
                busy = s;
            }
        }
        if (left == 0) break; /* (then ECHILD is no error: a filler that could not be forked left no child) */
        if (done < 0 && errno != EINTR) {
            fprintf(stderr, NAME ": wait4 failed: %s\n", strerror(errno));
            kill_side(alive[0] ? pid[0] : -1);
            kill_side(alive[1] ? pid[1] : -1);
            stop_filler(&filler[0]);
            stop_filler(&filler[1]);
            return -1;
        }
        int next = !turn; /* the next turn: that side, or its filler (at SCHED_IDLE, it runs while the other is stopped) */
        if (alive[next] || busy == next) {
            if (alive[turn]) kill(-pid[turn], SIGSTOP);
            if (alive[next]) kill(-pid[next], SIGCONT);
            turn = next;
        }
    }
    stop_filler(&filler[0]);
    stop_filler(&filler[1]);
    return 0;
}

/* Sums over the executions of one side (or of the single command) */
struct tally {
    double wall, user, sys;
};

/* Print the line of execution k (side -1: the single command) and add it up; returns its exit code */
static int report(long k, int side, const struct execution *ex, struct tally *t)
{
    double user = seconds(ex->ru.ru_utime), sys = seconds(ex->ru.ru_stime);
    if (output_mode == OUTPUT_INHERIT) printf("\n"); /* the command's last line may lack its newline */
    printf("cmdrun-execution %ld", k);
    if (side >= 0) printf(" side=%c", 'a' + side);
    printf(" wall=%.9f user=%.6f sys=%.6f status=%d", ex->wall, user, sys, ex->code);
    if (ex->core >= 0) printf(" core=%d", ex->core);
    if (ex->mode) printf(" mode=%s", ex->mode);
    printf("\n");
    t->wall += ex->wall;
    t->user += user;
    t->sys += sys;
    return ex->code;
}

/* ln(b / a), NAN unless both are positive */
static double logratio(double a, double b)
{
    return a > 0 && b > 0 ? log(b / a) : NAN;
}

int main(int argc, char **argv)
{
    if (kit_version(argc, argv, "")) return 0;
    cmdrun_pid = getpid();
    const char *cwd = NULL, *shell = "sh", *output = "null";
    char *prepare = NULL;
    long repeat = 1;
    uint64_t seed = 0;
    long sentinel = 0;
    int warmup = 0, escaped = 0, duet_mode = 0, interleave_mode = 0, seeded = 0, ignore_failure = 0, i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--warmup") == 0) warmup = 1;
        else if (strcmp(argv[i], "--ignore-failure") == 0) ignore_failure = 1;
        else if (strcmp(argv[i], "--escaped") == 0) escaped = 1;
        else if (strcmp(argv[i], "--duet") == 0) duet_mode = 1;
        else if (strcmp(argv[i], "--interleave") == 0) interleave_mode = 1;
        else if (i + 1 < argc && strcmp(argv[i], "--cwd") == 0) cwd = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--shell") == 0) shell = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--prepare") == 0) prepare = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--output") == 0) output = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--repeat") == 0) {
            char *end;
            repeat = strtol(argv[++i], &end, 10);
            if (*end || repeat < 1) {
                fprintf(stderr, NAME ": --repeat must be a positive integer, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (i + 1 < argc && strcmp(argv[i], "--sentinel") == 0) {
            char *end;
            sentinel = strtol(argv[++i], &end, 10);
            if (*end || sentinel < 1) {
                fprintf(stderr, NAME ": --sentinel must be a positive integer, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (i + 1 < argc && strcmp(argv[i], "--seed") == 0) {
            char *end;
            errno = 0;
            seed = strtoull(argv[++i], &end, 10);
            if (errno || end == argv[i] || *end || argv[i][0] < '0' || argv[i][0] > '9') {
                fprintf(stderr, NAME ": --seed must be an unsigned 64-bit integer, got '%s'\n", argv[i]);
                return 2;
            }
            seeded = 1;
        } else {
            usage();
            return 2;
        }
    }
    if (i + 1 >= argc) {
        usage();
        return 2;
    }
    /* the words of each side, NULL-terminated: the `---` between them becomes side a's NULL */
    char **words[2] = {argv + i + 1, NULL};
    int nwords[2] = {argc - i - 1, 0}, sides = 1;
    for (int k = 0; k < nwords[0]; k++)
        if (strcmp(words[0][k], "---") == 0) {
            words[0][k] = NULL;
            words[1] = words[0] + k + 1;
            nwords[1] = nwords[0] - k - 1;
            nwords[0] = k;
            sides = 2;
            break;
        }
    if (sides == 2 && (nwords[0] == 0 || nwords[1] == 0)) {
        fprintf(stderr, NAME ": expected a command on either side of ---\n");
        return 2;
    }
    if (sides == 1 && (duet_mode || interleave_mode || seeded)) {
        fprintf(stderr, NAME ": --duet, --interleave and --seed are for two commands: -- COMMAND_A [ARG...] --- COMMAND_B [ARG...]\n");
        return 2;
    }
    if (sentinel && !duet_mode && !interleave_mode) {
        fprintf(stderr, NAME ": --sentinel puts back-to-back pairs among --duet or --interleave ones: give one of them\n");
        return 2;
    }
    if (duet_mode && interleave_mode) {
        fprintf(stderr, NAME ": --duet runs the sides on two cores, --interleave on one: give one of them\n");
        return 2;
    }
    char **exec_argv[2] = {NULL, NULL};
    for (int s = 0; s < sides; s++) {
        if (escaped)
            for (int k = 0; k < nwords[s]; k++) unescape(words[s][k]);
        if (!(exec_argv[s] = command_argv(shell, words[s], nwords[s]))) return 2;
    }
    if (escaped && prepare) unescape(prepare);
    char *prepare_argv[] = {"sh", "-c", prepare, NULL};
    int cores[2] = {-1, -1};
    if (duet_mode || interleave_mode) {
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof set, &set) != 0) {
            fprintf(stderr, NAME ": cannot read the CPU set: %s\n", strerror(errno));
            return 2;
        }
        for (int c = 0, found = 0; c < CPU_SETSIZE && found < 2; c++)
            if (CPU_ISSET(c, &set)) cores[found++] = c;
        if (duet_mode && CPU_COUNT(&set) < 2) {
            fprintf(stderr, NAME ": --duet needs two cores in the run's CPU set, it has %d (give the run 2 cores, "
                            "e.g. cpuCores=\"2\", or leave out --duet)\n", CPU_COUNT(&set));
            return 2;
        }
    }
    if (cwd && chdir(cwd) != 0) {
        fprintf(stderr, NAME ": cannot change to directory %s: %s\n", cwd, strerror(errno));
        return 2;
    }
    if (open_output(output) != 0) return 2; /* after --cwd: a relative FILE is where the commands run */
    if (warmup) printf("cmdrun: warmup run, discarded\n");

    struct tally tally[2] = {{0, 0, 0}, {0, 0, 0}};
    double log_wall = 0, log_cpu = 0; /* sums of ln(b/a) over the pairs */
    uint64_t state = seed, turns = ~seed; /* the pairs' orders, and the lengths of interleaved turns */
    uint64_t sentinels = seed ^ 0x5e471e15ULL; /* which couple of each group is back to back */
    long alone_couple = 0;                     /* the couple of the current group that is (1-based) */
    int failed = 0, b_first = 0;
    for (long k = 1; k <= repeat; k++) {
        struct execution ex[2];
        int order[2] = {0, 1}; /* the sides in the order they start */
        if (k % 2) b_first = (int)(kit_splitmix64(&state) & 1); /* a couple's first pair draws its order */
        else b_first = !b_first;                                  /* its second pair has the other one */
        long couple = (k + 1) / 2, group = sentinel ? (couple - 1) / sentinel : 0;
        if (sentinel && (couple - 1) % sentinel == 0) { /* a new group of couples: draw its sentinel among those it will hold */
            long couples = (repeat + 1) / 2, in_group = couples - group * sentinel < sentinel ? couples - group * sentinel : sentinel;
            if (k % 2) alone_couple = group * sentinel + 1 + (long)(kit_splitmix64(&sentinels) % (uint64_t)in_group);
        }
        int together = (duet_mode || interleave_mode) && couple != alone_couple;
        if (sides == 2 && (!duet_mode || !together) && b_first) order[0] = 1, order[1] = 0;
        for (int j = 0; j < sides; j++) {
            int s = order[j];
            if (prepare) {
                struct rusage ru;
                int code = run(prepare_argv, &ru, 0);
                if (code != 0) {
                    char side[8] = "";
                    if (sides == 2) snprintf(side, sizeof side, " side=%c", 'a' + s);
                    fprintf(stderr, NAME ": the --prepare command failed (exit code %d) before execution %ld%s\n", code, k,
                            side);
                    return 2;
                }
            }
            if (together) continue; /* both prepared: they start together */
            clear_stderr();
            double start = kit_now();
            ex[s].code = run(exec_argv[s], &ex[s].ru, 1);
            ex[s].wall = kit_now() - start;
            ex[s].core = -1;
            ex[s].mode = sentinel ? "alone" : NULL;
            if (ex[s].code < 0) return 2;
            if (ex[s].code != 0) show_stderr_tail();
        }
        if (together) clear_stderr();
        if (duet_mode && together) {
            int pinned[2] = {cores[(k + 1) % 2], cores[k % 2]}; /* a on c0 in odd pairs, on c1 in even ones */
            if (duet(exec_argv, pinned, b_first, ex) != 0) return 2;
            ex[0].mode = ex[1].mode = "duet";
        }
        if (interleave_mode && together) {
            if (interleave(exec_argv, cores[0], order[0], &turns, ex) != 0) return 2;
            ex[0].mode = ex[1].mode = "interleave";
        }
        if (together && (ex[0].code != 0 || ex[1].code != 0)) show_stderr_tail();
        for (int j = 0; j < sides; j++) {
            int code = report(k, sides == 2 ? order[j] : -1, &ex[order[j]], &tally[order[j]]);
            if (code && !failed) failed = code;
        }
        if (sides == 2) {
            log_wall += logratio(ex[0].wall, ex[1].wall);
            log_cpu += logratio(seconds(ex[0].ru.ru_utime) + seconds(ex[0].ru.ru_stime),
                                seconds(ex[1].ru.ru_utime) + seconds(ex[1].ru.ru_stime));
        }
    }
    double n = (double)repeat;
    if (sides == 1) {
        printf("exec-walltime=%.9fs\nexec-cputime=%.6fs\nexec-user=%.6fs\nexec-sys=%.6fs\nexecutions=%ld\n",
               tally[0].wall / n, (tally[0].user + tally[0].sys) / n, tally[0].user / n, tally[0].sys / n, repeat);
        if (ignore_failure) printf("exit-code=%d\n", failed);
        stop_drainer();
        return ignore_failure ? 0 : failed;
    }
    for (int s = 0; s < 2; s++)
        printf("%c-walltime=%.9fs\n%c-cputime=%.6fs\n", 'a' + s, tally[s].wall / n, 'a' + s,
               (tally[s].user + tally[s].sys) / n);
    /* a NAN term makes its sum NAN: printed as nan (isnan, not the sign glibc would print) */
    printf("logratio-walltime=%.9f\n", isnan(log_wall) ? NAN : log_wall / n);
    printf("logratio-cputime=%.9f\n", isnan(log_cpu) ? NAN : log_cpu / n);
    printf("pairs=%ld\nexecutions=%ld\n", repeat, 2 * repeat);
    if (duet_mode) printf("duet=1\n");
    if (interleave_mode) printf("interleave=1\n");
    if (ignore_failure) printf("exit-code=%d\n", failed);
    stop_drainer();
    return ignore_failure ? 0 : failed;
}
