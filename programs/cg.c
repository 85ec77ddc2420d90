/*
 * cg: a conjugate-gradient kernel on a random sparse symmetric matrix (seed 002's "cg" workload).
 *
 * Like the NAS CG benchmark it estimates the smallest eigenvalue of a sparse symmetric positive
 * definite matrix by inverse power iteration, each step solving A z = x with a fixed number of
 * unpreconditioned CG iterations. The matrix-vector products gather x at random column indices:
 * irregular memory access, the property that made cg the one NAS kernel whose speed depended on
 * the core in the paper. Written from scratch; the matrix is not NAS's.
 *
 * The matrix (deterministic, from `seed`): row i gets `per-row` off-diagonal entries at columns
 * j = splitmix64() mod rows (j = i moves to i+1 mod rows) with value v = (splitmix64() >> 11) 2^-53,
 * each mirrored to (j, i); duplicates add up. Its diagonal is the row's off-diagonal sum plus
 * `shift`, so A is symmetric and strictly diagonally dominant, hence positive definite, and
 * every eigenvalue is at least `shift`. Stored as CSR: rows x (2 per-row + 1) non-zeros.
 * NAS class S has 1,400 rows / 78,148 non-zeros, class A 14,000 rows / about 1.85 M.
 *
 * Parameter file (key=value lines, '#' starts a comment):
 *   workload=cg   optional; any other name is refused
 *   rows=N (default 14000)   per-row=N (default 66)   shift=X (default 10)
 *   cg-iterations=N (default 25)   power-iterations=N (default 2)   seed=N (default 1)
 * Output (key=value): workload, rows, nonzeros, matrix-bytes, iterations,
 *   self-seconds (CLOCK_MONOTONIC around the power iterations, not the matrix set-up),
 *   self-cputime (CLOCK_PROCESS_CPUTIME_ID around the same),
 *   zeta (the eigenvalue estimate 1/(x.z) of the last step; x starts as splitmix64 values
 *   from state ~seed mapped to [-0.5, 0.5) and is normalised every step), residual
 *   (||x - A z|| / ||x|| of the last solve), checksum (= zeta, 12 significant digits),
 *   cpu-start and cpu-end (sched_getcpu before and after).
 * Usage: cg FILE | --version
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>

#define NAME "cg"
#include "kit.h"

/* A symmetric sparse matrix in CSR form, the diagonal stored separately. */
struct csr {
    uint64_t rows, nnz;
    uint64_t *start;  /* rows + 1 offsets into col/val */
    uint32_t *col;
    double *val;
    double *diag;
};

/* Two passes over the same random stream: count the entries per row, then place them. */
static int make_matrix(struct csr *a, uint64_t rows, uint64_t per_row, double shift, uint64_t seed)
{
    a->rows = rows;
    a->nnz = 2 * rows * per_row;
    a->start = calloc(rows + 1, sizeof *a->start);
    a->col = malloc(a->nnz * sizeof *a->col);
    a->val = malloc(a->nnz * sizeof *a->val);
    a->diag = calloc(rows, sizeof *a->diag);
    uint64_t *fill = calloc(rows, sizeof *fill);
    if (!a->start || !a->col || !a->val || !a->diag || !fill) {
        free(fill);
        return -1;
    }
    uint64_t state = seed;
    for (uint64_t i = 0; i < rows; i++)
        for (uint64_t k = 0; k < per_row; k++) {
            uint64_t j = kit_splitmix64(&state) % rows;
            if (j == i) j = (j + 1) % rows;
            (void)kit_splitmix64(&state);
            a->start[i + 1]++;
            a->start[j + 1]++;
        }
    for (uint64_t i = 0; i < rows; i++) a->start[i + 1] += a->start[i];
    state = seed;
    for (uint64_t i = 0; i < rows; i++)
        for (uint64_t k = 0; k < per_row; k++) {
            uint64_t j = kit_splitmix64(&state) % rows;
            if (j == i) j = (j + 1) % rows;
            double v = (double)(kit_splitmix64(&state) >> 11) * 0x1p-53;
            uint64_t p = a->start[i] + fill[i]++, q = a->start[j] + fill[j]++;
            a->col[p] = (uint32_t)j;
            a->val[p] = v;
            a->col[q] = (uint32_t)i;
            a->val[q] = v;
        }
    for (uint64_t i = 0; i < rows; i++) {
        double sum = 0;
        for (uint64_t p = a->start[i]; p < a->start[i + 1]; p++) sum += a->val[p];
        a->diag[i] = sum + shift;
    }
    free(fill);
    return 0;
}

/* y = A x */
static void multiply(const struct csr *a, const double *x, double *y)
{
    for (uint64_t i = 0; i < a->rows; i++) {
        double sum = a->diag[i] * x[i];
        for (uint64_t p = a->start[i]; p < a->start[i + 1]; p++) sum += a->val[p] * x[a->col[p]];
        y[i] = sum;
    }
}

static double dot(const double *x, const double *y, uint64_t n)
{
    double sum = 0;
    for (uint64_t i = 0; i < n; i++) sum += x[i] * y[i];
    return sum;
}

/* z ~ A^-1 x by `iterations` CG steps from z = 0; r, p, q are scratch vectors. Returns ||x - A z||. */
static double conjugate_gradient(const struct csr *a, const double *x, double *z, double *r, double *p, double *q,
                                 uint64_t iterations)
{
    uint64_t n = a->rows;
    for (uint64_t i = 0; i < n; i++) {
        z[i] = 0;
        r[i] = p[i] = x[i];
    }
    double rho = dot(r, r, n);
    for (uint64_t it = 0; it < iterations && rho > 0; it++) {
        multiply(a, p, q);
        double alpha = rho / dot(p, q, n);
        for (uint64_t i = 0; i < n; i++) {
            z[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        double rho_next = dot(r, r, n);
        double beta = rho_next / rho;
        rho = rho_next;
        for (uint64_t i = 0; i < n; i++) p[i] = r[i] + beta * p[i];
    }
    multiply(a, z, q);
    double sum = 0;
    for (uint64_t i = 0; i < n; i++) sum += (x[i] - q[i]) * (x[i] - q[i]);
    return sqrt(sum);
}

int main(int argc, char **argv)
{
    int rc = kit_args(argc, argv, "FILE", "");
    if (rc >= 0) return rc;
    uint64_t rows = 14000, per_row = 66, cg_iterations = 25, power_iterations = 2, seed = 1;
    double shift = 10;
    const struct kit_param known[] = {
        {"rows", &rows, NULL}, {"per-row", &per_row, NULL}, {"shift", NULL, &shift},
        {"cg-iterations", &cg_iterations, NULL}, {"power-iterations", &power_iterations, NULL},
        {"seed", &seed, NULL}, {NULL, NULL, NULL},
    };
    if (kit_read_params(argv[1], known) != 0) return 2;
    if (rows < 2 || rows > UINT32_MAX || per_row > (UINT64_MAX / 32) / rows) {
        fprintf(stderr, NAME ": %s: rows must be 2..%" PRIu32 " and rows x per-row must fit in memory\n", argv[1], UINT32_MAX);
        return 2;
    }
    struct csr a;
    double *x = malloc(rows * sizeof *x), *z = malloc(rows * sizeof *z), *r = malloc(rows * sizeof *r);
    double *p = malloc(rows * sizeof *p), *q = malloc(rows * sizeof *q);
    if (!x || !z || !r || !p || !q || make_matrix(&a, rows, per_row, shift, seed) != 0) {
        fprintf(stderr, NAME ": cannot allocate a %" PRIu64 "-row matrix with %" PRIu64 " entries per row\n", rows, per_row);
        return 2;
    }
    uint64_t state = ~seed;  /* the start vector: uniform in [-0.5, 0.5), normalised */
    for (uint64_t i = 0; i < rows; i++) x[i] = (double)(kit_splitmix64(&state) >> 11) * 0x1p-53 - 0.5;
    double norm0 = sqrt(dot(x, x, rows));
    for (uint64_t i = 0; i < rows; i++) x[i] /= norm0;

    struct kit_span span;
    kit_span_start(&span);
    double zeta = 0, residual = 0;
    for (uint64_t it = 0; it < power_iterations; it++) {
        residual = conjugate_gradient(&a, x, z, r, p, q, cg_iterations);
        zeta = 1.0 / dot(x, z, rows);
        double norm = sqrt(dot(z, z, rows));
        for (uint64_t i = 0; i < rows; i++) x[i] = z[i] / norm;
    }
    kit_span_stop(&span);

    uint64_t nnz = a.nnz + rows;
    printf("workload=" NAME "\n");
    printf("rows=%" PRIu64 "\n", rows);
    printf("nonzeros=%" PRIu64 "\n", nnz);
    printf("matrix-bytes=%" PRIu64 "\n", a.nnz * (sizeof *a.col + sizeof *a.val) + rows * (sizeof *a.diag + sizeof *a.start));
    printf("iterations=%" PRIu64 "\n", power_iterations * cg_iterations);
    printf("self-seconds=%.9f\n", span.t1 - span.t0);
    printf("self-cputime=%.9f\n", span.c1 - span.c0);
    printf("zeta=%.15e\n", zeta);
    printf("residual=%.6e\n", residual);
    printf("checksum=%.12e\n", zeta);
    printf("cpu-start=%d\n", span.cpu_start);
    printf("cpu-end=%d\n", span.cpu_end);
    return 0;
}
