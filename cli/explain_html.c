/* explain_html.c — --format html (to come). */
#include "explain.h"

void ex_html(const struct explanation *e, FILE *out)
{
    (void)e;
    (void)out;
}
