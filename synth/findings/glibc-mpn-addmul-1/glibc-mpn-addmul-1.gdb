# glibc-mpn-addmul-1.gdb — the wrong CFI seen by a real unwinder: gdb
# stopped two instructions into __mpn_addmul_1 (after its two pushes)
# prints the saved rbp and rbx as return addresses.
#
#   printf '#include <stdio.h>\nint main(void){printf("%%.40f\\n",1e300/3.0);}' > mpn.c
#   cc -O0 -o mpn mpn.c
#   gdb -q -batch -x glibc-mpn-addmul-1.gdb ./mpn
#
# (needs libc6-dbg for the symbol). Seen on Debian 12, glibc 2.36-9+deb12u14:
#   #0  __mpn_addmul_1 () at ../sysdeps/x86_64/addmul_1.S:37
#   #1  0x00007fffffffdc00 in ?? ()
#   #2  0x0000000000000078 in ?? ()
#   #3  0x00007ffff7e20266 in __mpn_mul (...) at ./stdlib/mul.c:98
set debuginfod enabled off
set breakpoint pending on
break __mpn_addmul_1
run
stepi 2
bt 5
