/* mlir.c - StableHLO/MHLO text as an input. jax hands XLA an MLIR module
 * (jax.jit(f).lower(...).as_text()); to check XLA exactly as jax uses it,
 * the target compiles that text unchanged, and the reference evaluates the
 * HLO module XLA itself converts it to (the target's "convert" request),
 * since trench reads HLO only. */
#include "target.h"

#include <stdlib.h>
#include <string.h>

bool tr_text_is_mlir(const char *text, size_t len) {
  size_t i = 0;
  while (i < len) {
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) i++;
    if (i >= len) return false;
    const char *l = text + i;
    size_t rest = len - i;
    /* Comments and location aliases may come first. */
    if ((rest >= 2 && l[0] == '/' && l[1] == '/') || (rest >= 4 && !strncmp(l, "#loc", 4))) {
      while (i < len && text[i] != '\n') i++;
      continue;
    }
    return (rest >= 6 && !strncmp(l, "module", 6) && (rest == 6 || l[6] == ' ' || l[6] == '@' || l[6] == '{')) ||
           (rest >= 9 && !strncmp(l, "func.func", 9));
  }
  return false;
}

tr_status tr_mlir_convert(tr_target *t, const char *file, const char *text, tr_module **m,
                          char **hlo, tr_diag *d) {
  *m = NULL;
  *hlo = NULL;
  tr_status s = tr_proc_convert(t, text, hlo, d);
  if (s != TR_OK) return s;
  tr_buf name = {0};
  tr_buf_printf(&name, "%s (as %s converted it to HLO)", file, t->name ? t->name : t->spec);
  *m = tr_parse(tr_buf_str(&name), *hlo, strlen(*hlo), NULL, d);
  tr_buf_free(&name);
  if (*m && tr_verify(*m, d) != TR_OK) {
    tr_module_free(*m);
    *m = NULL;
  }
  if (!*m) {
    tr_free(*hlo);
    *hlo = NULL;
    return TR_ERR_SYNTAX;
  }
  return TR_OK;
}
