/* stats.c — `cfisem stats` (to come). */
#include <stdio.h>

#include "cli.h"

int cli_stats(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("cfisem stats: not built yet\n", stderr);
    return CLI_USAGE;
}
