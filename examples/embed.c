/* embed.c - trench embedded in another program through include/trench.h
 * alone: parse a module, evaluate it on the reference, check it on a
 * target and print the outcome. Built by `make` as BUILD/embed and run by
 * the tests (tests/embed.sh).
 *
 *   embed MODULE.hlo [TARGET]     (TARGET defaults to builtin) */
#include "trench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (size_t k; buf && (k = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
    n += k;
    if (n + 1 == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (buf) buf[n] = 0;
  *len = n;
  return buf;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: embed MODULE.hlo [TARGET]\n");
    return 2;
  }
  const char *spec = argc > 2 ? argv[2] : "builtin";
  size_t len = 0;
  char *text = slurp(argv[1], &len);
  if (!text) {
    fprintf(stderr, "embed: cannot read %s\n", argv[1]);
    return 2;
  }
  char *err = NULL;
  tr_module *m = trench_parse(argv[1], text, len, &err);
  free(text);
  if (!m || trench_verify(m, &err) != 0) {
    fprintf(stderr, "%s\n", err);
    free(err);
    trench_free(m);
    return 1;
  }
  /* The reference on seed 0. */
  trench_tensor **outs = NULL;
  int nouts = 0;
  if (trench_eval(m, 0, &outs, &nouts, &err) != 0) {
    fprintf(stderr, "%s\n", err);
    free(err);
    trench_free(m);
    return 2;
  }
  for (int i = 0; i < nouts; i++) {
    printf("reference out%d: %s[", i, trench_tensor_dtype(outs[i]));
    for (int k = 0; k < trench_tensor_rank(outs[i]); k++)
      printf(k ? ",%lld" : "%lld", trench_tensor_dim(outs[i], k));
    printf("] %zu bytes\n", trench_tensor_nbytes(outs[i]));
  }
  trench_tensors_free(outs, nouts);
  /* The target against the reference's bounds. */
  trench_target *t = trench_target_open(spec, NULL, &err);
  if (!t) {
    fprintf(stderr, "%s\n", err);
    free(err);
    trench_free(m);
    return 2;
  }
  trench_check_options o;
  trench_check_options_init(&o);
  o.nseeds = 2;
  trench_report *r = trench_check(t, m, &o, &err);
  int rc = 2;
  if (r) {
    char *txt = trench_report_text(r);
    fputs(txt, stdout);
    free(txt);
    rc = strcmp(trench_report_outcome(r), "finding") == 0 ? 1 : 0;
    trench_report_free(r);
  } else {
    fprintf(stderr, "%s\n", err);
    free(err);
  }
  trench_target_close(t);
  trench_free(m);
  return rc;
}
