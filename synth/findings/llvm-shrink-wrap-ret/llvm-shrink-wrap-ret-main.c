/* llvm-shrink-wrap-ret-main.c — calls seven() (llvm-shrink-wrap-ret.c)
 * once through the early exit and once through the epilogue:
 *   clang -O2 -c -o sw.o llvm-shrink-wrap-ret.c
 *   gcc -O0 -o sw_run llvm-shrink-wrap-ret-main.c sw.o
 *   cfisem trace --engines il -- ./sw_run */
#include <stdio.h>
struct obj {
    void (**vt)(void *, long, long, long, long, long, int);
};
void seven(struct obj *o, long a, long b, long c, long d, long *e, int f);
long path(long a, long b) { return a + b; }
static void method(void *t, long r, long x, long y, long z, long w, int v)
{
    (void)x, (void)z, (void)w, (void)v;
    printf("method %p %ld %ld\n", t, r, y);
}
static void (*table[8])(void *, long, long, long, long, long, int) = {
    [7] = method};
int main(void)
{
    struct obj target = {table};
    struct obj objs[2] = {{0}, {(void *)&target}};
    long data[8] = {1};
    seven(objs, 0, 0, 0, 0, 0, 0);    /* the early exit */
    seven(objs, 0, 0, 0, 0, data, 1); /* the epilogue */
    return 0;
}
