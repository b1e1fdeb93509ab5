/* testutil.c - see testutil.h. */
#include "testutil.h"
#include "test.h"

#include <math.h>

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
