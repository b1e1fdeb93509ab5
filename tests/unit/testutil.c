/* testutil.c - see testutil.h. */
#include "testutil.h"
#include "test.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void tr_test_fill(tr_tensor *t, int seed) {
  static const double fv[] = {0.5, -1.25, 3.0, -0.0, 0.0, 2.5, -7.75, 1e-3, 100.0,
                              NAN, INFINITY, -INFINITY, 1.0, -1.0, 65504.0, 1e-40};
  static const int64_t iv[] = {0, 1, -1, 2, -3, 5, 127, -128, 7, 100, -50, 3, 4000000000LL,
                               -2147483648LL, 6};
  size_t n = tr_tensor_count(t);
  for (size_t i = 0; i < n; i++) {
    size_t k = i * 7 + (size_t)seed * 3;
    if (tr_dtype_is_float(t->dtype)) tr_tensor_set_f(t, i, fv[k % TR_NELEMS(fv)]);
    else if (tr_dtypes[t->dtype].kind == TR_DK_COMPLEX)
      tr_tensor_set_c(t, i, fv[k % TR_NELEMS(fv)], fv[(k + 1) % TR_NELEMS(fv)]);
    else if (t->dtype == TR_DT_PRED) tr_tensor_set_i(t, i, (int64_t)(k % 3 == 0));
    else tr_tensor_set_i(t, i, iv[k % TR_NELEMS(iv)]);
  }
}

bool tr_test_add_inputs(const tr_shape *s, tr_tensor **args, int *n, int max, int seed) {
  if (s->dtype == TR_DT_TUPLE) {
    for (int i = 0; i < s->nelems; i++)
      if (!tr_test_add_inputs(s->elems[i], args, n, max, seed)) return false;
    return true;
  }
  if (s->dtype == TR_DT_TOKEN) return true;
  if (*n >= max || !tr_shape_is_array(s)) return false;
  tr_diag d = {0};
  tr_tensor *t = tr_tensor_new(s->dtype, s->rank, s->dims, &d);
  tr_diag_clear(&d);
  if (!t) return false;
  tr_test_fill(t, seed + *n);
  args[(*n)++] = t;
  return true;
}

bool tr_test_same_bits(const tr_tensor *a, const tr_tensor *b) {
  if (a->dtype != b->dtype || a->rank != b->rank || tr_tensor_count(a) != tr_tensor_count(b))
    return false;
  if (tr_tensor_equal_bits(a, b)) return true;
  if (!tr_dtype_is_float(a->dtype)) return false;
  for (size_t i = 0; i < tr_tensor_count(a); i++) {
    double x = tr_tensor_get_f(a, i), y = tr_tensor_get_f(b, i);
    if (isnan(x) && isnan(y)) continue;
    if (tr_tensor_get_bits(a, i) != tr_tensor_get_bits(b, i)) return false;
  }
  return true;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

tr_test_files tr_test_list_hlo(const char *sub) {
  tr_test_files fl = {0};
  tr_buf dir = {0};
  tr_buf_printf(&dir, "%s/%s", tr_test_dir, sub);
  DIR *dp = opendir(tr_buf_str(&dir));
  if (!dp) {
    fprintf(stderr, "  cannot open folder %s\n", tr_buf_str(&dir));
    tr_test_failed++;
    tr_buf_free(&dir);
    return fl;
  }
  int cap = 0;
  struct dirent *e;
  while ((e = readdir(dp)) != NULL) {
    size_t len = strlen(e->d_name);
    if (e->d_name[0] == '.' || len < 4 || strcmp(e->d_name + len - 4, ".hlo") != 0) continue;
    if (fl.n == cap) {
      cap = cap ? cap * 2 : 64;
      fl.paths = tr_xrealloc(fl.paths, (size_t)cap * sizeof(char *));
    }
    tr_buf p = {0};
    tr_buf_printf(&p, "%s/%s", tr_buf_str(&dir), e->d_name);
    fl.paths[fl.n++] = p.p;
  }
  closedir(dp);
  if (!fl.n) {
    fprintf(stderr, "  no .hlo files in %s\n", tr_buf_str(&dir));
    tr_test_failed++;
  }
  tr_buf_free(&dir);
  if (fl.n > 1) qsort(fl.paths, (size_t)fl.n, sizeof(char *), cmp_str);
  return fl;
}

void tr_test_files_free(tr_test_files *fl) {
  for (int i = 0; i < fl->n; i++) free(fl->paths[i]);
  free(fl->paths);
  fl->paths = NULL;
  fl->n = 0;
}

tr_status tr_test_compile(tr_bc_ctx *c, tr_module *m, const char *rule, tr_diag *d) {
  if (!rule) return tr_bc_pipeline_run(c, m, d);
  const char *pass = tr_bc_rule_pass(rule);
  if (!pass) {
    tr_diag_errorf(d, "error: no rule named '%s'", rule);
    return TR_ERR_USAGE;
  }
  return tr_bc_pass_run(c, m, pass, d);
}
