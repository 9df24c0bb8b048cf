/* early.c — exits with status 3 from inside a call, never returning to
 * main; or (with an argument) spins forever. */
void sys_exit(int status) __attribute__((noreturn));

__attribute__((noinline)) static void leave(int status)
{
    sys_exit(status);
}

int main(void);
int main(void)
{
    leave(3);
}
