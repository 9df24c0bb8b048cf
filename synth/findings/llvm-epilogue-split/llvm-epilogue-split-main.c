/* llvm-epilogue-split-main.c — calls split() (llvm-epilogue-split.c). */
#include <stdio.h>
void split(void *a, void *b);
int f(void *b) { return b != 0; }
void g(void *a, void *b) { printf("g %p %p\n", a, b); }
void h(void *a, void *b) { printf("h %p %p\n", a, b); }
int main(void) { split((void *)1, (void *)2); return 0; }
