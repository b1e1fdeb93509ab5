/* compare.c - the comparison policy of compare.h. */
#include "compare.h"

#include <math.h>
#include <string.h>

const char *tr_judgement_name(tr_judgement j) {
  switch (j) {
  case TR_JUDGE_PASS: return "pass";
  case TR_JUDGE_MISMATCH: return "mismatch";
  case TR_JUDGE_WEAK: return "weak";
  }
  return "?";
}

void tr_compare_opts_default(tr_compare_opts *o) {
  o->k = 1.0;
  o->weak_uncertain = 0.5;
}

double tr_compare_tiny(tr_dtype dt) {
  const tr_dtype_info *f = &tr_dtypes[dt];
  if (f->kind != TR_DK_FLOAT) return 0;
  if (f->fstyle == TR_FS_E8M0) return ldexp(1.0, -f->bias);
  return ldexp(1.0, 1 - f->bias - f->mbits);
}

static void fail_at(tr_compare_result *r, size_t i, double value, double target, double allow) {
  r->failing++;
  if (r->has_fail) return;
  r->has_fail = true;
  r->first_fail = i;
  r->first_value = value;
  r->first_target = target;
  r->first_bound = allow;
}

/* One float element; returns false when it fails. NaN and Inf are judged
 * by class: the reference is certain, so the target must agree. */
static bool judge_float(tr_compare_result *r, size_t i, double value, double bound, double target,
                        double k, double tiny) {
  double allow = k * bound + tiny;
  if (isnan(value) || isnan(target)) {
    if (isnan(value) && isnan(target)) return true;
    fail_at(r, i, value, target, allow);
    return false;
  }
  if (isinf(value) || isinf(target)) {
    if (value == target) return true;
    fail_at(r, i, value, target, allow);
    r->worst_ratio = INFINITY;
    r->worst_index = i;
    return false;
  }
  double diff = fabs(target - value);
  double ratio = diff / allow;
  if (ratio > r->worst_ratio) {
    r->worst_ratio = ratio;
    r->worst_index = i;
  }
  if (diff <= allow) return true;
  fail_at(r, i, value, target, allow);
  return false;
}

tr_status tr_compare_output(const tr_shadow_out *ref, const tr_tensor *target,
                            const tr_compare_opts *opts, tr_compare_result *r, tr_diag *d) {
  tr_compare_opts def;
  if (!opts) {
    tr_compare_opts_default(&def);
    opts = &def;
  }
  memset(r, 0, sizeof *r);
  if (target->dtype != ref->dtype || target->rank != ref->rank ||
      (ref->rank && memcmp(target->dims, ref->dims, sizeof(int64_t) * (size_t)ref->rank))) {
    tr_buf a = {0}, b = {0};
    tr_tensor_print_type(&b, target);
    tr_buf_printf(&a, "%s[", tr_dtype_name(ref->dtype));
    for (int i = 0; i < ref->rank; i++) tr_buf_printf(&a, i ? ",%lld" : "%lld", (long long)ref->dims[i]);
    tr_buf_putc(&a, ']');
    tr_diag_errorf(d, "target output is %s but the reference gives %s", tr_buf_str(&b), tr_buf_str(&a));
    tr_buf_free(&a);
    tr_buf_free(&b);
    return TR_ERR_INVALID;
  }
  r->n = ref->n;
  bool is_float = tr_dtype_is_float(ref->dtype) && ref->value && ref->bound;
  double tiny = tr_compare_tiny(ref->dtype);
  double vmin = INFINITY, vmax = -INFINITY, bmax = 0;
  bool first = true, constant = true;
  uint64_t first_bits = 0;
  for (size_t i = 0; i < ref->n; i++) {
    if (ref->uncertain && ref->uncertain[i]) {
      r->uncertain++;
      continue;
    }
    r->checked++;
    if (is_float) {
      double v = ref->value[i];
      judge_float(r, i, v, ref->bound[i], tr_tensor_get_f(target, i), opts->k, tiny);
      if (isfinite(v)) {
        vmin = fmin(vmin, v);
        vmax = fmax(vmax, v);
        bmax = fmax(bmax, ref->bound[i]);
      }
      if (!first && v != ref->value[0]) constant = false;
    } else {
      uint64_t want = tr_tensor_get_bits(ref->exact, i), got = tr_tensor_get_bits(target, i);
      if (want != got) {
        double wv = tr_dtypes[ref->dtype].kind == TR_DK_UINT ? (double)tr_tensor_get_u(ref->exact, i)
                                                              : (double)tr_tensor_get_i(ref->exact, i);
        double gv = tr_dtypes[ref->dtype].kind == TR_DK_UINT ? (double)tr_tensor_get_u(target, i)
                                                              : (double)tr_tensor_get_i(target, i);
        fail_at(r, i, wv, gv, 0);
      }
      if (first) first_bits = want;
      else if (want != first_bits) constant = false;
    }
    first = false;
  }
  if (r->failing) {
    r->judgement = TR_JUDGE_MISMATCH;
    return TR_OK;
  }
  r->judgement = TR_JUDGE_PASS;
  /* A check that cannot tell a right answer from a wrong one is weak. */
  if (r->n && (double)r->uncertain > opts->weak_uncertain * (double)r->n) {
    r->weak_reason = "mostly uncertain";
  } else if (r->checked > 1 && constant) {
    r->weak_reason = "constant output";
  } else if (is_float && r->checked && vmax >= vmin && fmax(fabs(vmin), fabs(vmax)) <= opts->k * bmax) {
    r->weak_reason = "values tiny against their bounds";
  }
  if (r->weak_reason) r->judgement = TR_JUDGE_WEAK;
  return TR_OK;
}
