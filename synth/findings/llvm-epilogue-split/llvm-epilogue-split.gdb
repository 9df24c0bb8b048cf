# llvm-epilogue-split.gdb — gdb's backtrace inside the split epilogue.
#
#   clang -O2 -c -o split.o llvm-epilogue-split.c
#   gcc -O0 -g -o split_run llvm-epilogue-split-main.c split.o
#   gdb -q -batch -x llvm-epilogue-split.gdb ./split_run
#
# At split+24 (the add) the backtrace is split, main; at split+28 (the
# test, after `add $8,%rsp`) gdb reads the return address 8 bytes too high
# and prints (Debian 12, clang 14.0.6, gdb 13.1):
#   #0  0x00005555555551ec in split ()
#   #1  0x0000000000000001 in ?? ()
#   #2  0x00007ffff7dfa24a in __libc_start_call_main (...)
# (frame #1 is the saved r14, main is lost).
set debuginfod enabled off
break *(split+24)
break *(split+28)
run
bt 3
continue
bt 3
