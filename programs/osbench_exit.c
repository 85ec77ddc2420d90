/*
 * osbench_exit: the exec target of osbench's fork+exec measurement. It does nothing and exits
 * at once, so what osbench times is fork, exec (loading this dynamically linked program and
 * the C library) and exit, not any work of the program.
 */
int main(void)
{
    return 0;
}
