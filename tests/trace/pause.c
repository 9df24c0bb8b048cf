/* pause.c — blocks in pause(2) forever, two calls deep. */
void sys_pause(void);

__attribute__((noinline)) static void wait_here(void)
{
    sys_pause();
}

int main(void);
int main(void)
{
    wait_here();
    return 0;
}
