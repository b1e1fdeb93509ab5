/* api.c - the embedding API of include/trench.h over the IR layer. */
#include "../../include/trench.h"
#include "ir.h"

#include <stdlib.h>
#include <string.h>

static char *join_diags(const tr_diag *d) {
  tr_buf b = {0};
  for (int i = 0; i < d->nmsgs; i++) {
    if (i) tr_buf_putc(&b, '\n');
    tr_buf_puts(&b, d->msgs[i]);
  }
  return b.p ? b.p : tr_xstrdup("error");
}

tr_module *trench_parse(const char *name, const char *text, size_t len, char **err) {
  tr_diag d = {0};
  tr_module *m = tr_parse(name, text, len, NULL, &d);
  if (!m && err) *err = join_diags(&d);
  tr_diag_clear(&d);
  return m;
}

int trench_verify(const tr_module *m, char **err) {
  tr_diag d = {0};
  tr_status st = tr_verify(m, &d);
  if (st != TR_OK && err) *err = join_diags(&d);
  tr_diag_clear(&d);
  return st == TR_OK ? 0 : -1;
}

char *trench_print(const tr_module *m) {
  tr_buf b = {0};
  tr_print_module(&b, m);
  return b.p ? b.p : tr_xstrdup("");
}

void trench_free(tr_module *m) { tr_module_free(m); }
