/* thread.c — one more thread, joined: the tracer follows the first only
 * and says that another was made. */
#include <pthread.h>

static void *work(void *arg)
{
    volatile unsigned long *sum = arg;
    for (unsigned long i = 0; i < 1000; i++)
        *sum += i;
    return NULL;
}

int main(void)
{
    pthread_t thread;
    volatile unsigned long sum = 0;
    if (pthread_create(&thread, NULL, work, (void *)&sum) != 0)
        return 2;
    pthread_join(thread, NULL);
    return sum == 499500 ? 0 : 1;
}
