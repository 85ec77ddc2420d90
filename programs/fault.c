/*
 * fault: a workload that fails on purpose, so that a set-up can check that failed runs keep their
 * BenchExec status and stay out of every statistic.
 *
 * Usage: fault FILE, where FILE holds one word: ok (prints done=1), exit (exit code 3), segv,
 * abort, kill (the matching signal), oom (allocates until the memory limit stops it), hang (spins
 * until the time limit stops it).
 */
#define _GNU_SOURCE
#include <signal.h>

#define NAME "fault"
#include "kit.h"

int main(int argc, char **argv)
{
    int rc = kit_args(argc, argv, "FILE (holding ok, exit, segv, abort, kill, oom or hang)", "");
    if (rc >= 0) return rc;
    FILE *in = fopen(argv[1], "r");
    char word[16] = "";
    if (!in || fscanf(in, "%15s", word) != 1) {
        fprintf(stderr, NAME ": cannot read a word from %s\n", argv[1]);
        return 2;
    }
    fclose(in);
    if (strcmp(word, "ok") == 0) {
        printf("done=1\n");
        return 0;
    }
    if (strcmp(word, "exit") == 0) return 3;
    if (strcmp(word, "segv") == 0) raise(SIGSEGV);
    if (strcmp(word, "abort") == 0) abort();
    if (strcmp(word, "kill") == 0) raise(SIGKILL);
    if (strcmp(word, "oom") == 0) {
        for (;;) {
            char *block = malloc(1 << 24);
            if (!block) return 4;
            memset(block, 1, 1 << 24);
        }
    }
    if (strcmp(word, "hang") == 0) {
        volatile unsigned long spin = 0;
        for (;;) spin++;
    }
    fprintf(stderr, NAME ": unknown fault '%s'\n", word);
    return 2;
}
