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
  memset(o, 0, sizeof *o); /* strict: no profile, no other references */
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

/* Whether a float target value is within allow of the reference value;
 * *ratio gets |diff| / allow (inf for a NaN or Inf class mismatch). NaN and
 * Inf are judged by class: the reference is certain, so the target must
 * agree. */
static bool float_ok(double value, double target, double allow, double *ratio) {
  *ratio = 0;
  if (isnan(value) || isnan(target)) {
    if (isnan(value) && isnan(target)) return true;
    *ratio = INFINITY;
    return false;
  }
  if (isinf(value) || isinf(target)) {
    if (value == target) return true;
    *ratio = INFINITY;
    return false;
  }
  double diff = fabs(target - value);
  *ratio = diff / allow;
  return diff <= allow;
}

/* One part of a complex element against the reference's: within allow
 * (bound 0: the same value and sign), NaNs alike. */
static bool part_ok(double want, double got, double allow) {
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
  if (allow == 0 || isinf(want)) return want == got && signbit(want) == signbit(got);
  return fabs(got - want) <= allow;
}

/* One part of a complex element a flushing target computed: the same, or
 * finite and within allow (its bound plus the part type's smallest
 * normal). */
static bool part_flush_ok(double want, double got, double allow) {
  if (part_ok(want, got, 0)) return true;
  return isfinite(want) && isfinite(got) && fabs(got - want) <= allow;
}

/* Whether the target's element i matches the exact reference: integers by
 * bits; complex (shadow mode: docs/ORACLE.md "Complex") part by part within
 * k times the element's bound (bound NULL or 0: the same value). */
static bool same_slot(const tr_tensor *ref, const double *bound, double k, const tr_tensor *target,
                      size_t i) {
  if (tr_dtypes[ref->dtype].kind != TR_DK_COMPLEX)
    return tr_tensor_get_bits(ref, i) == tr_tensor_get_bits(target, i);
  double a, b, c, d, allow = bound && bound[i] > 0 ? k * bound[i] : 0;
  tr_tensor_get_c(ref, i, &a, &b);
  tr_tensor_get_c(target, i, &c, &d);
  return part_ok(a, c, allow) && part_ok(b, d, allow);
}

/* Whether another reference (alt) of the same leaf accepts the target's
 * element i: within alt's own bound plus slack, or uncertain under it
 * (the rule's semantics cannot be judged there, so it is not held
 * against the target). */
static bool alt_accepts(const tr_shadow_out *alt, const tr_shadow_out *ref, size_t i,
                        const tr_tensor *target, double k, double slack) {
  if (!alt || alt->n != ref->n || alt->dtype != ref->dtype) return false;
  if (alt->uncertain && alt->uncertain[i]) return true;
  if (alt->value && alt->bound) {
    double ratio;
    return float_ok(alt->value[i], tr_tensor_get_f(target, i), k * alt->bound[i] + slack, &ratio);
  }
  return alt->exact && same_slot(alt->exact, alt->bound, k, target, i);
}

const char *tr_compare_tables_name(void) { return "transcendental-ulps+reciprocal-divide"; }

/* The rule of opts->profile that excuses element i (certain, outside its
 * bound), or -1 for none; -2 for the table rules together. Each rule
 * excuses exactly what docs/PROFILES.md says. */
static int excuse(const tr_compare_opts *o, const tr_shadow_out *ref, size_t i,
                  const tr_tensor *target, double tiny) {
  const tr_profile *p = o->profile;
  if (!p) return -1;
  tr_dtype dt = ref->dtype;
  bool is_float = tr_dtype_is_float(dt) && ref->value && ref->bound;
  if (p->on[TR_PR_DENORMAL_FLUSH]) {
    /* FTZ: a result of a flushed dtype may lose anything below the
     * smallest normal. DAZ: the target may have read denormal inputs as
     * zero (alt, computed only when inputs of a flushed dtype had
     * denormals), whatever the output's dtype, predicates included. */
    double mn = p->flush[dt] ? tr_min_normal(dt) : tiny, ratio;
    if (is_float && p->flush[dt] &&
        float_ok(ref->value[i], tr_tensor_get_f(target, i), o->k * ref->bound[i] + mn, &ratio))
      return TR_PR_DENORMAL_FLUSH;
    if (alt_accepts(o->alt[TR_PR_DENORMAL_FLUSH], ref, i, target, o->k, is_float ? mn : 0))
      return TR_PR_DENORMAL_FLUSH;
    /* A complex element's parts are computed in its part type, flushed
     * like it (XLA CPU: c128 -5e-324 + -5e-324 is -0, c64 1e-40 + 1e-40
     * is 0; docs/PROFILES.md). */
    tr_dtype pt = dt == TR_DT_C64 ? TR_DT_F32 : dt == TR_DT_C128 ? TR_DT_F64 : TR_DT_COUNT;
    if (pt != TR_DT_COUNT && p->flush[pt] && ref->exact) {
      double wr, wi, gr, gi, pmn = tr_min_normal(pt);
      double allow = (ref->bound ? o->k * ref->bound[i] : 0) + pmn;
      tr_tensor_get_c(ref->exact, i, &wr, &wi);
      tr_tensor_get_c(target, i, &gr, &gi);
      if (part_flush_ok(wr, gr, allow) && part_flush_ok(wi, gi, allow)) return TR_PR_DENORMAL_FLUSH;
    }
  }
  /* An element computed from an out-of-range float-to-int convert: the
   * spec gives it no value, so any is right. Only where the reference that
   * leaves those converts undefined is uncertain (and ref is not). */
  const tr_shadow_out *cu = o->alt[TR_PR_CONVERT_OUT_OF_RANGE];
  if (p->on[TR_PR_CONVERT_OUT_OF_RANGE] && cu && cu->n == ref->n && cu->dtype == ref->dtype && cu->uncertain &&
      cu->uncertain[i])
    return TR_PR_CONVERT_OUT_OF_RANGE;
  /* An element computed from an overflow of a narrow dtype that the
   * target may have kept in f32 (excess-precision): only where the
   * reference that lets those overflows not happen is uncertain. */
  const tr_shadow_out *xp = o->alt[TR_PR_EXCESS_PRECISION];
  if (p->on[TR_PR_EXCESS_PRECISION] && xp && xp->n == ref->n && xp->dtype == ref->dtype && xp->uncertain &&
      xp->uncertain[i])
    return TR_PR_EXCESS_PRECISION;
  /* An element computed from a product that overflowed where the target
   * may have fused it into an add (fma-contraction): only where the
   * reference that lets those overflows not happen is uncertain. */
  const tr_shadow_out *fm = o->alt[TR_PR_FMA_CONTRACTION];
  if (p->on[TR_PR_FMA_CONTRACTION] && fm && fm->n == ref->n && fm->dtype == ref->dtype && fm->uncertain &&
      fm->uncertain[i])
    return TR_PR_FMA_CONTRACTION;
  /* Rewrites the target applies: the reference on the rewritten module
   * (integers exactly, floats within its bound). */
  static const tr_prule rewrites[] = {TR_PR_LOG_EXP_FOLD, TR_PR_INT_CONV_WRAP, TR_PR_REDUCE_INIT_IDENTITY,
                                      TR_PR_INT_POWER_UNIT_BASE, TR_PR_SELECT_NAN_ORDER};
  for (int w = 0; w < TR_NELEMS(rewrites); w++)
    if (p->on[rewrites[w]] && alt_accepts(o->alt[rewrites[w]], ref, i, target, o->k, is_float ? tiny : 0))
      return rewrites[w];
  /* int-conv-wrap and denormal-flush at once: the wrapped module as a
   * flushing target computes it (integers exactly, floats with the
   * flush's slack), named after the convolution's rule. */
  if (p->on[TR_PR_INT_CONV_WRAP] && p->on[TR_PR_DENORMAL_FLUSH] &&
      alt_accepts(o->alt_cw_flush, ref, i, target, o->k, !is_float ? 0 : p->flush[dt] ? tr_min_normal(dt) : tiny))
    return TR_PR_INT_CONV_WRAP;
  /* conv-zero-pad only where the explicit padding makes a NaN (0 * inf):
   * its reference also sums the padded zeros, whose count would widen the
   * bound of every border element otherwise. The rewritten reference's
   * value is what counts, certain or not: ref is certain and not NaN
   * here and the modules differ only in the padded taps, so a NaN value
   * there comes from a 0 * inf (or NaN) tap, which is NaN in any order;
   * the shadow only marks such a convolution NaN uncertain as a whole
   * when an operand carries rounding errors (an exp before it). */
  const tr_shadow_out *zp = o->alt[TR_PR_CONV_ZERO_PAD];
  if (p->on[TR_PR_CONV_ZERO_PAD] && is_float && zp && zp->value && zp->n == ref->n &&
      !isnan(ref->value[i]) && isnan(zp->value[i]) && isnan(tr_tensor_get_f(target, i)))
    return TR_PR_CONV_ZERO_PAD;
  /* The same NaN converted to an integer (XLA's NaN -> 0) or compared:
   * an integer or pred element the padded reference gives exactly, where
   * the plain one gives another value (the two differ only through the
   * padded taps, whose zero terms leave a value as it is unless one is
   * 0 * inf). A float made from such an element (a convert of the
   * compare) likewise, where the padded reference's value is exact. */
  if (p->on[TR_PR_CONV_ZERO_PAD] && is_float && zp && zp->value && zp->bound && zp->n == ref->n &&
      !(zp->uncertain && zp->uncertain[i]) && zp->bound[i] == 0 && !isnan(zp->value[i]) &&
      tr_tensor_get_f(target, i) == zp->value[i] && ref->value[i] != zp->value[i])
    return TR_PR_CONV_ZERO_PAD;
  if (p->on[TR_PR_CONV_ZERO_PAD] && !is_float && !tr_dtype_is_float(dt) && zp && zp->exact && ref->exact &&
      zp->n == ref->n && zp->dtype == dt && !(zp->uncertain && zp->uncertain[i]) &&
      same_slot(zp->exact, NULL, 0, target, i) && !same_slot(zp->exact, NULL, 0, ref->exact, i))
    return TR_PR_CONV_ZERO_PAD;
  /* ... and the same where the compare is TOTALORDER, which orders that
   * NaN by its sign, not specified (x86 makes -NaN): where the padded
   * reference with the NaN taken as one sign gives the target's value
   * (certain; a float within its bound, a number: the NaN itself is the
   * rule above) and the plain one another value (a select on such a
   * compare picked the other operand; a sort put the NaN at the other
   * end of its slice and moved the numbers between). The padded taps'
   * zero terms leave every value as it is, so the two values differ only
   * where the NaN's order chose another element. */
  for (int s = 0; s < 2 && p->on[TR_PR_CONV_ZERO_PAD]; s++) {
    const tr_shadow_out *zs = o->alt_zp_sign[s];
    if (!zs || zs->n != ref->n || zs->dtype != dt || (zs->uncertain && zs->uncertain[i])) continue;
    double ratio;
    if (is_float && zs->value && zs->bound && !isnan(zs->value[i]) && ref->value[i] != zs->value[i] &&
        float_ok(zs->value[i], tr_tensor_get_f(target, i), o->k * zs->bound[i] + tiny, &ratio))
      return TR_PR_CONV_ZERO_PAD;
    if (!is_float && !tr_dtype_is_float(dt) && zs->exact && ref->exact && same_slot(zs->exact, NULL, 0, target, i) &&
        !same_slot(zs->exact, NULL, 0, ref->exact, i))
      return TR_PR_CONV_ZERO_PAD;
  }
  /* Both at once: conv-zero-pad's NaN reaching a reduce whose init is no
   * identity for it (an argmax over a size-1 dim, which XLA drops), where
   * that reference leaves the element undefined or agrees with the
   * target. Named after the reduce's rule, the last deviation on the
   * element's path. */
  if (p->on[TR_PR_CONV_ZERO_PAD] && p->on[TR_PR_REDUCE_INIT_IDENTITY] &&
      alt_accepts(o->alt_zp_init, ref, i, target, o->k, is_float ? tiny : 0))
    return TR_PR_REDUCE_INIT_IDENTITY;
  /* An integer or predicate computed from a NaN that a min or max turned
   * into a number (a convert of +inf to u32, a compare): where the
   * NaN-dropping reference gives the target's value exactly and the plain
   * one does not (the two differ only through a min or max that met a
   * NaN; a seed-24 xla-cpu campaign: a reduce-max of 16385 rows holding
   * NaN and inf, converted to u32). */
  const tr_shadow_out *mm = o->alt[TR_PR_FAST_MINMAX];
  if (p->on[TR_PR_FAST_MINMAX] && !is_float && !tr_dtype_is_float(dt) && mm && mm->exact && ref->exact &&
      mm->n == ref->n && mm->dtype == dt && !(mm->uncertain && mm->uncertain[i]) &&
      same_slot(mm->exact, NULL, 0, target, i) && !same_slot(mm->exact, NULL, 0, ref->exact, i))
    return TR_PR_FAST_MINMAX;
  if (!is_float) {
    /* Integers and predicates computed from denormals: only DAZ (above). */
    return -1;
  }
  /* NaN turned into a number (an infinity too: max of {NaN, inf}) only
   * through a min or max: where the target
   * equals the reference of the module whose min/max drop NaN operands
   * (tr_profile_rewrite), which differs from ref only where a min or max
   * is on the element's path. The rewrite touches the min/max of the
   * listed dtypes only; the element may be of any float dtype (a convert
   * of that number to f8: seed-24 xla-cpu campaign). */
  if (p->on[TR_PR_FAST_MINMAX] && isnan(ref->value[i]) &&
      !isnan(tr_tensor_get_f(target, i)) &&
      alt_accepts(o->alt[TR_PR_FAST_MINMAX], ref, i, target, o->k, tiny))
    return TR_PR_FAST_MINMAX;
  /* ... the number being a denormal the target then reads as zero (a
   * denormal bound of a max), or the NaN being the flush's own (a
   * denormal read as zero times inf: the flushed reference is NaN where
   * the plain one is not; a seed-27 xla-cpu campaign, 4e-45 * inf in a
   * reduce-max): with the flush's slack, named after the min/max that
   * made the number. */
  const tr_shadow_out *fl = o->alt[TR_PR_DENORMAL_FLUSH];
  bool flush_nan = fl && fl->value && fl->n == ref->n && fl->dtype == dt && isnan(fl->value[i]);
  if (p->on[TR_PR_FAST_MINMAX] && p->on[TR_PR_DENORMAL_FLUSH] && (isnan(ref->value[i]) || flush_nan) &&
      !isnan(tr_tensor_get_f(target, i)) &&
      alt_accepts(o->alt_mm_flush, ref, i, target, o->k, p->flush[dt] ? tr_min_normal(dt) : tiny))
    return TR_PR_FAST_MINMAX;
  /* ... and a number that a compare of such a number chose (a select on
   * it; a seed-28 xla-cpu campaign: select(reduce-min > c, reduce-min,
   * p) over a row of NaNs, the reduce giving its init +inf and the
   * select +inf where the reference picks p): where the NaN-dropping
   * reference accepts the target's value and its own value differs from
   * the plain one's (both certain: the two modules differ only through a
   * min or max that met a NaN, so that is what made the difference;
   * mm as for integers above). */
  if (p->on[TR_PR_FAST_MINMAX] && !isnan(ref->value[i]) && mm && mm->value && mm->n == ref->n &&
      mm->dtype == dt && !(mm->uncertain && mm->uncertain[i]) && !(ref->uncertain && ref->uncertain[i]) &&
      !isnan(mm->value[i]) && mm->value[i] != ref->value[i] && alt_accepts(mm, ref, i, target, o->k, tiny))
    return TR_PR_FAST_MINMAX;
  static const tr_prule tables[] = {TR_PR_TRANSCENDENTAL_ULPS, TR_PR_RECIPROCAL_DIVIDE};
  for (int t = 0; t < TR_NELEMS(tables); t++)
    if (p->on[tables[t]] && alt_accepts(o->alt[tables[t]], ref, i, target, o->k, tiny))
      return tables[t];
  if ((p->on[TR_PR_TRANSCENDENTAL_ULPS] || p->on[TR_PR_RECIPROCAL_DIVIDE]) &&
      alt_accepts(o->alt_tables, ref, i, target, o->k, tiny))
    return -2;
  if (p->on[TR_PR_FLUSH_RESULTS] && o->result_flush[dt]) {
    /* An op whose small results the target flushes: FTZ for modules
     * with that op only (the last resort, as it is the widest). */
    double ratio;
    if (float_ok(ref->value[i], tr_tensor_get_f(target, i), o->k * ref->bound[i] + tr_min_normal(dt), &ratio))
      return TR_PR_FLUSH_RESULTS;
  }
  /* ... and through the ops after it: where the target agrees with the
   * reference whose flushable results may be 0 (alt). */
  if (p->on[TR_PR_FLUSH_RESULTS] && alt_accepts(o->alt[TR_PR_FLUSH_RESULTS], ref, i, target, o->k, tiny))
    return TR_PR_FLUSH_RESULTS;
  return -1;
}

/* Counts an excuse, or records the failure when there is none. */
static void settle(tr_compare_result *r, int why, size_t i, double value, double target,
                   double allow) {
  if (why == -1) {
    fail_at(r, i, value, target, allow);
    return;
  }
  r->excused++;
  if (why == -2) r->excused_tables++;
  else r->excused_by[why]++;
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
      double allow = opts->k * ref->bound[i] + tiny, ratio, t = tr_tensor_get_f(target, i);
      if (!float_ok(v, t, allow, &ratio)) {
        int why = excuse(opts, ref, i, target, tiny);
        settle(r, why, i, v, t, allow);
        if (why != -1) ratio = 0; /* an excused element is not the worst one */
      }
      if (ratio > r->worst_ratio) {
        r->worst_ratio = ratio;
        r->worst_index = i;
      }
      if (isfinite(v)) {
        vmin = fmin(vmin, v);
        vmax = fmax(vmax, v);
        bmax = fmax(bmax, ref->bound[i]);
      }
      if (!first && v != ref->value[0]) constant = false;
    } else {
      bool cplx = tr_dtypes[ref->dtype].kind == TR_DK_COMPLEX;
      uint64_t want = cplx ? 0 : tr_tensor_get_bits(ref->exact, i);
      int cwhy = -1; /* the rule that excused a complex element, if one did */
      if (cplx && !same_slot(ref->exact, ref->bound, opts->k, target, i)) {
        double wr, wi, gr, gi; /* reported by real part */
        tr_tensor_get_c(ref->exact, i, &wr, &wi);
        tr_tensor_get_c(target, i, &gr, &gi);
        cwhy = excuse(opts, ref, i, target, 0);
        settle(r, cwhy, i, wr, gr, 0);
      } else if (!cplx && want != tr_tensor_get_bits(target, i)) {
        double wv = tr_dtypes[ref->dtype].kind == TR_DK_UINT ? (double)tr_tensor_get_u(ref->exact, i)
                                                              : (double)tr_tensor_get_i(ref->exact, i);
        double gv = tr_dtypes[ref->dtype].kind == TR_DK_UINT ? (double)tr_tensor_get_u(target, i)
                                                              : (double)tr_tensor_get_i(target, i);
        settle(r, excuse(opts, ref, i, target, 0), i, wv, gv, 0);
      }
      if (cplx && cwhy == -1 && ref->bound && ref->bound[i] > 0) { /* excused: not the worst */
        /* the worst part's distance in units of its allowance */
        double wr, wi, gr, gi, al = opts->k * ref->bound[i];
        tr_tensor_get_c(ref->exact, i, &wr, &wi);
        tr_tensor_get_c(target, i, &gr, &gi);
        double ratio = fmax(fabs(gr - wr), fabs(gi - wi)) / al;
        if (isfinite(ratio) && ratio > r->worst_ratio) {
          r->worst_ratio = ratio;
          r->worst_index = i;
        }
      }
      if (cplx) constant = false; /* not tracked for complex */
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
  } else if (is_float && r->checked && vmax >= vmin && bmax > 0 &&
             fmax(fabs(vmin), fabs(vmax)) <= opts->k * bmax) {
    /* (bounds of 0 judge exactly, zeros included) */
    r->weak_reason = "values tiny against their bounds";
  }
  if (r->weak_reason) r->judgement = TR_JUDGE_WEAK;
  return TR_OK;
}
