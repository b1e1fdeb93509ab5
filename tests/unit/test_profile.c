/* test_profile.c - target semantic profiles: the config parser (a good
 * file, each kind of error with file:line:col), the ulp table a profile
 * builds, and each rule's excuse in the comparison on hand-made shadow
 * outputs (values, bounds and uncertain flags written directly). */
#include "../../src/eval/eval.h"
#include "../../src/oracle/alts.h"
#include "../../src/oracle/compare.h"
#include "../../src/oracle/profile.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

static tr_profile *parse_ok(const char *text) {
  tr_diag d = {0};
  tr_profile *p = NULL;
  tr_status s = tr_profile_parse("p.conf", text, strlen(text), &p, &d);
  if (s != TR_OK) tr_diag_print(&d, stderr);
  CHECK_EQ_INT(s, TR_OK);
  tr_diag_clear(&d);
  return p;
}

/* The first message of a failing parse ("" when it parsed). */
static void parse_err(const char *text, const char *want) {
  tr_diag d = {0};
  tr_profile *p = NULL;
  tr_status s = tr_profile_parse("p.conf", text, strlen(text), &p, &d);
  CHECK_EQ_INT(s, TR_ERR_SYNTAX);
  CHECK(p == NULL);
  CHECK_CONTAINS(tr_diag_first(&d), want);
  tr_diag_clear(&d);
  tr_profile_free(p);
}

TR_TEST(profile_parse_good) {
  tr_profile *p = parse_ok("# a comment\n"
                           "target xla-cpu   # trailing comment\n"
                           "\n"
                           "  denormal-flush f32 f64\tbf16\r\n"
                           "fast-minmax f32\n"
                           "transcendental-ulps f32 tanh=7 erf=6.5\n"
                           "transcendental-ulps f64 tanh=10\n"
                           "reciprocal-divide f32=2 bf16=1\n"
                           "fma-contraction covered\n"
                           "reordered-reduction covered\n"
                           "log-exp-fold f32 f16\n"
                           "int-conv-wrap s8 u16\n"
                           "flush-results f16 logistic tanh\n"
                           "conv-zero-pad f32 bf16\n"
                           "narrow-in-f32 bf16\n"
                           "dot-accumulate bf16=f32 f16=f64\n"
                           "reduce-init-identity documented\n"
                           "convert-out-of-range u8 s4\n"
                           "int-power-unit-base s8 s64\n"
                           "select-nan-order documented\n"
                           "excess-precision f16\n");
  if (!p) return;
  CHECK_STR(p->target, "xla-cpu");
  CHECK(p->excess[TR_DT_F16] && !p->excess[TR_DT_BF16]);
  CHECK(p->ipow_unit[TR_DT_S8] && p->ipow_unit[TR_DT_S64] && !p->ipow_unit[TR_DT_S32]);
  CHECK(p->cvt_undef[TR_DT_U8] && p->cvt_undef[TR_DT_S4] && !p->cvt_undef[TR_DT_S8]);
  CHECK_STR(p->file, "p.conf");
  for (int r = 0; r < TR_PR_COUNT; r++) CHECK(p->on[r]);
  CHECK(p->flush[TR_DT_F32] && p->flush[TR_DT_F64] && p->flush[TR_DT_BF16]);
  CHECK(!p->flush[TR_DT_F16]);
  CHECK(p->minmax[TR_DT_F32] && !p->minmax[TR_DT_F64]);
  CHECK(p->fold[TR_DT_F32] && p->fold[TR_DT_F16] && !p->fold[TR_DT_F64]);
  CHECK(p->wrap[TR_DT_S8] && p->wrap[TR_DT_U16] && !p->wrap[TR_DT_S32]);
  CHECK(p->zpad[TR_DT_F32] && p->zpad[TR_DT_BF16] && !p->zpad[TR_DT_F64]);
  CHECK(p->flushres[TR_OP_LOGISTIC][TR_DT_F16] && p->flushres[TR_OP_TANH][TR_DT_F16]);
  CHECK(p->narrow[TR_DT_BF16] && !p->narrow[TR_DT_F16]);
  CHECK(p->dot_acc[TR_DT_BF16] == TR_DT_F32 && p->dot_acc[TR_DT_F16] == TR_DT_F64);
  CHECK(p->dot_acc[TR_DT_F32] == TR_DT_PRED);
  /* The input rules of per-instruction checks: half an ulp where named. */
  CHECK(tr_profile_input_ulps(p, TR_PR_NARROW_IN_F32, TR_DT_BF16) == 0.5);
  CHECK(tr_profile_input_ulps(p, TR_PR_NARROW_IN_F32, TR_DT_F16) == 0);
  CHECK(tr_profile_input_ulps(p, TR_PR_FMA_CONTRACTION, TR_DT_F32) == 0.5);
  CHECK(tr_profile_input_ulps(p, TR_PR_FMA_CONTRACTION, TR_DT_S32) == 0);
  CHECK(tr_profile_input_ulps(NULL, TR_PR_NARROW_IN_F32, TR_DT_BF16) == 0);
  CHECK(!p->flushres[TR_OP_LOGISTIC][TR_DT_F32] && !p->flushres[TR_OP_EXPONENTIAL][TR_DT_F16]);
  CHECK(p->ulps[TR_OP_TANH][TR_DT_F32] == 7.0f);
  CHECK(p->ulps[TR_OP_ERF][TR_DT_F32] == 6.5f);
  CHECK(p->ulps[TR_OP_TANH][TR_DT_F64] == 10.0f);
  CHECK(p->ulps[TR_OP_DIVIDE][TR_DT_F32] == 2.0f);
  CHECK_EQ_INT(p->ulps_rule[TR_OP_DIVIDE][TR_DT_BF16], TR_PR_RECIPROCAL_DIVIDE);
  CHECK_EQ_INT(p->ulps_rule[TR_OP_ERF][TR_DT_F32], TR_PR_TRANSCENDENTAL_ULPS);
  /* The table: each rule alone, both, and never narrower than the default. */
  tr_ulp_table def, t;
  tr_ulp_table_default(&def);
  tr_profile_ulp_table(p, 1u << TR_PR_TRANSCENDENTAL_ULPS, &t);
  CHECK(t.ulps[TR_OP_TANH][TR_DT_F32] == 7.0f);
  CHECK(t.ulps[TR_OP_DIVIDE][TR_DT_F32] == def.ulps[TR_OP_DIVIDE][TR_DT_F32]);
  tr_profile_ulp_table(p, 1u << TR_PR_RECIPROCAL_DIVIDE, &t);
  CHECK(t.ulps[TR_OP_TANH][TR_DT_F32] == def.ulps[TR_OP_TANH][TR_DT_F32]);
  CHECK(t.ulps[TR_OP_DIVIDE][TR_DT_F32] == 2.0f);
  tr_profile_ulp_table(p, ~0u, &t);
  CHECK(t.ulps[TR_OP_TANH][TR_DT_F32] == 7.0f && t.ulps[TR_OP_DIVIDE][TR_DT_BF16] == 1.0f);
  tr_profile_ulp_table(NULL, ~0u, &t);
  CHECK(memcmp(&t, &def, sizeof t) == 0);
  CHECK(tr_profile_widens(p, TR_PR_TRANSCENDENTAL_ULPS, TR_OP_TANH, TR_DT_F32));
  CHECK(!tr_profile_widens(p, TR_PR_RECIPROCAL_DIVIDE, TR_OP_TANH, TR_DT_F32));
  CHECK(!tr_profile_widens(p, TR_PR_TRANSCENDENTAL_ULPS, TR_OP_EXPONENTIAL, TR_DT_F32));
  tr_profile_free(p);
  /* A value below the default does not narrow it. */
  p = parse_ok("transcendental-ulps f32 exponential=1\n");
  if (p) {
    tr_profile_ulp_table(p, ~0u, &t);
    CHECK(t.ulps[TR_OP_EXPONENTIAL][TR_DT_F32] == def.ulps[TR_OP_EXPONENTIAL][TR_DT_F32]);
    CHECK(!tr_profile_widens(p, TR_PR_TRANSCENDENTAL_ULPS, TR_OP_EXPONENTIAL, TR_DT_F32));
    tr_profile_free(p);
  }
  /* Empty and comment-only files are valid, empty profiles. */
  p = parse_ok("");
  if (p) CHECK(!p->on[TR_PR_DENORMAL_FLUSH] && p->target == NULL);
  tr_profile_free(p);
  p = parse_ok("# nothing\n   \n");
  tr_profile_free(p);
  CHECK_STR(tr_prule_name(TR_PR_FAST_MINMAX), "fast-minmax");
  tr_prule r;
  CHECK(tr_prule_lookup("reciprocal-divide", 17, &r) && r == TR_PR_RECIPROCAL_DIVIDE);
  CHECK(!tr_prule_lookup("reciprocal", 10, &r));
}

TR_TEST(profile_parse_errors) {
  parse_err("denormal-flush f32\nfrobnicate\n", "p.conf:2:1: error: unknown rule 'frobnicate'");
  parse_err("denormal-flush\n", "p.conf:1:1: error: 'denormal-flush' needs the dtypes");
  parse_err("fast-minmax f32 f33\n", "p.conf:1:17: error: 'f33' is not a dtype");
  parse_err("\n\ndenormal-flush s32\n", "p.conf:3:16: error: 's32' is not a float dtype");
  parse_err("transcendental-ulps f32\n", "p.conf:1:1: error: 'transcendental-ulps' needs a dtype and OP=ULPS");
  parse_err("transcendental-ulps f32 tanh\n", "p.conf:1:25: error: expected OP=ULPS, not 'tanh'");
  parse_err("transcendental-ulps f32 tahn=3\n", "p.conf:1:25: error: 'tahn' is not an opcode");
  parse_err("transcendental-ulps f32 tanh=-1\n", "p.conf:1:30: error: '-1' is not an ulp count");
  parse_err("transcendental-ulps f32 tanh=\n", "is not an ulp count");
  parse_err("transcendental-ulps f32 tanh=3x\n", "p.conf:1:30: error: '3x' is not an ulp count");
  parse_err("transcendental-ulps u8 tanh=3\n", "p.conf:1:21: error: 'u8' is not a float dtype");
  parse_err("reciprocal-divide f32\n", "p.conf:1:19: error: expected DTYPE=ULPS, not 'f32'");
  parse_err("reciprocal-divide\n", "p.conf:1:1: error: 'reciprocal-divide' needs DTYPE=ULPS");
  parse_err("reciprocal-divide f77=2\n", "p.conf:1:19: error: 'f77' is not a dtype");
  parse_err("fma-contraction\n", "p.conf:1:1: error: 'fma-contraction' takes one word, 'covered'");
  parse_err("reordered-reduction yes\n", "'reordered-reduction' takes one word, 'covered'");
  parse_err("target\n", "p.conf:1:1: error: 'target' takes one name");
  parse_err("log-exp-fold\n", "p.conf:1:1: error: 'log-exp-fold' needs the dtypes");
  parse_err("log-exp-fold s8\n", "p.conf:1:14: error: 's8' is not a float dtype");
  parse_err("int-conv-wrap f32\n", "p.conf:1:15: error: 'f32' is not an integer dtype narrower than 64 bits");
  parse_err("int-conv-wrap s64\n", "'s64' is not an integer dtype narrower than 64 bits");
  parse_err("int-conv-wrap q8\n", "p.conf:1:15: error: 'q8' is not a dtype");
  parse_err("conv-zero-pad s32\n", "p.conf:1:15: error: 's32' is not a float dtype");
  parse_err("flush-results f16\n", "p.conf:1:1: error: 'flush-results' needs a dtype and the opcodes");
  parse_err("flush-results f16 logistc\n", "p.conf:1:19: error: 'logistc' is not an opcode");
  parse_err("target a\ntarget b\n", "p.conf:2:1: error: a second 'target' line");
  parse_err("narrow-in-f32\n", "p.conf:1:1: error: 'narrow-in-f32' needs the dtypes");
  parse_err("narrow-in-f32 bf16 f32\n", "p.conf:1:20: error: 'f32' is not narrower than f32");
  parse_err("narrow-in-f32 s8\n", "p.conf:1:15: error: 's8' is not a float dtype");
  parse_err("dot-accumulate\n", "p.conf:1:1: error: 'dot-accumulate' needs DTYPE=ACC pairs");
  parse_err("dot-accumulate bf16\n", "p.conf:1:16: error: expected DTYPE=ACC, not 'bf16'");
  parse_err("dot-accumulate f32=f16\n", "p.conf:1:20: error: 'f16' is not wider than 'f32'");
  parse_err("dot-accumulate bf16=s32\n", "p.conf:1:21: error: 's32' is not a float dtype");
  /* Every bad line is reported, not only the first. */
  tr_diag d = {0};
  tr_profile *p = NULL;
  const char *text = "bogus\nfast-minmax q\n";
  CHECK_EQ_INT(tr_profile_parse("p.conf", text, strlen(text), &p, &d), TR_ERR_SYNTAX);
  CHECK_EQ_INT(d.nmsgs, 2);
  tr_diag_clear(&d);
  /* A missing file is an I/O error naming it. */
  CHECK_EQ_INT(tr_profile_load("/nonexistent/x.conf", &p, &d), TR_ERR_IO);
  CHECK(p == NULL);
  CHECK_CONTAINS(tr_diag_first(&d), "/nonexistent/x.conf");
  tr_diag_clear(&d);
}

/* ---- the rules on synthetic shadow outputs ---- */

typedef struct {
  tr_shadow_out o;
  int64_t dim;
} fake_out;

/* A rank-1 float leaf with the given values and bounds, all certain. */
static void fake_float(fake_out *f, tr_dtype dt, const double *v, const double *b, int n) {
  memset(f, 0, sizeof *f);
  f->dim = n;
  f->o.dtype = dt;
  f->o.rank = 1;
  f->o.dims = &f->dim;
  f->o.n = (size_t)n;
  f->o.value = malloc(sizeof(double) * (size_t)n);
  f->o.bound = malloc(sizeof(double) * (size_t)n);
  f->o.uncertain = calloc((size_t)n, 1);
  f->o.exact = tr_tensor_new(dt, 1, &f->dim, NULL);
  for (int i = 0; i < n; i++) {
    f->o.value[i] = v[i];
    f->o.bound[i] = b[i];
    tr_tensor_set_f(f->o.exact, (size_t)i, v[i]);
  }
}

static void fake_free(fake_out *f) {
  free(f->o.value);
  free(f->o.bound);
  free(f->o.uncertain);
  tr_tensor_free(f->o.exact);
}

static tr_tensor *vec(tr_dtype dt, const double *v, int n) {
  int64_t dim = n;
  tr_tensor *t = tr_tensor_new(dt, 1, &dim, NULL);
  for (int i = 0; i < n; i++) tr_tensor_set_f(t, (size_t)i, v[i]);
  return t;
}

/* The judgement of target t against reference ref under options o. */
static tr_compare_result judge_ref(const tr_shadow_out *ref, const tr_tensor *t, const tr_compare_opts *o) {
  tr_compare_result r;
  memset(&r, 0, sizeof r);
  tr_diag d = {0};
  CHECK_EQ_INT(tr_compare_output(ref, t, o, &r, &d), TR_OK);
  tr_diag_clear(&d);
  return r;
}

static tr_compare_result judge(const fake_out *ref, const tr_tensor *t, const tr_compare_opts *o) {
  return judge_ref(&ref->o, t, o);
}

/* ---- a module's references, for judging targets under a profile ---- */

/* A module evaluated on its inputs: the plain shadow reference of each
 * output and the other references profile p's rules need (none for p
 * NULL). */
typedef struct {
  tr_diag d;
  const tr_profile *p;
  tr_module *m;
  tr_shadow_out *ref;
  int nref;
  tr_profile_alts alts;
} ref_run;

/* Parses and verifies src, evaluates its reference on ins and computes
 * p's other references, CHECKing each step and that there are nout
 * outputs. False when there is nothing to judge; run_close frees h
 * either way. */
static bool run_open(ref_run *h, const tr_profile *p, const char *src, tr_tensor **ins, int nins, int nout) {
  memset(h, 0, sizeof *h);
  h->p = p;
  h->m = tr_parse("run.hlo", src, strlen(src), NULL, &h->d);
  CHECK(h->m != NULL);
  if (!h->m) return false;
  tr_status s = tr_verify(h->m, &h->d);
  CHECK_EQ_INT(s, TR_OK);
  if (s != TR_OK) return false;
  CHECK_EQ_INT(tr_eval_shadow(h->m, NULL, ins, nins, &h->ref, &h->nref, &h->d), TR_OK);
  CHECK_EQ_INT(h->nref, nout);
  tr_profile_alts_compute(p, h->m, ins, nins, NULL, &h->alts);
  return h->nref == nout;
}

/* Options that judge output k strictly (nothing excused) or under the
 * profile with its references for k; a test may drop some after. */
static void run_opts(const ref_run *h, int k, bool profile, tr_compare_opts *o) {
  tr_compare_opts_default(o);
  if (!profile) return;
  o->profile = h->p;
  tr_profile_alts_use(&h->alts, k, o);
}

/* The judgement of target t against output k, strict or under the profile. */
static tr_compare_result run_judge(const ref_run *h, int k, const tr_tensor *t, bool profile) {
  tr_compare_opts o;
  run_opts(h, k, profile, &o);
  return judge_ref(&h->ref[k], t, &o);
}

/* A target in output k's dims: dtype dt, values v (truncated to integers
 * for an integer dtype). */
static tr_tensor *run_target(const ref_run *h, int k, tr_dtype dt, const double *v) {
  tr_tensor *t = tr_tensor_new(dt, h->ref[k].rank, h->ref[k].dims, NULL);
  for (size_t i = 0; i < h->ref[k].n; i++) {
    if (tr_dtype_is_float(dt)) tr_tensor_set_f(t, i, v[i]);
    else tr_tensor_set_i(t, i, (int64_t)v[i]);
  }
  return t;
}

/* Frees what run_open made (not the profile or the inputs). */
static void run_close(ref_run *h) {
  tr_profile_alts_free(&h->alts);
  tr_shadow_free(h->ref, h->nref);
  tr_module_free(h->m);
  tr_diag_clear(&h->d);
}

TR_TEST(profile_rule_denormal_flush) {
  tr_profile *p = parse_ok("denormal-flush f32\n");
  if (!p) return;
  double mn = ldexp(1.0, -126);
  /* 0: a denormal flushed to 0 (FTZ); 1: a small normal whose last bits
   * went with a flushed term; 2: a normal value off by much more than
   * min_normal allows; 3: exact. */
  double v[] = {4.6e-39, 3 * mn, 1.0, 2.0};
  double b[] = {1e-45, 1e-45, 1e-7, 1e-7};
  double t[] = {0.0, 3 * mn - 0.75 * mn, 1.001, 2.0};
  fake_out ref;
  fake_float(&ref, TR_DT_F32, v, b, 4);
  tr_tensor *tt = vec(TR_DT_F32, t, 4);
  tr_compare_opts o;
  tr_compare_opts_default(&o);
  tr_compare_result r = judge(&ref, tt, &o); /* strict */
  CHECK_EQ_INT(r.failing, 3);
  CHECK_EQ_INT(r.excused, 0);
  o.profile = p;
  r = judge(&ref, tt, &o);
  CHECK_EQ_INT(r.failing, 1);
  CHECK_EQ_INT(r.first_fail, 2);
  CHECK_EQ_INT(r.excused, 2);
  CHECK_EQ_INT(r.excused_by[TR_PR_DENORMAL_FLUSH], 2);
  /* The worst ratio is that of the unexcused failure, not of the flush. */
  CHECK(r.worst_index == 2);
  /* A dtype the rule does not name gets nothing. */
  fake_out r64;
  fake_float(&r64, TR_DT_F64, v, b, 4);
  tr_tensor *t64 = vec(TR_DT_F64, t, 4);
  r = judge(&r64, t64, &o);
  CHECK_EQ_INT(r.excused, 0);
  CHECK_EQ_INT(r.failing, 3);
  /* DAZ: element 2's reference on flushed inputs (alt) is 1.001: the
   * target computed from a denormal input read as zero. */
  double va[] = {0.0, 3 * mn, 1.001, 2.0};
  fake_out alt;
  fake_float(&alt, TR_DT_F32, va, b, 4);
  o.alt[TR_PR_DENORMAL_FLUSH] = &alt.o;
  r = judge(&ref, tt, &o);
  CHECK_EQ_INT(r.failing, 0);
  CHECK_EQ_INT(r.excused_by[TR_PR_DENORMAL_FLUSH], 3);
  CHECK_EQ_INT(r.judgement, TR_JUDGE_PASS);
  /* An element uncertain under the DAZ reference is not held against the target. */
  alt.o.value[2] = 5.0;
  r = judge(&ref, tt, &o);
  CHECK_EQ_INT(r.failing, 1);
  alt.o.uncertain[2] = 1;
  r = judge(&ref, tt, &o);
  CHECK_EQ_INT(r.failing, 0);
  /* NaN/Inf classes still count: NaN where the reference is finite fails. */
  tr_tensor_set_f(tt, 3, NAN);
  r = judge(&ref, tt, &o);
  CHECK_EQ_INT(r.failing, 1);
  CHECK_EQ_INT(r.first_fail, 3);
  fake_free(&ref);
  fake_free(&r64);
  fake_free(&alt);
  tr_tensor_free(tt);
  tr_tensor_free(t64);
  tr_profile_free(p);
}

TR_TEST(profile_rule_denormal_flush_complex) {
  /* A c128 sum whose real part is a denormal (-2 * 2^-1074): XLA CPU
   * gives -0 (FTZ in f64, its part type); an imaginary part off by more
   * than a denormal is still wrong; c128 under a profile flushing only
   * f32 gets nothing. */
  tr_profile *p = parse_ok("denormal-flush f64\n");
  tr_profile *p32 = parse_ok("denormal-flush f32\n");
  if (!p || !p32) return;
  int64_t dim = 2;
  double d = -ldexp(1.0, -1073);
  fake_out ref;
  memset(&ref, 0, sizeof ref);
  ref.dim = 2;
  ref.o.dtype = TR_DT_C128;
  ref.o.rank = 1;
  ref.o.dims = &ref.dim;
  ref.o.n = 2;
  double bz[] = {0, 0};
  ref.o.bound = bz;
  ref.o.exact = tr_tensor_new(TR_DT_C128, 1, &dim, NULL);
  tr_tensor_set_c(ref.o.exact, 0, d, 3.0);
  tr_tensor_set_c(ref.o.exact, 1, d, 3.0);
  tr_tensor *t = tr_tensor_new(TR_DT_C128, 1, &dim, NULL);
  tr_tensor_set_c(t, 0, -0.0, 3.0);
  tr_tensor_set_c(t, 1, -0.0, 3.5);
  tr_compare_opts o;
  tr_compare_opts_default(&o);
  tr_compare_result r = judge(&ref, t, &o); /* strict */
  CHECK_EQ_INT(r.failing, 2);
  o.profile = p;
  r = judge(&ref, t, &o);
  CHECK_EQ_INT(r.failing, 1);
  CHECK_EQ_INT(r.first_fail, 1);
  CHECK_EQ_INT(r.excused_by[TR_PR_DENORMAL_FLUSH], 1);
  o.profile = p32;
  r = judge(&ref, t, &o);
  CHECK_EQ_INT(r.failing, 2);
  tr_tensor_free(ref.o.exact);
  tr_tensor_free(t);
  tr_profile_free(p);
  tr_profile_free(p32);
}

TR_TEST(profile_rule_denormal_flush_predicates) {
  /* compare(denormal, 0) under DAZ: false where the reference says true. */
  tr_profile *p = parse_ok("denormal-flush f32\n");
  if (!p) return;
  int64_t dim = 2;
  fake_out ref, alt;
  memset(&ref, 0, sizeof ref);
  ref.dim = 2;
  ref.o.dtype = TR_DT_PRED;
  ref.o.rank = 1;
  ref.o.dims = &ref.dim;
  ref.o.n = 2;
  ref.o.exact = tr_tensor_new(TR_DT_PRED, 1, &dim, NULL);
  tr_tensor_set_f(ref.o.exact, 0, 1);
  tr_tensor_set_f(ref.o.exact, 1, 1);
  alt = ref;
  alt.o.dims = &alt.dim;
  alt.o.exact = tr_tensor_new(TR_DT_PRED, 1, &dim, NULL);
  tr_tensor_set_f(alt.o.exact, 1, 1);
  tr_tensor *t = tr_tensor_new(TR_DT_PRED, 1, &dim, NULL);
  tr_compare_opts o;
  tr_compare_opts_default(&o);
  o.profile = p;
  tr_compare_result r = judge(&ref, t, &o);
  CHECK_EQ_INT(r.failing, 2); /* nothing to go on without the DAZ reference */
  o.alt[TR_PR_DENORMAL_FLUSH] = &alt.o;
  r = judge(&ref, t, &o);
  CHECK_EQ_INT(r.failing, 1); /* element 1 is true on flushed inputs too */
  CHECK_EQ_INT(r.first_fail, 1);
  CHECK_EQ_INT(r.excused_by[TR_PR_DENORMAL_FLUSH], 1);
  tr_tensor_free(ref.o.exact);
  tr_tensor_free(alt.o.exact);
  tr_tensor_free(t);
  tr_profile_free(p);
}

TR_TEST(profile_rule_fast_minmax) {
  tr_profile *p = parse_ok("fast-minmax f32\n");
  if (!p) return;
  /* NaN reference: a number is excused only where the reference of the
   * module whose min/max drop NaN (alt) gives that value, i.e. where a
   * min or max is on the element's path: an inf too where the other
   * elements hold one (element 5: max over 2501 rows with NaNs and +inf,
   * a 10-minute xla-cpu campaign), but not XLA's init -inf where the
   * others give 2 (a reduce with a NaN last: a bug to see); NaN is a
   * plain pass; a finite reference with a NaN target fails. */
  double v[] = {NAN, NAN, NAN, 1.0, NAN, NAN};
  double b[] = {0, 0, 0, 1e-7, 0, 0};
  double t[] = {8191.0, -INFINITY, NAN, NAN, 3.0, INFINITY};
  double av[] = {8191.0, 2.0, NAN, 1.0, NAN, INFINITY}; /* element 4: no min/max on its path */
  fake_out ref, alt;
  fake_float(&ref, TR_DT_F32, v, b, 6);
  fake_float(&alt, TR_DT_F32, av, b, 6);
  tr_tensor *tt = vec(TR_DT_F32, t, 6);
  tr_compare_opts o;
  tr_compare_opts_default(&o);
  tr_compare_result r = judge(&ref, tt, &o);
  CHECK_EQ_INT(r.failing, 5);
  o.profile = p;
  r = judge(&ref, tt, &o);
  CHECK_EQ_INT(r.failing, 5); /* no min/max reference: nothing excused */
  o.alt[TR_PR_FAST_MINMAX] = &alt.o;
  r = judge(&ref, tt, &o);
  CHECK_EQ_INT(r.failing, 3);
  CHECK_EQ_INT(r.first_fail, 1);
  CHECK_EQ_INT(r.excused_by[TR_PR_FAST_MINMAX], 2);
  fake_free(&ref);
  fake_free(&alt);
  tr_tensor_free(tt);
  tr_profile_free(p);
}

/* fast-minmax and denormal-flush at once: a maximum that drops its NaN
 * operand for a denormal constant, which the flushing target then reads
 * as -0. Neither rule's reference alone gives -0 (the NaN-dropping one
 * gives the denormal, the flushing one NaN); the module as fast-minmax
 * leaves it evaluated as a flushing target does. A number other than
 * that zero stays a mismatch. */
TR_TEST(profile_fast_minmax_under_flush) {
  tr_profile *p = parse_ok("denormal-flush f32\nfast-minmax f32\n");
  if (!p) return;
  static const char *src = "HloModule m\nENTRY e {\n  a = f32[3] parameter(0)\n"
                           "  c = f32[3] constant({-1.17549421e-38, -1.17549421e-38, 2})\n"
                           "  ROOT x = f32[3] maximum(a, c)\n}\n";
  double av[] = {NAN, NAN, NAN};
  tr_tensor *a = vec(TR_DT_F32, av, 3);
  ref_run h;
  if (run_open(&h, p, src, &a, 1, 1)) {
    CHECK(h.alts.mm_flush != NULL && h.alts.nmm_flush == 1);
    double tv[] = {-0.0, 0.5, 2};
    tr_tensor *t = vec(TR_DT_F32, tv, 3);
    tr_compare_result r = run_judge(&h, 0, t, true);
    CHECK_EQ_INT(r.failing, 1); /* [1]: 0.5 is no flushed -1.2e-38 */
    CHECK_EQ_INT(r.first_fail, 1);
    CHECK_EQ_INT(r.excused_by[TR_PR_FAST_MINMAX], 2);
    tr_compare_opts o;
    run_opts(&h, 0, true, &o);
    o.alt_mm_flush = NULL; /* each rule alone: [0] is judged too */
    r = judge_ref(&h.ref[0], t, &o);
    CHECK_EQ_INT(r.failing, 2);
    tr_tensor_free(t);
  }
  run_close(&h);
  tr_tensor_free(a);
  /* The NaN made by the flush itself (a seed-27 xla-cpu campaign: a
   * reduce-max of 4e-45 * inf and -0.04 gave -0.04): the denormal read
   * as 0 times inf is NaN on the target, which a NaN-dropping max then
   * skips, where the plain reference's product is inf. Excused under
   * both rules at once; a value the combined reference does not give
   * still fails; neither rule alone excuses it. (In a reduce the NaN's
   * place in the order decides, so the combined reference is uncertain
   * there.) */
  static const char *mx =
      "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  c = f32[2] constant({4e-45, 0.45925})\n"
      "  m = f32[2] multiply(c, x)\n  y = f32[2] constant({-0.0397802666, 7})\n"
      "  ROOT r = f32[2] maximum(m, y)\n}\n";
  double xv[] = {INFINITY, 2};
  tr_tensor *x = vec(TR_DT_F32, xv, 2);
  if (run_open(&h, p, mx, &x, 1, 1)) {
    CHECK(h.ref[0].value[0] == INFINITY);
    double got[] = {-0.0397802666, 7}, off[] = {-0.5, 7};
    for (int k = 0; k < 2; k++) {
      tr_tensor *t = vec(TR_DT_F32, k ? off : got, 2);
      tr_compare_result r = run_judge(&h, 0, t, true);
      CHECK_EQ_INT(r.failing, k);
      CHECK_EQ_INT(r.excused_by[TR_PR_FAST_MINMAX], !k);
      tr_tensor_free(t);
    }
    tr_profile *one[2] = {parse_ok("denormal-flush f32\n"), parse_ok("fast-minmax f32\n")};
    for (int k = 0; k < 2; k++) {
      if (!one[k]) continue;
      ref_run g;
      tr_tensor *t = vec(TR_DT_F32, got, 2);
      if (run_open(&g, one[k], mx, &x, 1, 1)) CHECK_EQ_INT(run_judge(&g, 0, t, true).failing, 1);
      run_close(&g);
      tr_tensor_free(t);
      tr_profile_free(one[k]);
    }
  }
  run_close(&h);
  tr_tensor_free(x);
  tr_profile_free(p);
}

/* fast-minmax reaches outputs of any float dtype: a NaN-dropping f32
 * maximum converted to f8e5m2 (not a listed dtype) is excused where the
 * target equals the rewritten module's value, and judged elsewhere (a
 * seed-24 xla-cpu campaign: a reduce-min of 40000 rows with NaNs and -inf,
 * converted to f8e5m2, gave -inf). */

/* int-conv-wrap and denormal-flush at once (the seed-28 xla-cpu campaign,
 * mismatch-divide-u32): an s8 convolution of 100 + 100, which the target
 * wraps to -56 and the reference saturates to 127, chosen by a select on
 * x >= 0 of a negative denormal x, which the flushing target reads as
 * -0. The plain reference gives 5, the flushing one 127, the wrapping one
 * 5: only the wrapped module evaluated as a flushing target gives -56.
 * Another value still fails. */
TR_TEST(profile_int_conv_wrap_under_flush) {
  tr_profile *p = parse_ok("denormal-flush f32\nint-conv-wrap s8\n");
  if (!p) return;
  static const char *src = "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  z = f32[] constant(0)\n"
                           "  g = pred[] compare(x, z), direction=GE\n  gb = pred[1,1,1] broadcast(g), dimensions={}\n"
                           "  i = s8[1,2,1] constant({{{100}, {100}}})\n  k = s8[2,1,1] constant({{{1}}, {{1}}})\n"
                           "  v = s8[1,1,1] convolution(i, k), window={size=2}, dim_labels=b0f_0io->b0f\n"
                           "  f = s8[1,1,1] constant({{{5}}})\n  ROOT r = s8[1,1,1] select(gb, v, f)\n}\n";
  double xv[] = {-5.655468e-39};
  tr_tensor *x = tr_tensor_new(TR_DT_F32, 0, NULL, NULL);
  tr_tensor_set_f(x, 0, xv[0]);
  ref_run h;
  if (run_open(&h, p, src, &x, 1, 1)) {
    CHECK(h.alts.cw_flush != NULL && h.alts.ncw_flush == 1);
    double got[] = {-56}, off[] = {3};
    for (int k = 0; k < 2; k++) {
      tr_tensor *t = run_target(&h, 0, TR_DT_S8, k ? off : got);
      tr_compare_result r = run_judge(&h, 0, t, true);
      CHECK_EQ_INT(r.failing, k);
      CHECK_EQ_INT(r.excused_by[TR_PR_INT_CONV_WRAP], !k);
      tr_compare_opts o;
      run_opts(&h, 0, true, &o);
      o.alt_cw_flush = NULL; /* each rule alone */
      CHECK_EQ_INT(judge_ref(&h.ref[0], t, &o).failing, 1);
      tr_tensor_free(t);
    }
  }
  run_close(&h);
  tr_tensor_free(x);
  tr_profile_free(p);
}
TR_TEST(profile_fast_minmax_converted_output) {
  tr_profile *p = parse_ok("fast-minmax f32\n");
  if (!p) return;
  static const char *src = "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n"
                           "  c = f32[2] constant({-inf, 3})\n  x = f32[2] maximum(a, c)\n"
                           "  ROOT f = f8e5m2[2] convert(x)\n}\n";
  double av[] = {NAN, NAN};
  tr_tensor *a = vec(TR_DT_F32, av, 2);
  ref_run h;
  if (run_open(&h, p, src, &a, 1, 1)) {
    double tv[] = {-INFINITY, 2}; /* [1]: 3 is the NaN-dropping value */
    tr_tensor *t = vec(TR_DT_F8E5M2, tv, 2);
    tr_compare_result r = run_judge(&h, 0, t, true);
    CHECK_EQ_INT(r.excused_by[TR_PR_FAST_MINMAX], 1);
    CHECK_EQ_INT(r.failing, 1);
    CHECK_EQ_INT(r.first_fail, 1);
    tr_tensor_free(t);
  }
  run_close(&h);
  tr_tensor_free(a);
  tr_profile_free(p);
}

/* ... and integer outputs: u32 of a NaN-dropping f32 maximum (+inf
 * saturates to 4294967295, NaN converts to 0) is excused where the
 * target gives the rewritten module's value, and judged elsewhere. */
TR_TEST(profile_fast_minmax_integer_output) {
  tr_profile *p = parse_ok("fast-minmax f32\n");
  if (!p) return;
  static const char *src = "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n"
                           "  c = f32[2] constant({inf, 3})\n  x = f32[2] maximum(a, c)\n"
                           "  ROOT u = u32[2] convert(x)\n}\n";
  double av[] = {NAN, NAN};
  tr_tensor *a = vec(TR_DT_F32, av, 2);
  ref_run h;
  if (run_open(&h, p, src, &a, 1, 1)) {
    double tv[] = {4294967295.0, 7}; /* [1]: 3 is the NaN-dropping value */
    tr_tensor *t = vec(TR_DT_U32, tv, 2);
    tr_compare_result r = run_judge(&h, 0, t, true);
    CHECK_EQ_INT(r.excused_by[TR_PR_FAST_MINMAX], 1);
    CHECK_EQ_INT(r.failing, 1);
    CHECK_EQ_INT(r.first_fail, 1);
    r = run_judge(&h, 0, t, false);
    CHECK_EQ_INT(r.failing, 2);
    tr_tensor_free(t);
  }
  run_close(&h);
  tr_tensor_free(a);
  tr_profile_free(p);
}

/* ... and a float that a compare of such a number chose (a seed-28
 * xla-cpu campaign: select(reduce-min > -1.586, reduce-min, p) over rows
 * of NaN, where XLA's reduce gives its init +inf and so the select +inf,
 * the plain reference p): excused where the target gives the rewritten
 * module's value and the plain one differs; a row whose NaN-dropping
 * minimum is a number (4) still fails with the init. */
TR_TEST(profile_fast_minmax_selected_output) {
  tr_profile *p = parse_ok("fast-minmax f32\n");
  if (!p) return;
  static const char *src =
      "HloModule m\nmn {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT c = f32[] minimum(a, b)\n}\nENTRY e {\n  x = f32[3,3] parameter(0)\n"
      "  i = f32[] constant(inf)\n  m = f32[3] reduce(x, i), dimensions={1}, to_apply=mn\n"
      "  k = f32[3] constant({-1.586, -1.586, -1.586})\n  g = pred[3] compare(m, k), direction=GT\n"
      "  q = f32[3] constant({3.8474e+28, 3.8474e+28, 3.8474e+28})\n"
      "  ROOT s = f32[3] select(g, m, q)\n}\n";
  double xv[] = {NAN, NAN, NAN, 1, 2, 3, 4, NAN, 5};
  tr_tensor *x = tr_tensor_new(TR_DT_F32, 2, (const int64_t[]){3, 3}, NULL);
  for (int k = 0; k < 9; k++) tr_tensor_set_f(x, (size_t)k, xv[k]);
  ref_run h;
  if (run_open(&h, p, src, &x, 1, 1)) {
    double tv[] = {INFINITY, 1, INFINITY}; /* [2]: 4 is the NaN-dropping value */
    tr_tensor *t = vec(TR_DT_F32, tv, 3);
    tr_compare_result r = run_judge(&h, 0, t, true);
    CHECK_EQ_INT(r.excused_by[TR_PR_FAST_MINMAX], 1);
    CHECK_EQ_INT(r.failing, 1);
    CHECK_EQ_INT(r.first_fail, 2);
    r = run_judge(&h, 0, t, false);
    CHECK_EQ_INT(r.failing, 2);
    tr_tensor_free(t);
  }
  run_close(&h);
  tr_tensor_free(x);
  tr_profile_free(p);
}

/* The min/max rewrite: a module with no min or max has none (so nothing
 * is excused), one with a reduce-max gets a NaN-dropping body. */
TR_TEST(profile_rewrite_fast_minmax) {
  tr_profile *p = parse_ok("fast-minmax f32\n");
  if (!p) return;
  static const char *no_minmax =
      "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT s = f32[4] sine(x)\n}\n";
  static const char *reduce_max =
      "HloModule m\nmx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT c = f32[] maximum(a, b)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n"
      "  i = f32[] constant(-inf)\n  ROOT r = f32[] reduce(x, i), dimensions={0}, to_apply=mx\n}\n";
  tr_diag d = {0};
  tr_module *m1 = tr_parse("a.hlo", no_minmax, strlen(no_minmax), NULL, &d);
  tr_module *m2 = tr_parse("b.hlo", reduce_max, strlen(reduce_max), NULL, &d);
  CHECK(m1 && m2);
  if (!m1 || !m2) return;
  int n = -1;
  CHECK(tr_profile_rewrite(p, TR_PR_FAST_MINMAX, m1, &n) == NULL);
  CHECK_EQ_INT(n, 0);
  tr_module *rw = tr_profile_rewrite(p, TR_PR_FAST_MINMAX, m2, &n);
  CHECK(rw != NULL);
  CHECK_EQ_INT(n, 1);
  if (rw) {
    CHECK(tr_verify(rw, &d) == TR_OK);
    /* [NaN, 1, 5, 2]: max drops the NaN and gives 5; the original gives NaN. */
    double xv[] = {NAN, 1, 5, 2};
    tr_tensor *x = vec(TR_DT_F32, xv, 4);
    tr_tensor **outs = NULL;
    int nouts = 0;
    CHECK(tr_eval(rw, &x, 1, &outs, &nouts, &d) == TR_OK);
    if (nouts == 1) CHECK(tr_tensor_get_f(outs[0], 0) == 5.0);
    tr_eval_free_outputs(outs, nouts);
    tr_tensor_free(x);
    tr_module_free(rw);
  }
  tr_diag_clear(&d);
  tr_module_free(m1);
  tr_module_free(m2);
  tr_profile_free(p);
}

TR_TEST(profile_rule_table_rules) {
  tr_profile *p = parse_ok("transcendental-ulps f32 tanh=7\nreciprocal-divide f32=2\n");
  if (!p) return;
  /* The strict reference allows 1e-7 everywhere; the widened references
   * (as the shadow pass with each rule's table would give) allow more
   * at the elements their ops produced. */
  double v[] = {0.5, 0.25, 0.125, 1.0};
  double b[] = {1e-7, 1e-7, 1e-7, 1e-7};
  double t[] = {0.5 + 4e-7, 0.25 + 4e-7, 0.125 + 8e-7, 1.1};
  double bt[] = {5e-7, 1e-7, 5e-7, 1e-7};  /* transcendental-ulps alone */
  double bd[] = {1e-7, 5e-7, 5e-7, 1e-7};  /* reciprocal-divide alone */
  double bb[] = {5e-7, 5e-7, 9e-7, 1e-7};  /* both */
  fake_out ref, at, ad, ab;
  fake_float(&ref, TR_DT_F32, v, b, 4);
  fake_float(&at, TR_DT_F32, v, bt, 4);
  fake_float(&ad, TR_DT_F32, v, bd, 4);
  fake_float(&ab, TR_DT_F32, v, bb, 4);
  tr_tensor *tt = vec(TR_DT_F32, t, 4);
  tr_compare_opts o;
  tr_compare_opts_default(&o);
  o.profile = p;
  tr_compare_result r = judge(&ref, tt, &o);
  CHECK_EQ_INT(r.failing, 4); /* no other references: nothing to excuse with */
  o.alt[TR_PR_TRANSCENDENTAL_ULPS] = &at.o;
  o.alt[TR_PR_RECIPROCAL_DIVIDE] = &ad.o;
  o.alt_tables = &ab.o;
  r = judge(&ref, tt, &o);
  CHECK_EQ_INT(r.failing, 1);
  CHECK_EQ_INT(r.first_fail, 3);
  CHECK_EQ_INT(r.excused, 3);
  CHECK_EQ_INT(r.excused_by[TR_PR_TRANSCENDENTAL_ULPS], 1);
  CHECK_EQ_INT(r.excused_by[TR_PR_RECIPROCAL_DIVIDE], 1);
  CHECK_EQ_INT(r.excused_tables, 1);
  CHECK_STR(tr_compare_tables_name(), "transcendental-ulps+reciprocal-divide");
  /* A rule the profile does not name excuses nothing even with its reference. */
  tr_profile *q = parse_ok("reciprocal-divide f32=2\n");
  if (q) {
    o.profile = q;
    o.alt_tables = NULL;
    r = judge(&ref, tt, &o);
    CHECK_EQ_INT(r.excused_by[TR_PR_TRANSCENDENTAL_ULPS], 0);
    CHECK_EQ_INT(r.excused_by[TR_PR_RECIPROCAL_DIVIDE], 1);
    CHECK_EQ_INT(r.failing, 3);
    tr_profile_free(q);
  }
  /* Strict (no profile) ignores the other references altogether. */
  o.profile = NULL;
  r = judge(&ref, tt, &o);
  CHECK_EQ_INT(r.failing, 4);
  CHECK_EQ_INT(r.excused, 0);
  fake_free(&ref);
  fake_free(&at);
  fake_free(&ad);
  fake_free(&ab);
  tr_tensor_free(tt);
  tr_profile_free(p);
}

TR_TEST(profile_min_normal) {
  CHECK(tr_min_normal(TR_DT_F32) == ldexp(1.0, -126));
  CHECK(tr_min_normal(TR_DT_F64) == ldexp(1.0, -1022));
  CHECK(tr_min_normal(TR_DT_BF16) == ldexp(1.0, -126));
  CHECK(tr_min_normal(TR_DT_F16) == ldexp(1.0, -14));
  CHECK(tr_min_normal(TR_DT_S32) == 0);
}

/* log-exp-fold through an abs: XLA drops abs(exp(x)) to exp(x) and then
 * folds the log (a seed-20 xla-cpu campaign: log(abs(exp(x))) of an
 * overflowing exp gave x); an abs of anything else is kept. */
TR_TEST(profile_rewrite_log_abs_exp) {
  tr_profile *p = parse_ok("log-exp-fold f32\n");
  if (!p) return;
  const char *text = "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  a = f32[2] exponential(x)\n"
                     "  b = f32[2] abs(a)\n  c = f32[2] log(b)\n  d = f32[2] abs(x)\n  l = f32[2] log(d)\n"
                     "  ROOT t = (f32[2], f32[2]) tuple(c, l)\n}\n";
  tr_diag dg = {0};
  tr_module *m = tr_parse("m.hlo", text, strlen(text), NULL, &dg);
  CHECK(m != NULL);
  int n = -1;
  tr_module *f = m ? tr_profile_rewrite(p, TR_PR_LOG_EXP_FOLD, m, &n) : NULL;
  CHECK_EQ_INT(n, 1);
  if (f) {
    tr_tensor *x = tr_tensor_new(TR_DT_F32, 1, (int64_t[]){2}, NULL);
    tr_tensor_set_f(x, 0, 470.5);
    tr_tensor_set_f(x, 1, -2);
    tr_tensor **o = NULL;
    int no = 0;
    CHECK_EQ_INT(tr_eval(f, &x, 1, &o, &no, &dg), TR_OK);
    if (no == 2) {
      CHECK(tr_tensor_get_f(o[0], 0) == 470.5 && tr_tensor_get_f(o[0], 1) == -2);
      CHECK(fabs(tr_tensor_get_f(o[1], 1) - log(2.0)) < 1e-6); /* log(abs(x)) kept */
    }
    tr_eval_free_outputs(o, no);
    tr_tensor_free(x);
    tr_module_free(f);
  }
  tr_module_free(m);
  tr_diag_clear(&dg);
  tr_profile_free(p);
}

/* log-exp-fold through moves: log(abs(transpose(exp(x)))) is
 * transpose(x) (a seed-25 xla-cpu campaign: 1.9357e11 for the log of an
 * overflowed exp through a transpose); the move is made again on x. */
TR_TEST(profile_rewrite_log_exp_through_moves) {
  tr_profile *p = parse_ok("log-exp-fold f32\n");
  if (!p) return;
  const char *text = "HloModule m\nENTRY e {\n  x = f32[2,1] parameter(0)\n  a = f32[2,1] exponential(x)\n"
                     "  t = f32[1,2] transpose(a), dimensions={1,0}\n  b = f32[1,2] abs(t)\n"
                     "  r = f32[2] reshape(b)\n  ROOT c = f32[2] log(r)\n}\n";
  tr_diag dg = {0};
  tr_module *m = tr_parse("m.hlo", text, strlen(text), NULL, &dg);
  CHECK(m != NULL);
  int n = -1;
  tr_module *f = m ? tr_profile_rewrite(p, TR_PR_LOG_EXP_FOLD, m, &n) : NULL;
  CHECK_EQ_INT(n, 1);
  if (f) {
    CHECK_EQ_INT(tr_verify(f, &dg), TR_OK);
    tr_tensor *x = tr_tensor_new(TR_DT_F32, 2, (int64_t[]){2, 1}, NULL);
    tr_tensor_set_f(x, 0, 470.5); /* exp overflows f32 */
    tr_tensor_set_f(x, 1, -3);
    tr_tensor **o = NULL;
    int no = 0;
    CHECK_EQ_INT(tr_eval(f, &x, 1, &o, &no, &dg), TR_OK);
    if (no == 1) CHECK(tr_tensor_get_f(o[0], 0) == 470.5 && tr_tensor_get_f(o[0], 1) == -3);
    tr_eval_free_outputs(o, no);
    tr_tensor_free(x);
    tr_module_free(f);
  }
  if (m) tr_module_free(m);
  tr_diag_clear(&dg);
  tr_profile_free(p);
}

/* log-exp-fold's other fold: log(pow(a, b)) is b * log(abs(a)) on XLA
 * (a seed-26 xla-cpu campaign: 124.4 for the log of an overflowed pow);
 * log(abs(pow(a, b))) is left (the abs is not the power's). */
TR_TEST(profile_rewrite_log_pow) {
  tr_profile *p = parse_ok("log-exp-fold f32\n");
  if (!p) return;
  const char *text = "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
                     "  w = f32[2] power(a, b)\n  l = f32[2] log(w)\n  v = f32[2] abs(w)\n  k = f32[2] log(v)\n"
                     "  ROOT t = (f32[2], f32[2]) tuple(l, k)\n}\n";
  tr_diag dg = {0};
  tr_module *m = tr_parse("m.hlo", text, strlen(text), NULL, &dg);
  CHECK(m != NULL);
  int n = -1;
  tr_module *f = m ? tr_profile_rewrite(p, TR_PR_LOG_EXP_FOLD, m, &n) : NULL;
  CHECK_EQ_INT(n, 1);
  if (f) {
    CHECK_EQ_INT(tr_verify(f, &dg), TR_OK);
    tr_tensor *x[2] = {tr_tensor_new(TR_DT_F32, 1, (int64_t[]){2}, NULL), tr_tensor_new(TR_DT_F32, 1, (int64_t[]){2}, NULL)};
    tr_tensor_set_f(x[0], 0, 1e10); /* pow overflows f32 */
    tr_tensor_set_f(x[0], 1, -2);
    tr_tensor_set_f(x[1], 0, 5);
    tr_tensor_set_f(x[1], 1, 2);
    tr_tensor **o = NULL;
    int no = 0;
    CHECK_EQ_INT(tr_eval(f, x, 2, &o, &no, &dg), TR_OK);
    if (no == 2) {
      CHECK(fabs(tr_tensor_get_f(o[0], 0) - 5 * log(1e10)) < 1e-4);
      CHECK(fabs(tr_tensor_get_f(o[0], 1) - 2 * log(2.0)) < 1e-6);
      CHECK(isinf(tr_tensor_get_f(o[1], 0))); /* log(abs(pow)) kept */
    }
    tr_eval_free_outputs(o, no);
    tr_tensor_free(x[0]);
    tr_tensor_free(x[1]);
    tr_module_free(f);
  }
  if (m) tr_module_free(m);
  tr_diag_clear(&dg);
  tr_profile_free(p);
}

/* The rewrite rules' modules: log(exp(x)) -> x and integer convolutions
 * computed wide then converted down, only where the profile says. */
TR_TEST(profile_rewrite_modules) {
  tr_profile *p = parse_ok("log-exp-fold f32\nint-conv-wrap s8\n");
  if (!p) return;
  const char *text = "HloModule m\n"
                     "ENTRY e {\n"
                     "  x = f32[3] parameter(0)\n"
                     "  h = f16[3] convert(x)\n"
                     "  a = f32[3] exponential(x)\n"
                     "  b = f32[3] log(a)\n"
                     "  c = f16[3] exponential(h)\n"
                     "  d = f16[3] log(c)\n"
                     "  i = s8[1,2,1] constant({{{100}, {100}}})\n"
                     "  k = s8[2,1,1] constant({{{1}}, {{1}}})\n"
                     "  v = s8[1,1,1] convolution(i, k), window={size=2}, dim_labels=b0f_0io->b0f\n"
                     "  ROOT t = (f32[3], f16[3], s8[1,1,1]) tuple(b, d, v)\n"
                     "}\n";
  tr_diag dg = {0};
  tr_module *m = tr_parse("m.hlo", text, strlen(text), NULL, &dg);
  CHECK(m != NULL);
  if (!m) return;
  int n = -1;
  tr_module *f = tr_profile_rewrite(p, TR_PR_LOG_EXP_FOLD, m, &n);
  CHECK_EQ_INT(n, 1); /* the f32 pair only: f16 is not listed */
  tr_module *w = tr_profile_rewrite(p, TR_PR_INT_CONV_WRAP, m, &n);
  CHECK_EQ_INT(n, 1);
  CHECK(tr_profile_rewrite(p, TR_PR_DENORMAL_FLUSH, m, &n) == NULL);
  CHECK_EQ_INT(n, 0);
  if (f && w) {
    CHECK_EQ_INT(tr_verify(f, &dg), TR_OK);
    CHECK_EQ_INT(tr_verify(w, &dg), TR_OK);
    tr_tensor *x = tr_tensor_new(TR_DT_F32, 1, (int64_t[]){3}, NULL);
    tr_tensor_set_f(x, 0, 100); /* exp overflows: inf, folded: 100 */
    tr_tensor_set_f(x, 1, 1);
    tr_tensor_set_f(x, 2, -3);
    tr_tensor **o = NULL;
    int no = 0;
    CHECK_EQ_INT(tr_eval(m, &x, 1, &o, &no, &dg), TR_OK);
    if (no == 3) {
      CHECK(isinf(tr_tensor_get_f(o[0], 0)));
      CHECK_EQ_INT((int)tr_tensor_get_i(o[2], 0), 127); /* saturated, as E does */
    }
    tr_eval_free_outputs(o, no);
    CHECK_EQ_INT(tr_eval(f, &x, 1, &o, &no, &dg), TR_OK);
    if (no == 3) {
      CHECK(tr_tensor_get_f(o[0], 0) == 100 && tr_tensor_get_f(o[0], 2) == -3);
      CHECK(isinf(tr_tensor_get_f(o[1], 0))); /* f16: not folded */
      CHECK_EQ_INT((int)tr_tensor_get_i(o[2], 0), 127);
    }
    tr_eval_free_outputs(o, no);
    CHECK_EQ_INT(tr_eval(w, &x, 1, &o, &no, &dg), TR_OK);
    if (no == 3) {
      CHECK(isinf(tr_tensor_get_f(o[0], 0)));
      CHECK_EQ_INT((int)tr_tensor_get_i(o[2], 0), -56); /* 200 wrapped, as XLA CPU does */
    }
    tr_eval_free_outputs(o, no);
    tr_tensor_free(x);
  }
  tr_diag_clear(&dg);
  tr_module_free(f);
  tr_module_free(w);
  tr_module_free(m);
  tr_profile_free(p);
}

/* flush-results: FTZ slack only where the module has the op (result_flush
 * set by the caller), and never for a normal-size error. */
TR_TEST(profile_rule_flush_results) {
  tr_profile *p = parse_ok("flush-results f16 logistic\n");
  if (!p) return;
  double v[3] = {1.52e-5, 0.5, 3e-6}, b[3] = {0, 0, 0};
  fake_out ref;
  fake_float(&ref, TR_DT_F16, v, b, 3);
  double tv[3] = {0, 0.5, 0};
  tr_tensor *t = vec(TR_DT_F16, tv, 3);
  tr_compare_opts o;
  tr_compare_opts_default(&o);
  o.profile = p;
  tr_compare_result r = judge(&ref, t, &o);
  CHECK_EQ_INT(r.failing, 2); /* the module has no logistic */
  o.result_flush[TR_DT_F16] = true;
  r = judge(&ref, t, &o);
  CHECK_EQ_INT(r.failing, 0);
  CHECK_EQ_INT(r.excused_by[TR_PR_FLUSH_RESULTS], 2);
  tr_tensor_set_f(t, 1, 0.5 + 1.0 / 64); /* far beyond min normal: still fails */
  r = judge(&ref, t, &o);
  CHECK_EQ_INT(r.failing, 1);
  CHECK_EQ_INT(r.first_fail, 1);
  fake_free(&ref);
  tr_tensor_free(t);
  tr_profile_free(p);
}

/* conv-zero-pad: a padded convolution becomes pad(x, 0) and an unpadded
 * convolution, so an inf tap over the padding gives NaN (0 * inf), as XLA
 * CPU's f32 path computes it; the original module skips the tap. */
TR_TEST(profile_rewrite_conv_zero_pad) {
  tr_profile *p = parse_ok("conv-zero-pad f32\n");
  if (!p) return;
  const char *text = "HloModule m\n"
                     "ENTRY e {\n"
                     "  x = f32[1,4,1] parameter(0)\n"
                     "  k = f32[3,1,1] parameter(1)\n"
                     "  a = f32[1,4,1] convolution(x, k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f\n"
                     "  b = f32[1,2,1] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f\n"
                     "  c = f32[1,4,1] convolution(x, k), window={size=3 pad=0_-1 lhs_dilate=2}, dim_labels=b0f_0io->b0f\n"
                     "  ROOT t = (f32[1,4,1], f32[1,2,1], f32[1,4,1]) tuple(a, b, c)\n"
                     "}\n";
  tr_diag dg = {0};
  tr_module *m = tr_parse("m.hlo", text, strlen(text), NULL, &dg);
  CHECK(m != NULL);
  if (!m) return;
  int n = -1;
  tr_module *z = tr_profile_rewrite(p, TR_PR_CONV_ZERO_PAD, m, &n);
  CHECK_EQ_INT(n, 2); /* a and c; b has nothing to pad */
  if (z) {
    CHECK_EQ_INT(tr_verify(z, &dg), TR_OK);
    tr_tensor *x = tr_tensor_new(TR_DT_F32, 3, (int64_t[]){1, 4, 1}, NULL);
    tr_tensor *k = tr_tensor_new(TR_DT_F32, 3, (int64_t[]){3, 1, 1}, NULL);
    for (int i = 0; i < 4; i++) tr_tensor_set_f(x, (size_t)i, i + 1);
    tr_tensor_set_f(k, 0, INFINITY);
    tr_tensor_set_f(k, 1, 1);
    tr_tensor_set_f(k, 2, 1);
    tr_tensor *args[2] = {x, k};
    tr_tensor **o = NULL, **q = NULL;
    int no = 0, nq = 0;
    CHECK_EQ_INT(tr_eval(m, args, 2, &o, &no, &dg), TR_OK);
    CHECK_EQ_INT(tr_eval(z, args, 2, &q, &nq, &dg), TR_OK);
    if (no == 3 && nq == 3) {
      CHECK(tr_tensor_get_f(o[0], 0) == 3);     /* the padded tap skipped */
      CHECK(isnan(tr_tensor_get_f(q[0], 0)));    /* 0 * inf */
      CHECK(isinf(tr_tensor_get_f(q[0], 1)) && isinf(tr_tensor_get_f(o[0], 1)));
      for (int i = 0; i < 2; i++) CHECK(tr_tensor_get_f(o[1], (size_t)i) == tr_tensor_get_f(q[1], (size_t)i));
      /* Base dilation: holes are zeros too; every window of c starts on
       * a value or a hole under the inf tap. */
      CHECK(isinf(tr_tensor_get_f(o[2], 0)) && isinf(tr_tensor_get_f(q[2], 0)));
      CHECK(tr_tensor_get_f(o[2], 1) == 2 && isnan(tr_tensor_get_f(q[2], 1)));
    }
    tr_eval_free_outputs(o, no);
    tr_eval_free_outputs(q, nq);
    tr_tensor_free(x);
    tr_tensor_free(k);
  }
  tr_diag_clear(&dg);
  tr_module_free(z);
  tr_module_free(m);
  tr_profile_free(p);
}

/* conv-zero-pad excuses a NaN target only where its reference is NaN too
 * (0 * inf over the padding), never through its wider bound. */
TR_TEST(profile_rule_conv_zero_pad_excuse) {
  tr_profile *p = parse_ok("conv-zero-pad f32\n");
  if (!p) return;
  double v[3] = {3, 1, 2}, b[3] = {0, 0, 0}, av[3] = {NAN, 1, 2}, ab[3] = {0, 0, 1};
  fake_out ref, alt;
  fake_float(&ref, TR_DT_F32, v, b, 3);
  fake_float(&alt, TR_DT_F32, av, ab, 3);
  double tv[3] = {NAN, 1, 2.5};
  tr_tensor *t = vec(TR_DT_F32, tv, 3);
  tr_compare_opts o;
  tr_compare_opts_default(&o);
  o.profile = p;
  o.alt[TR_PR_CONV_ZERO_PAD] = &alt.o;
  tr_compare_result r = judge(&ref, t, &o);
  CHECK_EQ_INT(r.excused_by[TR_PR_CONV_ZERO_PAD], 1);
  CHECK_EQ_INT(r.failing, 1); /* 2.5: inside alt's bound, still failing */
  CHECK_EQ_INT(r.first_fail, 2);
  fake_free(&ref);
  fake_free(&alt);
  tr_tensor_free(t);
  tr_profile_free(p);
}

/* conv-zero-pad under a predicate: is-finite of the padded NaN is false
 * in the padded reference, true in the plain one; a target false there
 * is excused, a target false where both references say true is not (a
 * seed-18 xla-cpu campaign, mismatch-is-finite-pred). */
static void fake_pred(fake_out *f, const int *v, int n) {
  memset(f, 0, sizeof *f);
  f->dim = n;
  f->o.dtype = TR_DT_PRED;
  f->o.rank = 1;
  f->o.dims = &f->dim;
  f->o.n = (size_t)n;
  f->o.uncertain = calloc((size_t)n, 1);
  f->o.exact = tr_tensor_new(TR_DT_PRED, 1, &f->dim, NULL);
  for (int i = 0; i < n; i++) tr_tensor_set_u(f->o.exact, (size_t)i, (uint64_t)v[i]);
}

TR_TEST(profile_rule_conv_zero_pad_predicate) {
  tr_profile *p = parse_ok("conv-zero-pad f32\n");
  if (!p) return;
  int v[3] = {1, 1, 1}, av[3] = {0, 1, 1}, tv[3] = {0, 0, 1};
  fake_out ref, alt, tgt;
  fake_pred(&ref, v, 3);
  fake_pred(&alt, av, 3);
  fake_pred(&tgt, tv, 3);
  tr_compare_opts o;
  tr_compare_opts_default(&o);
  o.profile = p;
  tr_compare_result r = judge(&ref, tgt.o.exact, &o);
  CHECK_EQ_INT(r.failing, 2); /* no padded reference: both fail */
  o.alt[TR_PR_CONV_ZERO_PAD] = &alt.o;
  r = judge(&ref, tgt.o.exact, &o);
  CHECK_EQ_INT(r.excused_by[TR_PR_CONV_ZERO_PAD], 1);
  CHECK_EQ_INT(r.failing, 1);
  CHECK_EQ_INT(r.first_fail, 1);
  alt.o.uncertain[0] = 1; /* an uncertain padded value excuses nothing */
  r = judge(&ref, tgt.o.exact, &o);
  CHECK_EQ_INT(r.failing, 2);
  fake_free(&ref);
  fake_free(&alt);
  fake_free(&tgt);
  tr_profile_free(p);
}

/* The conv-zero-pad modules' inputs: x = [1, 2, 3] and a kernel whose
 * first tap, inf, meets the padding at element 0 (both f32[1,1,3]). */
static void zp_inputs(tr_tensor *a[2]) {
  double xv[3] = {1, 2, 3}, kv[3] = {INFINITY, 1, 1};
  int64_t d3[3] = {1, 1, 3};
  a[0] = tr_tensor_new(TR_DT_F32, 3, d3, NULL);
  a[1] = tr_tensor_new(TR_DT_F32, 3, d3, NULL);
  for (int i = 0; i < 3; i++) {
    tr_tensor_set_f(a[0], (size_t)i, xv[i]);
    tr_tensor_set_f(a[1], (size_t)i, kv[i]);
  }
}

/* Judges target values tv on output 0 under the profile (the number
 * failing and excused by conv-zero-pad), and again without the padded
 * reference's copies that take a made NaN as -NaN and +NaN (failing). */
static void zp_sign_judge(const ref_run *h, const double *tv, int *failing, int *excused, int *fail_unsigned) {
  tr_tensor *t = run_target(h, 0, TR_DT_F32, tv);
  tr_compare_result r = run_judge(h, 0, t, true);
  *failing = (int)r.failing;
  *excused = (int)r.excused_by[TR_PR_CONV_ZERO_PAD];
  tr_compare_opts o;
  run_opts(h, 0, true, &o);
  o.alt_zp_sign[0] = o.alt_zp_sign[1] = NULL;
  *fail_unsigned = (int)judge_ref(&h->ref[0], t, &o).failing;
  tr_tensor_free(t);
}

/* conv-zero-pad's NaN compared by total order (a seed-23 xla-cpu
 * campaign, mismatch-select-f32): the padded tap 0 * inf makes element 0
 * of the convolution NaN on the target, x86's -NaN, which a TOTALORDER LT
 * puts below -2, so the select takes w. The padded reference leaves that
 * compare uncertain (a made NaN's sign is not specified); its copy with
 * the NaN taken as -NaN gives w exactly and excuses the element, and a
 * value neither gives still fails. Without those copies it fails. */
TR_TEST(profile_rule_conv_zero_pad_total_order_sign) {
  tr_profile *p = parse_ok("conv-zero-pad f32\n");
  if (!p) return;
  const char *src =
      "HloModule m\nENTRY e {\n  x = f32[1,1,3] parameter(0)\n  k = f32[1,1,3] parameter(1)\n"
      "  c = f32[1,1,3] convolution(x, k), window={size=3 pad=1_1}, dim_labels=bf0_oi0->bf0\n"
      "  m2 = f32[] constant(-2)\n  y = f32[1,1,3] broadcast(m2), dimensions={}\n"
      "  lt = pred[1,1,3] compare(c, y), direction=LT, type=TOTALORDER\n"
      "  w0 = f32[] constant(0.75)\n  w = f32[1,1,3] broadcast(w0), dimensions={}\n"
      "  ROOT s = f32[1,1,3] select(lt, w, c)\n}\n";
  tr_tensor *a[2];
  zp_inputs(a);
  ref_run h;
  if (run_open(&h, p, src, a, 2, 1)) {
    CHECK(h.alts.zp_sign[0] != NULL && h.alts.zp_sign[1] != NULL);
    CHECK(h.ref[0].value[0] == 3); /* the padded tap skipped: 3 < -2 is false */
    double good[3] = {0.75, INFINITY, INFINITY}, bad[3] = {0.5, INFINITY, INFINITY};
    for (int k = 0; k < 2; k++) {
      int failing, excused, fail_unsigned;
      zp_sign_judge(&h, k ? bad : good, &failing, &excused, &fail_unsigned);
      CHECK_EQ_INT(failing, k);
      CHECK_EQ_INT(excused, !k);
      CHECK_EQ_INT(fail_unsigned, 1);
    }
  }
  run_close(&h);
  for (int i = 0; i < 2; i++) tr_tensor_free(a[i]);
  tr_profile_free(p);
}

/* conv-zero-pad's NaN as a sort key by total order (a seed-24 xla-cpu
 * campaign, mismatch-sort-f16): the padded tap 0 * inf makes feature 2
 * of the convolution NaN on the target, x86's -NaN, which a TOTALORDER
 * GT sort puts last, moving the two numbers up: [0.3, 0.1, -NaN] where
 * the plain reference sorts [0.5, 0.3, 0.1]. The padded reference's copy
 * with the NaN taken as -NaN sorts it so, certainly (the NaN key
 * overlaps no number), with the products' rounding in the bounds; it
 * excuses those two elements, a value it does not give still fails, and
 * without the copies (or with the NaN key leaving the slice uncertain,
 * as without a sign) they fail. */
TR_TEST(profile_rule_conv_zero_pad_total_order_sort) {
  tr_profile *p = parse_ok("conv-zero-pad f32\n");
  if (!p) return;
  const char *src =
      "HloModule m\ngt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT c = pred[] compare(a, b), direction=GT, type=TOTALORDER\n}\n"
      "ENTRY e {\n  x = f32[1,1,1] parameter(0)\n  k = f32[3,1,3] parameter(1)\n"
      "  c = f32[1,3,1] convolution(x, k), window={size=3 pad=1_1}, dim_labels=bf0_oi0->bf0\n"
      "  ROOT s = f32[1,3,1] sort(c), dimensions={1}, is_stable=true, to_apply=gt\n}\n";
  int64_t dx[3] = {1, 1, 1}, dk[3] = {3, 1, 3};
  /* features: 0.1 * [1, 3, 5]; feature 2's left tap reads the padding */
  double kv[9] = {1, 1, 1, 2, 3, 2, INFINITY, 5, 1};
  tr_tensor *a[2] = {tr_tensor_new(TR_DT_F32, 3, dx, NULL), tr_tensor_new(TR_DT_F32, 3, dk, NULL)};
  tr_tensor_set_f(a[0], 0, 0.1);
  for (int i = 0; i < 9; i++) tr_tensor_set_f(a[1], (size_t)i, kv[i]);
  ref_run h;
  bool ok = run_open(&h, p, src, a, 2, 1);
  CHECK(h.alts.zp_sign[0] != NULL && h.alts.zp_sign[1] != NULL);
  if (ok && h.alts.zp_sign[0]) {
    float f1 = 0.1f;
    CHECK(fabs(h.ref[0].value[0] - 5.0 * f1) < 1e-6 && fabs(h.ref[0].value[2] - f1) < 1e-6);
    /* the -NaN copy: certain, the NaN last, rounding in the bounds */
    const tr_shadow_out *zs = &h.alts.zp_sign[0][0];
    for (int i = 0; i < 3; i++) CHECK(!zs->uncertain || !zs->uncertain[i]);
    CHECK(isnan(zs->value[2]) && zs->bound[0] > 0);
    float t0 = (float)(3.0 * f1), t1 = f1;
    double good[3] = {t0, t1, -NAN}, bad[3] = {t0, 0.2, -NAN};
    for (int k = 0; k < 2; k++) {
      int failing, excused, fail_unsigned;
      zp_sign_judge(&h, k ? bad : good, &failing, &excused, &fail_unsigned);
      CHECK_EQ_INT(failing, k);
      CHECK_EQ_INT(excused, 3 - k);
      CHECK_EQ_INT(fail_unsigned, 2);
    }
  }
  run_close(&h);
  for (int i = 0; i < 2; i++) tr_tensor_free(a[i]);
  tr_profile_free(p);
}

/* conv-zero-pad and reduce-init-identity at once: the padded tap 0 * inf
 * makes element 0 of the convolution NaN on the target, and an argmax
 * over the size-1 dim that follows (init (-inf, 0), total-order compare)
 * keeps its init over that NaN in the padded reference, which XLA drops:
 * neither rule's reference alone covers the target's NaN; the reference
 * of the padded module with undefined inits does. Without that
 * reference the element fails. */
TR_TEST(profile_rule_conv_zero_pad_then_argmax) {
  tr_profile *p = parse_ok("conv-zero-pad f32\nreduce-init-identity documented\n");
  if (!p) return;
  const char *src =
      "HloModule m\nargmax {\n  a = f32[] parameter(0)\n  ai = s32[] parameter(1)\n  b = f32[] parameter(2)\n"
      "  bi = s32[] parameter(3)\n  gt = pred[] compare(a, b), direction=GT, type=TOTALORDER\n"
      "  eq = pred[] compare(a, b), direction=EQ, type=TOTALORDER\n  lt = pred[] compare(ai, bi), direction=LT\n"
      "  tie = pred[] and(eq, lt)\n  keep = pred[] or(gt, tie)\n  v = f32[] select(keep, a, b)\n"
      "  i = s32[] select(keep, ai, bi)\n  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n"
      "ENTRY e {\n  x = f32[1,1,3] parameter(0)\n  k = f32[1,1,3] parameter(1)\n"
      "  c = f32[1,1,3] convolution(x, k), window={size=3 pad=1_1}, dim_labels=bf0_oi0->bf0\n"
      "  io = s32[1,1,3] iota(), iota_dimension=0\n  ninf = f32[] constant(-inf)\n  z = s32[] constant(0)\n"
      "  r = (f32[1,3], s32[1,3]) reduce(c, io, ninf, z), dimensions={0}, to_apply=argmax\n"
      "  ROOT v = f32[1,3] get-tuple-element(r), index=0\n}\n";
  tr_tensor *a[2];
  zp_inputs(a);
  ref_run h;
  if (run_open(&h, p, src, a, 2, 1)) {
    CHECK(h.alts.zp_init != NULL);
    CHECK(h.ref[0].value[0] == 3); /* the padded tap skipped */
    double tv[3] = {NAN, INFINITY, INFINITY};
    tr_tensor *t = run_target(&h, 0, TR_DT_F32, tv);
    tr_compare_result r = run_judge(&h, 0, t, true);
    CHECK_EQ_INT(r.failing, 0);
    CHECK_EQ_INT(r.excused_by[TR_PR_REDUCE_INIT_IDENTITY], 1);
    tr_compare_opts o;
    run_opts(&h, 0, true, &o);
    o.alt_zp_init = NULL;
    r = judge_ref(&h.ref[0], t, &o);
    CHECK_EQ_INT(r.failing, 1);
    tr_tensor_free(t);
  }
  run_close(&h);
  for (int i = 0; i < 2; i++) tr_tensor_free(a[i]);
  tr_profile_free(p);
}

/* dot-accumulate narrows the reference: a bf16 dot computed in f32 and
 * rounded once. [1, 2^-8 x 256] . ones is 2 exactly; accumulated in bf16
 * (sequentially) it stays 1 (1 + 2^-8 ties to even), in f32 it is 2. The
 * default bound (257 roundings of 2^-8 relative to sum|terms| = 2) lets
 * 1 pass; the narrowed one (f32 roundings, then half a bf16 ulp of 2)
 * does not, and 2 passes both. */
TR_TEST(profile_dot_accumulate) {
  tr_profile *p = parse_ok("dot-accumulate bf16=f32\n");
  if (!p) return;
  const char *text = "HloModule m\n"
                     "ENTRY e {\n"
                     "  a = bf16[1,257] parameter(0)\n"
                     "  b = bf16[257,1] parameter(1)\n"
                     "  f = f32[1,257] convert(a)\n"
                     "  g = f32[1,1] dot(f, f), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n"
                     "  ROOT d = bf16[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                     "}\n";
  tr_diag dg = {0};
  tr_module *m = tr_parse("m.hlo", text, strlen(text), NULL, &dg);
  CHECK(m != NULL);
  if (!m) return;
  int n = -1;
  tr_module *nm = tr_profile_narrowed(p, m, &n);
  CHECK_EQ_INT(n, 1); /* the f32 dot is not named */
  CHECK(tr_profile_narrowed(NULL, m, &n) == NULL && n == 0);
  if (nm) {
    CHECK_EQ_INT(tr_verify(nm, &dg), TR_OK);
    CHECK(nm->entry->root->op == TR_OP_CONVERT && nm->entry->root->shape->dtype == TR_DT_BF16);
    CHECK(nm->entry->root->operands[0]->op == TR_OP_DOT &&
          nm->entry->root->operands[0]->shape->dtype == TR_DT_F32);
    tr_tensor *in[2];
    in[0] = tr_tensor_new(TR_DT_BF16, 2, (int64_t[]){1, 257}, NULL);
    in[1] = tr_tensor_new(TR_DT_BF16, 2, (int64_t[]){257, 1}, NULL);
    for (int i = 0; i < 257; i++) {
      tr_tensor_set_f(in[0], (size_t)i, i ? ldexp(1, -8) : 1);
      tr_tensor_set_f(in[1], (size_t)i, 1);
    }
    tr_tensor *tgt = tr_tensor_new(TR_DT_BF16, 2, (int64_t[]){1, 1}, NULL);
    for (int narrowed = 0; narrowed < 2; narrowed++) {
      tr_shadow_out *o = NULL;
      int no = 0;
      CHECK_EQ_INT(tr_eval_shadow(narrowed ? nm : m, NULL, in, 2, &o, &no, &dg), TR_OK);
      CHECK_EQ_INT(no, 1);
      if (no == 1) {
        CHECK(o[0].value[0] == 2);
        if (narrowed) CHECK(o[0].bound[0] > ldexp(1, -8) && o[0].bound[0] < ldexp(1, -7) + ldexp(1, -12));
        else CHECK(o[0].bound[0] > 1);
        for (int v = 1; v <= 2; v++) {
          tr_tensor_set_f(tgt, 0, v);
          tr_compare_opts co;
          tr_compare_opts_default(&co);
          tr_compare_result r;
          CHECK_EQ_INT(tr_compare_output(&o[0], tgt, &co, &r, &dg), TR_OK);
          CHECK_EQ_INT((int)r.failing, v == 1 && narrowed ? 1 : 0);
        }
      }
      tr_shadow_free(o, no);
    }
    tr_tensor_free(tgt);
    tr_tensor_free(in[0]);
    tr_tensor_free(in[1]);
  }
  tr_module_free(nm);
  tr_module_free(m);
  tr_diag_clear(&dg);
  tr_profile_free(p);
}

/* ---- the accuracy contract and release keys ---- */

TR_TEST(profile_contract_caps_allowances) {
  parse_err("contract f32 tanh=3.5\ntranscendental-ulps f32 tanh=7\n",
            "p.conf:2:25: error: transcendental-ulps tanh=7 exceeds its contract, 3.5 ulps");
  parse_err("reciprocal-divide f32=3\ncontract f32 divide=2\n", "exceeds its contract, 2 ulps");
  tr_profile *p = parse_ok("contract f32 tanh=3.5 exponential=6.5\ntranscendental-ulps f32 exponential=6.5\n");
  if (!p) return;
  tr_ulp_table def, t;
  tr_ulp_table_default(&def);
  tr_profile_ulp_table(p, 0, &t);
  /* A default above the contract is capped, one below it stays. */
  CHECK(def.ulps[TR_OP_TANH][TR_DT_F32] > 3.5f);
  CHECK(t.ulps[TR_OP_TANH][TR_DT_F32] == 3.5f);
  CHECK(t.ulps[TR_OP_LOG][TR_DT_F32] == def.ulps[TR_OP_LOG][TR_DT_F32]);
  tr_profile_ulp_table(p, ~0u, &t);
  CHECK(t.ulps[TR_OP_EXPONENTIAL][TR_DT_F32] == 6.5f);
  tr_profile_free(p);
}

/* profiles/xla-cpu.conf: every allowance within its contract, for every
 * release it keys, and every widened transcendental has a contract. */
TR_TEST(profile_xla_cpu_within_contract) {
  static const char *const releases[] = {NULL, "0.4.30", "0.6.2", "0.8.1", "0.10.1", "0.10.2"};
  char path[4096];
  snprintf(path, sizeof path, "%s/../profiles/xla-cpu.conf", tr_test_dir);
  for (int k = 0; k < TR_NELEMS(releases); k++) {
    tr_diag d = {0};
    tr_profile *p = NULL;
    tr_status s = tr_profile_load_release(path, releases[k], &p, &d);
    if (s != TR_OK) tr_diag_print(&d, stderr);
    CHECK_EQ_INT(s, TR_OK);
    tr_diag_clear(&d);
    if (!p) continue;
    CHECK(p->release != NULL);
    int widened = 0;
    for (int op = 0; op < TR_OP_COUNT; op++)
      for (int dt = 0; dt < TR_DT_COUNT; dt++) {
        float u = p->ulps[op][dt];
        if (!(u > 0) || p->ulps_rule[op][dt] != TR_PR_TRANSCENDENTAL_ULPS) continue;
        widened++;
        CHECK(p->contract[op][dt] > 0);
        CHECK(u <= p->contract[op][dt]);
      }
    CHECK(widened > 0);
    tr_profile_free(p);
  }
}

TR_TEST(profile_release_keys) {
  static const char *text = "release 0.10.2\n@0.4.30,0.6.2 fast-minmax f32\n@0.10.2 log-exp-fold f64\n";
  tr_diag d = {0};
  tr_profile *p = NULL;
  CHECK_EQ_INT(tr_profile_parse_release("p.conf", text, strlen(text), "0.6.2", &p, &d), TR_OK);
  if (p) {
    CHECK(p->on[TR_PR_FAST_MINMAX] && p->minmax[TR_DT_F32]);
    CHECK(!p->on[TR_PR_LOG_EXP_FOLD]);
    CHECK_STR(p->release, "0.6.2");
    tr_profile_free(p);
  }
  /* No release given: the profile's own release line. */
  CHECK_EQ_INT(tr_profile_parse_release("p.conf", text, strlen(text), NULL, &p, &d), TR_OK);
  if (p) {
    CHECK(!p->on[TR_PR_FAST_MINMAX]);
    CHECK(p->on[TR_PR_LOG_EXP_FOLD] && p->fold[TR_DT_F64]);
    CHECK_STR(p->release, "0.10.2");
    tr_profile_free(p);
  }
  tr_diag_clear(&d);
  parse_err("@ fast-minmax f32\n", "'@' needs releases and a rule after them");
}

/* reduce-init-identity: a reduce whose init is not its reducer's identity
 * gets the identity (max: -inf, the s8 minimum; add: 0); an identity init
 * and an unknown reducer are left alone; a bad config line is refused. */
TR_TEST(profile_rewrite_reduce_init_identity) {
  tr_profile *p = parse_ok("reduce-init-identity documented\n");
  if (!p) return;
  static const char *mods[] = {
      "HloModule m\nmx {\n  a = s8[] parameter(0)\n  b = s8[] parameter(1)\n  ROOT c = s8[] maximum(a, b)\n}\n"
      "ENTRY e {\n  x = s8[1,4] parameter(0)\n  i = s8[] constant(100)\n"
      "  ROOT r = s8[4] reduce(x, i), dimensions={0}, to_apply=mx\n}\n",
      "HloModule m\nad {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n"
      "ENTRY e {\n  x = f32[4] parameter(0)\n  i = f32[] constant(0)\n"
      "  ROOT r = f32[] reduce(x, i), dimensions={0}, to_apply=ad\n}\n",
      "HloModule m\nsb {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] subtract(a, b)\n}\n"
      "ENTRY e {\n  x = f32[4] parameter(0)\n  i = f32[] constant(3)\n"
      "  ROOT r = f32[] reduce(x, i), dimensions={0}, to_apply=sb\n}\n",
  };
  int want[] = {1, 0, 0};
  for (int k = 0; k < 3; k++) {
    tr_diag d = {0};
    tr_module *m = tr_parse("r.hlo", mods[k], strlen(mods[k]), NULL, &d);
    CHECK(m != NULL);
    if (!m) continue;
    int n = -1;
    tr_module *rw = tr_profile_rewrite(p, TR_PR_REDUCE_INIT_IDENTITY, m, &n);
    CHECK_EQ_INT(n, want[k]);
    if (rw) {
      CHECK(tr_verify(rw, &d) == TR_OK);
      double xv[] = {-3, 7, 1, 2};
      tr_tensor *x = tr_tensor_new(TR_DT_S8, 2, (int64_t[]){1, 4}, &d);
      for (int i = 0; i < 4; i++) tr_tensor_set_i(x, (size_t)i, (int64_t)xv[i]);
      tr_tensor **outs = NULL;
      int nouts = 0;
      CHECK(tr_eval(rw, &x, 1, &outs, &nouts, &d) == TR_OK);
      /* With the identity the reduce is the operand itself: -3, not 100. */
      if (nouts == 1) CHECK(tr_tensor_get_f(outs[0], 0) == -3.0);
      tr_eval_free_outputs(outs, nouts);
      tr_tensor_free(x);
      tr_module_free(rw);
    }
    tr_module_free(m);
    tr_diag_clear(&d);
  }
  tr_profile_free(p);
  parse_err("reduce-init-identity\n", "p.conf:1:1: error: 'reduce-init-identity' takes one word, 'documented'");
}

/* denormal-flush follows the element's cone of influence: an intermediate
 * flushed to zero carries its zero through later ops (ceil(sqrt(d)) is 0
 * on a flushing target, 1 exactly), and only elements with a denormal in
 * their cone get the excuse. */
TR_TEST(profile_denormal_flush_cone) {
  tr_profile *p = parse_ok("denormal-flush f32\n");
  if (!p) return;
  static const char *src =
      "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  k = f32[] constant(1e-30)\n"
      "  kb = f32[4] broadcast(k), dimensions={}\n  x = f32[4] multiply(a, kb)\n"
      "  s = f32[4] sqrt(x)\n  ROOT c = f32[4] ceil(s)\n}\n";
  /* a*1e-30: denormal for the first three, normal (1e-28) for 100. */
  double av[] = {1e-9, 5e-10, 2e-9, 100};
  tr_tensor *a = vec(TR_DT_F32, av, 4);
  ref_run h;
  bool ok = run_open(&h, p, src, &a, 1, 1);
  CHECK(h.alts.alt[TR_PR_DENORMAL_FLUSH] != NULL && h.alts.nalt[TR_PR_DENORMAL_FLUSH] == 1);
  if (ok && h.alts.alt[TR_PR_DENORMAL_FLUSH]) {
    const tr_shadow_out *fl = &h.alts.alt[TR_PR_DENORMAL_FLUSH][0];
    for (int i = 0; i < 4; i++) {
      CHECK(h.ref[0].value[i] == 1.0);
      CHECK(fl->value[i] == (i < 3 ? 0.0 : 1.0));
      CHECK(!fl->uncertain[i]);
    }
    /* XLA CPU's answer: 0 where the product was flushed. */
    double tv[] = {0, 0, 0, 1};
    tr_tensor *t = vec(TR_DT_F32, tv, 4);
    tr_compare_result r = run_judge(&h, 0, t, false);
    CHECK_EQ_INT(r.failing, 3); /* strict */
    r = run_judge(&h, 0, t, true);
    CHECK_EQ_INT(r.failing, 0);
    CHECK_EQ_INT(r.excused_by[TR_PR_DENORMAL_FLUSH], 3);
    /* 0 where no denormal was on the path (element 3) is not excused, nor
     * a value neither reference gives. */
    tr_tensor_set_f(t, 3, 0.0);
    tr_tensor_set_f(t, 0, 2.0);
    r = run_judge(&h, 0, t, true);
    CHECK_EQ_INT(r.failing, 2);
    CHECK_EQ_INT(r.excused_by[TR_PR_DENORMAL_FLUSH], 2);
    tr_tensor_free(t);
  }
  run_close(&h);
  /* Sign and move ops keep a denormal: negate(d) stays -d, a flushing op
   * after it reads it as zero. */
  static const char *src2 =
      "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  n = f32[2] negate(a)\n"
      "  z = f32[2] constant({0, 0})\n  c = pred[2] compare(n, z), direction=LT\n"
      "  ROOT t = (f32[2], pred[2]) tuple(n, c)\n}\n";
  tr_diag d = {0};
  tr_module *m2 = tr_parse("neg.hlo", src2, strlen(src2), NULL, &d);
  CHECK(m2 != NULL);
  if (m2) {
    double dv[] = {ldexp(1.0, -130), 1};
    tr_tensor *x = vec(TR_DT_F32, dv, 2);
    bool flush[TR_DT_COUNT] = {false};
    flush[TR_DT_F32] = true;
    tr_shadow_opts so;
    memset(&so, 0, sizeof so);
    so.flush = flush;
    tr_shadow_out *o2 = NULL;
    int n2 = 0;
    CHECK(tr_eval_shadow(m2, &so, &x, 1, &o2, &n2, &d) == TR_OK);
    CHECK_EQ_INT(n2, 2);
    if (n2 == 2) {
      CHECK(o2[0].value[0] == -ldexp(1.0, -130));
      CHECK(tr_tensor_get_i(o2[1].exact, 0) == 0); /* -d < 0 read as -0 < 0 */
      CHECK(tr_tensor_get_i(o2[1].exact, 1) == 1);
    }
    tr_shadow_free(o2, n2);
    tr_tensor_free(x);
    tr_module_free(m2);
  }
  tr_tensor_free(a);
  tr_diag_clear(&d);
  tr_profile_free(p);
}

/* convert-out-of-range: only elements computed from a float-to-int
 * convert whose truncated input does not fit are excused, whatever
 * value the target gives there; a neighbour computed from in-range
 * elements, or from no convert at all, is judged as before. */
TR_TEST(profile_convert_out_of_range_cone) {
  tr_profile *p = parse_ok("convert-out-of-range u8\n");
  if (!p) return;
  parse_err("convert-out-of-range f32\n", "p.conf:1:22: error: 'f32' is not an integer dtype");
  parse_err("convert-out-of-range\n", "needs the integer dtypes");
  /* c = u8(a); r = c + c (a u8 op after the convert), and the sum of all
   * of r (a reduce: one undefined element reaches the whole result). */
  static const char *src =
      "HloModule m\nadd {\n  x = u8[] parameter(0)\n  y = u8[] parameter(1)\n"
      "  ROOT s = u8[] add(x, y)\n}\nENTRY e {\n  a = f32[4] parameter(0)\n"
      "  c = u8[4] convert(a)\n  r = u8[4] add(c, c)\n  z = u8[] constant(0)\n"
      "  s = u8[] reduce(c, z), dimensions={0}, to_apply=add\n"
      "  ROOT t = (u8[4], u8[]) tuple(r, s)\n}\n";
  /* -1.5 and 300 do not fit u8 (trunc -1, 300); -0.5 truncates to 0 and
   * 255.9 to 255, both in range. */
  double av[] = {-1.5, 300, -0.5, 255.9};
  tr_tensor *a = vec(TR_DT_F32, av, 4);
  ref_run h;
  bool ok = run_open(&h, p, src, &a, 1, 2);
  const tr_shadow_out *cu = h.alts.alt[TR_PR_CONVERT_OUT_OF_RANGE];
  CHECK(cu != NULL && h.alts.nalt[TR_PR_CONVERT_OUT_OF_RANGE] == 2);
  if (ok && cu) {
    CHECK(cu[0].uncertain[0] && cu[0].uncertain[1] && !cu[0].uncertain[2] && !cu[0].uncertain[3]);
    CHECK(cu[1].uncertain[0]);
    CHECK(!h.ref[0].uncertain[0] && !h.ref[0].uncertain[1]);
    /* A wrapping target: u8(-1.5) = 255, u8(300) = 44, doubled mod 256. */
    double want[] = {254, 88, 0, 254};
    tr_tensor *t = run_target(&h, 0, TR_DT_U8, want);
    tr_compare_result r = run_judge(&h, 0, t, true);
    CHECK_EQ_INT(r.failing, 0);
    CHECK_EQ_INT(r.excused_by[TR_PR_CONVERT_OUT_OF_RANGE], 2);
    /* An in-range element that differs is not excused. */
    tr_tensor_set_i(t, 2, 6);
    r = run_judge(&h, 0, t, true);
    CHECK_EQ_INT(r.failing, 1);
    /* Without the rule (strict) the two undefined ones fail too. */
    r = run_judge(&h, 0, t, false);
    CHECK_EQ_INT(r.failing, 3);
    tr_tensor_free(t);
  }
  run_close(&h);
  tr_tensor_free(a);
  /* Every element in range: no extra reference, nothing to excuse. */
  double bv[] = {0, 1.9, 254.5, -0.9};
  tr_tensor *b = vec(TR_DT_F32, bv, 4);
  if (run_open(&h, p, src, &b, 1, 2) && h.alts.alt[TR_PR_CONVERT_OUT_OF_RANGE]) {
    cu = h.alts.alt[TR_PR_CONVERT_OUT_OF_RANGE];
    for (int i = 0; i < 4; i++) CHECK(!cu[0].uncertain[i]);
    CHECK(!cu[1].uncertain[0]);
  }
  run_close(&h);
  tr_tensor_free(b);
  tr_profile_free(p);
}

/* Judges target values tv (dtype dt, in the dims of output 0) against
 * module src evaluated on ins: the number failing strictly (fail_strict,
 * unless NULL) and under profile p, and the number excused by rule r. */
static void judge_rule(tr_profile *p, const char *src, tr_tensor **ins, int nins, tr_dtype dt, const double *tv,
                       tr_prule r, int *fail_strict, int *failing, int *excused) {
  if (fail_strict) *fail_strict = -1;
  *failing = *excused = -1;
  ref_run h;
  if (run_open(&h, p, src, ins, nins, 1)) {
    tr_tensor *t = run_target(&h, 0, dt, tv);
    if (fail_strict) *fail_strict = (int)run_judge(&h, 0, t, false).failing;
    tr_compare_result cr = run_judge(&h, 0, t, true);
    *failing = (int)cr.failing;
    *excused = (int)cr.excused_by[r];
    tr_tensor_free(t);
  }
  run_close(&h);
}

/* denormal-flush and the partial results of a reduction: all four inputs
 * are normal, but a flushing target's running sum passes through
 * denormals (1.81e-38 - 2.79e-38) and flushes them, so XLA CPU's bf16
 * reduce-window and f32 reduce give -0 where the sum is -1.74e-38 (a
 * 10-minute xla-cpu campaign). The same for a scatter-add whose operand
 * and update are denormals (DAZ). A max reduction makes no new values and
 * gets no such excuse; a value off by more than the flushed partials is
 * still a failure. */
TR_TEST(profile_denormal_flush_partials) {
  tr_profile *p = parse_ok("denormal-flush f32 f64\n");
  if (!p) return;
  double av[] = {1.80915930e-38, -2.79179910e-38, 1.30406400e-38, -2.05711510e-38};
  tr_tensor *a = vec(TR_DT_F32, av, 4);
  int fs, f, e;
  static const char *sum =
      "HloModule m\nadd { x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] add(x, y) }\n"
      "ENTRY e {\n  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT r = f32[1] reduce-window(a, z), window={size=4 stride=4}, to_apply=add\n}\n";
  double t0[] = {-0.0};
  judge_rule(p, sum, &a, 1, TR_DT_F32, t0, TR_PR_DENORMAL_FLUSH, &fs, &f, &e);
  CHECK_EQ_INT(fs, 1);
  CHECK_EQ_INT(f, 0);
  CHECK_EQ_INT(e, 1);
  static const char *red =
      "HloModule m\nadd { x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] add(x, y) }\n"
      "ENTRY e {\n  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
      "  r = f32[] reduce(a, z), dimensions={0}, to_apply=add\n  ROOT b = f32[1] reshape(r)\n}\n";
  judge_rule(p, red, &a, 1, TR_DT_F32, t0, TR_PR_DENORMAL_FLUSH, &fs, &f, &e);
  CHECK_EQ_INT(f, 0);
  CHECK_EQ_INT(e, 1);
  double tfar[] = {-1e-36};
  judge_rule(p, red, &a, 1, TR_DT_F32, tfar, TR_PR_DENORMAL_FLUSH, &fs, &f, &e);
  CHECK_EQ_INT(f, 1);
  static const char *mx =
      "HloModule m\nmx { x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] maximum(x, y) }\n"
      "ENTRY e {\n  a = f32[4] parameter(0)\n  z = f32[] constant(-inf)\n"
      "  r = f32[] reduce(a, z), dimensions={0}, to_apply=mx\n  ROOT b = f32[1] reshape(r)\n}\n";
  judge_rule(p, mx, &a, 1, TR_DT_F32, t0, TR_PR_DENORMAL_FLUSH, &fs, &f, &e);
  CHECK_EQ_INT(f, 1);
  tr_tensor_free(a);
  /* scatter-add of a denormal update into a denormal operand element:
   * -1.59e-308 + -6.71e-309 = -2.26e-308 (normal), -0 on a DAZ target;
   * the untouched element is copied and stays what it was. */
  static const char *sc =
      "HloModule m\nadd { x = f64[] parameter(0)\n y = f64[] parameter(1)\n ROOT s = f64[] add(x, y) }\n"
      "ENTRY e {\n  a = f64[2] parameter(0)\n  u = f64[] parameter(1)\n  i = s32[1] constant({0})\n"
      "  ROOT r = f64[2] scatter(a, i, u), update_window_dims={}, inserted_window_dims={0},"
      " scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=add\n}\n";
  double ov[] = {-1.59291046e-308, 5}, uv[] = {-6.70560149e-309};
  tr_tensor *in[2] = {vec(TR_DT_F64, ov, 2), NULL};
  in[1] = tr_tensor_new(TR_DT_F64, 0, NULL, NULL);
  if (in[1]) tr_tensor_set_f(in[1], 0, uv[0]);
  double ts[] = {-0.0, 5};
  judge_rule(p, sc, in, 2, TR_DT_F64, ts, TR_PR_DENORMAL_FLUSH, &fs, &f, &e);
  CHECK_EQ_INT(fs, 1);
  CHECK_EQ_INT(f, 0);
  CHECK_EQ_INT(e, 1);
  double ts2[] = {-0.0, 0.0};
  judge_rule(p, sc, in, 2, TR_DT_F64, ts2, TR_PR_DENORMAL_FLUSH, &fs, &f, &e);
  CHECK_EQ_INT(f, 1); /* the copied 5 */
  tr_tensor_free(in[0]);
  tr_tensor_free(in[1]);
  tr_profile_free(p);
}

/* int-power-unit-base: (-1)^-2 = 1 and (-1)^-3 = -1 (StableHLO) where the
 * reference, as XLA, gives 0; 2^-1 stays 0, and a wrong sign is still a
 * mismatch. */
TR_TEST(profile_rule_int_power_unit_base) {
  tr_profile *p = parse_ok("int-power-unit-base s32\n");
  if (!p) return;
  const char *src = "HloModule m\nENTRY e {\n  a = s32[4] parameter(0)\n  b = s32[4] parameter(1)\n"
                    "  ROOT r = s32[4] power(a, b)\n}\n";
  int64_t d4[1] = {4};
  tr_tensor *in[2] = {tr_tensor_new(TR_DT_S32, 1, d4, NULL), tr_tensor_new(TR_DT_S32, 1, d4, NULL)};
  int64_t av[4] = {-1, -1, 2, -1}, bv[4] = {-2, -3, -1, 2};
  for (int i = 0; i < 4; i++) {
    tr_tensor_set_i(in[0], (size_t)i, av[i]);
    tr_tensor_set_i(in[1], (size_t)i, bv[i]);
  }
  int failing, excused;
  double good[4] = {1, -1, 0, 1}, bad[4] = {1, 1, 0, 1};
  judge_rule(p, src, in, 2, TR_DT_S32, good, TR_PR_INT_POWER_UNIT_BASE, NULL, &failing, &excused);
  CHECK_EQ_INT(failing, 0);
  CHECK_EQ_INT(excused, 2);
  judge_rule(p, src, in, 2, TR_DT_S32, bad, TR_PR_INT_POWER_UNIT_BASE, NULL, &failing, &excused);
  CHECK_EQ_INT(failing, 1); /* (-1)^-3 is -1, not 1 */
  tr_profile_free(p);
  tr_profile *q = parse_ok("target x\n"); /* no rule: both elements fail */
  if (q) {
    judge_rule(q, src, in, 2, TR_DT_S32, good, TR_PR_INT_POWER_UNIT_BASE, NULL, &failing, &excused);
    CHECK_EQ_INT(failing, 2);
    tr_profile_free(q);
  }
  for (int i = 0; i < 2; i++) tr_tensor_free(in[i]);
  parse_err("int-power-unit-base u8\n", "p.conf:1:21: error: 'u8' is not a signed integer dtype");
}

/* select-nan-order: a window holding a NaN may send its source to the
 * NaN's position (IREE) or past it (the reference, XLA's order); a
 * window without a NaN is judged as before. */
TR_TEST(profile_rule_select_nan_order) {
  tr_profile *p = parse_ok("select-nan-order documented\n");
  if (!p) return;
  const char *src = "HloModule m\nge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                    "  ROOT c = pred[] compare(a, b), direction=GE\n}\n"
                    "ad {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n"
                    "ENTRY e {\n  x = f32[4] parameter(0)\n  s = f32[2] parameter(1)\n  z = f32[] constant(0)\n"
                    "  ROOT r = f32[4] select-and-scatter(x, s, z), window={size=2 stride=2}, select=ge, scatter=ad\n}\n";
  int64_t d4[1] = {4}, d2[1] = {2};
  tr_tensor *in[2] = {tr_tensor_new(TR_DT_F32, 1, d4, NULL), tr_tensor_new(TR_DT_F32, 1, d2, NULL)};
  double xv[4] = {NAN, 1, 2, 3};
  for (int i = 0; i < 4; i++) tr_tensor_set_f(in[0], (size_t)i, xv[i]);
  tr_tensor_set_f(in[1], 0, 10);
  tr_tensor_set_f(in[1], 1, 20);
  int failing, excused;
  double nan_pos[4] = {10, 0, 0, 20}, wrong_pos[4] = {0, 10, 20, 0};
  judge_rule(p, src, in, 2, TR_DT_F32, nan_pos, TR_PR_SELECT_NAN_ORDER, NULL, &failing, &excused);
  CHECK_EQ_INT(failing, 0);
  CHECK_EQ_INT(excused, 2);
  judge_rule(p, src, in, 2, TR_DT_F32, wrong_pos, TR_PR_SELECT_NAN_ORDER, NULL, &failing, &excused);
  CHECK_EQ_INT(failing, 2); /* the window {2, 3} holds no NaN: 3 is its pick */
  tr_profile_free(p);
  for (int i = 0; i < 2; i++) tr_tensor_free(in[i]);
  parse_err("select-nan-order\n", "p.conf:1:1: error: 'select-nan-order' takes one word, 'documented'");
}

/* excess-precision: an f16 value that overflows (a convert down, an add)
 * makes the elements computed from it uncertain in the rule's reference,
 * so a target that kept f32 there (80000 where f16 gives inf) is excused
 * on exactly those; an f16 output nothing else reads keeps its own
 * rounding (stored); a divide by zero (a pole, inf in f32 too) and an
 * overflow of f32 (not listed) are not excused; inputs without an
 * overflow give a reference equal to the plain one. */
TR_TEST(profile_excess_precision_cone) {
  tr_profile *p = parse_ok("excess-precision f16 bf16\n");
  if (!p) return;
  CHECK(p->excess[TR_DT_F16] && p->excess[TR_DT_BF16] && !p->excess[TR_DT_F32]);
  parse_err("excess-precision f32\n", "p.conf:1:18: error: 'f32' is not narrower than f32");
  parse_err("excess-precision\n", "needs the dtypes");
  static const char *src =
      "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  h = f16[4] convert(a)\n"
      "  s = f16[4] add(h, h)\n  c = f32[4] convert(s)\n  o = f16[4] multiply(h, h)\n"
      "  z = f16[4] constant({0, 0, 0, 0})\n  q = f16[4] divide(h, z)\n  dc = f32[4] convert(q)\n"
      "  k = f32[4] constant({1e36, 1e36, 1e36, 1e36})\n  f = f32[4] multiply(a, k)\n"
      "  g = f32[4] subtract(f, f)\n"
      "  ROOT t = (f32[4], f16[4], f32[4], f32[4]) tuple(c, o, dc, g)\n}\n";
  /* 40000 + 40000 overflows f16 in the add; 1e5 already in the convert
   * down; 1 and 30000 (60000 < 65504) do not. */
  double av[] = {40000, 1, 1e5, 30000};
  tr_tensor *a = vec(TR_DT_F32, av, 4);
  ref_run h;
  bool ok = run_open(&h, p, src, &a, 1, 4);
  const tr_shadow_out *xp = h.alts.alt[TR_PR_EXCESS_PRECISION];
  CHECK(xp != NULL && h.alts.nalt[TR_PR_EXCESS_PRECISION] == 4);
  if (ok && xp && h.alts.nalt[TR_PR_EXCESS_PRECISION] == 4) {
    for (int i = 0; i < 4; i++) CHECK(!h.ref[0].uncertain[i] && !h.ref[1].uncertain[i]);
    CHECK(isinf(h.ref[0].value[0]) && isinf(h.ref[0].value[2]));
    CHECK(xp[0].uncertain[0] && !xp[0].uncertain[1] && xp[0].uncertain[2] && !xp[0].uncertain[3]);
    /* o = h * h is an output only: its own overflow (40000^2, 30000^2)
     * stays certain inf; o[2] reads the convert's overflow. */
    CHECK(!xp[1].uncertain[0] && !xp[1].uncertain[1] && xp[1].uncertain[2] && !xp[1].uncertain[3]);
    CHECK(isinf(xp[1].value[0]) && isinf(xp[1].value[3]));
    /* h / 0: a pole, inf in f32 as well; only h[2]'s overflow reaches. */
    CHECK(!xp[2].uncertain[0] && !xp[2].uncertain[1] && xp[2].uncertain[2] && !xp[2].uncertain[3]);
    /* f32 40000 * 1e36 overflows f32 itself: not a listed dtype. */
    for (int i = 0; i < 4; i++) CHECK(!xp[3].uncertain[i]);
    double kept[] = {80000, 2, 2e5, 60000};
    tr_tensor *t = vec(TR_DT_F32, kept, 4);
    tr_compare_result r = run_judge(&h, 0, t, true);
    CHECK_EQ_INT(r.failing, 0);
    CHECK_EQ_INT(r.excused_by[TR_PR_EXCESS_PRECISION], 2);
    tr_tensor_set_f(t, 1, 3); /* no overflow on its path: judged */
    r = run_judge(&h, 0, t, true);
    CHECK_EQ_INT(r.failing, 1);
    r = run_judge(&h, 0, t, false); /* strict */
    CHECK_EQ_INT(r.failing, 3);
    tr_tensor_free(t);
    /* The f16 output: a finite 1.6e9 where it overflowed itself fails. */
    double ov[] = {65504, 1, 65504, 65504};
    tr_tensor *t1 = vec(TR_DT_F16, ov, 4);
    r = run_judge(&h, 1, t1, true);
    CHECK_EQ_INT(r.failing, 2); /* [0] and [3]; [2] is excused */
    CHECK_EQ_INT(r.excused_by[TR_PR_EXCESS_PRECISION], 1);
    tr_tensor_free(t1);
  }
  run_close(&h);
  tr_tensor_free(a);
  /* No overflow anywhere: the rule's reference is the plain one. */
  double bv[] = {1, 2, -3, 4};
  tr_tensor *b = vec(TR_DT_F32, bv, 4);
  ok = run_open(&h, p, src, &b, 1, 4);
  xp = h.alts.alt[TR_PR_EXCESS_PRECISION];
  CHECK(xp != NULL && h.alts.nalt[TR_PR_EXCESS_PRECISION] == h.nref);
  for (int k = 0; ok && xp && k < h.nref && k < h.alts.nalt[TR_PR_EXCESS_PRECISION]; k++)
    for (size_t i = 0; i < h.ref[k].n; i++) {
      CHECK_EQ_INT(xp[k].uncertain[i], h.ref[k].uncertain[i]);
      CHECK(xp[k].value[i] == h.ref[k].value[i] || (isnan(xp[k].value[i]) && isnan(h.ref[k].value[i])));
    }
  run_close(&h);
  tr_tensor_free(b);
  tr_profile_free(p);
}

/* fma-contraction: XLA CPU fuses a product into the add reading it, so a
 * product that overflowed from finite operands may give a finite sum
 * (f32 3e38 * 2 - 3e38 is 3.0000000055e38 there). The rule's reference
 * marks those elements uncertain, and only those: a product of an inf
 * input stays judged; a divide by a broadcast counts as a product only
 * where reciprocal-divide widens the divide (XLA's x * (1 / y)), a
 * divide by a full array never (XLA keeps it a divide: -inf). */
TR_TEST(profile_fma_contraction_overflow) {
  static const char *src =
      "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
      "  c = f32[4] parameter(2)\n  y = f32[] parameter(3)\n  q = f32[4] parameter(4)\n"
      "  m = f32[4] multiply(a, b)\n  s = f32[4] add(m, c)\n"
      "  yb = f32[4] broadcast(y), dimensions={}\n  d = f32[4] divide(a, yb)\n  e2 = f32[4] subtract(d, c)\n"
      "  dq = f32[4] divide(a, q)\n  e3 = f32[4] add(dq, c)\n"
      "  ROOT t = (f32[4], f32[4], f32[4]) tuple(s, e2, e3)\n}\n";
  double av[] = {3e38, 1, 3e38, INFINITY}, bv[] = {2, 2, 2, 2}, cv[] = {-3e38, 1, 1, -3e38}, yv[] = {-0.75},
         qv[] = {0.5, 0.5, 0.5, 0.5};
  tr_tensor *in[5] = {vec(TR_DT_F32, av, 4), vec(TR_DT_F32, bv, 4), vec(TR_DT_F32, cv, 4),
                      tr_tensor_new(TR_DT_F32, 0, NULL, NULL), vec(TR_DT_F32, qv, 4)};
  tr_tensor_set_f(in[3], 0, yv[0]);
  for (int k = 0; k < 2; k++) {
    tr_profile *p = parse_ok(k == 0 ? "fma-contraction covered\n" : "fma-contraction covered\nreciprocal-divide f32=2\n");
    if (!p) break;
    ref_run h;
    bool ok = run_open(&h, p, src, in, 5, 3);
    const tr_shadow_out *fm = h.alts.alt[TR_PR_FMA_CONTRACTION];
    CHECK(fm != NULL && h.alts.nalt[TR_PR_FMA_CONTRACTION] == 3);
    if (ok && fm && h.alts.nalt[TR_PR_FMA_CONTRACTION] == 3) {
      CHECK(isinf(h.ref[0].value[0]) && !h.ref[0].uncertain[0]);
      /* a * b: [0] and [2] overflowed; [3] is an inf input's product */
      CHECK(fm[0].uncertain[0] && !fm[0].uncertain[1] && fm[0].uncertain[2] && !fm[0].uncertain[3]);
      /* a / broadcast(y): a product under reciprocal-divide only */
      CHECK(fm[1].uncertain[0] == (k == 1) && !fm[1].uncertain[1] && fm[1].uncertain[2] == (k == 1) &&
            !fm[1].uncertain[3]);
      for (int i = 0; i < 4; i++) CHECK(!fm[2].uncertain[i]);
      double fused[] = {3.0000000055e38, 3, 3.4e38, INFINITY};
      tr_tensor *t = vec(TR_DT_F32, fused, 4);
      tr_compare_result r = run_judge(&h, 0, t, true);
      CHECK_EQ_INT(r.failing, 0);
      CHECK_EQ_INT(r.excused_by[TR_PR_FMA_CONTRACTION], 2);
      tr_tensor_set_f(t, 3, 1); /* the inf input's sum: judged */
      r = run_judge(&h, 0, t, true);
      CHECK_EQ_INT(r.failing, 1);
      r = run_judge(&h, 0, t, false); /* strict */
      CHECK_EQ_INT(r.failing, 3);
      /* the divide by a full array stays -inf or fails */
      r = run_judge(&h, 2, t, true);
      CHECK(r.failing >= 2);
      tr_tensor_free(t);
    }
    run_close(&h);
    tr_profile_free(p);
  }
  for (int i = 0; i < 5; i++) tr_tensor_free(in[i]);
}

/* excess-precision does not reach other dtypes' rounding or modules
 * without a listed dtype: no extra reference is computed for them. */
TR_TEST(profile_excess_precision_dtypes) {
  tr_profile *p = parse_ok("excess-precision bf16\n");
  if (!p) return;
  static const char *src = "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  h = f16[2] convert(a)\n"
                           "  s = f16[2] add(h, h)\n  ROOT c = f32[2] convert(s)\n}\n";
  double av[] = {40000, 1};
  tr_tensor *a = vec(TR_DT_F32, av, 2);
  ref_run h;
  if (run_open(&h, p, src, &a, 1, 1)) CHECK(h.alts.alt[TR_PR_EXCESS_PRECISION] == NULL); /* only bf16 listed */
  run_close(&h);
  tr_tensor_free(a);
  tr_profile_free(p);
  /* Inductor's profile names f16 and bf16 (converts included); XLA
   * CPU's names bf16 and the f8 types, arithmetic results only (an f8 op
   * read by a convert to f16, measured); eager torch and IREE round at
   * every op and stay judged strictly. */
  static const char *const files[] = {"torch-inductor", "xla-cpu", "torch-eager", "iree-cpu"};
  for (int k = 0; k < TR_NELEMS(files); k++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/../profiles/%s.conf", tr_test_dir, files[k]);
    tr_diag d = {0};
    tr_profile *q = NULL;
    CHECK(tr_profile_load(path, &q, &d) == TR_OK);
    tr_diag_clear(&d);
    if (!q) continue;
    CHECK(q->on[TR_PR_EXCESS_PRECISION] == (k <= 1));
    if (k == 0) CHECK(q->excess[TR_DT_F16] && q->excess[TR_DT_BF16] && !q->excess_ops);
    if (k == 1) CHECK(!q->excess[TR_DT_F16] && q->excess[TR_DT_F8E4M3FN] && q->excess[TR_DT_BF16] && q->excess_ops);
    tr_profile_free(q);
  }
}

/* excess-precision of a dtype without an infinity (XLA CPU computes an
 * f8e4m3fn op in f16 where a convert to f16 reads it): an overflow there
 * is NaN in f8 and finite in f16, and a pole (log 0) NaN in f8 and -inf
 * in f16, so both become uncertain; a NaN of a NaN operand stays certain.
 * With "ops", a convert into f8 rounds as written: its overflow (1000 ->
 * NaN) stays judged (XLA finding 37 is such a convert). */
TR_TEST(profile_excess_precision_no_infinity) {
  parse_err("excess-precision ops\n", "needs the dtypes");
  tr_profile *p = parse_ok("excess-precision ops f8e4m3fn\n");
  if (!p) return;
  CHECK(p->excess_ops && p->excess[TR_DT_F8E4M3FN]);
  static const char *src = "HloModule m\nENTRY e {\n  a = f16[4] parameter(0)\n  h = f8e4m3fn[4] convert(a)\n"
                           "  q = f8e4m3fn[4] multiply(h, h)\n  l = f8e4m3fn[4] log(h)\n"
                           "  cq = f16[4] convert(q)\n  cl = f16[4] convert(l)\n  ch = f16[4] convert(h)\n"
                           "  ROOT t = (f16[4], f16[4], f16[4]) tuple(cq, cl, ch)\n}\n";
  double av[] = {30, 0, 2, 1000};
  tr_tensor *a = vec(TR_DT_F16, av, 4);
  ref_run h;
  if (run_open(&h, p, src, &a, 1, 3)) {
    const tr_shadow_out *xp = h.alts.alt[TR_PR_EXCESS_PRECISION];
    CHECK(xp != NULL && h.alts.nalt[TR_PR_EXCESS_PRECISION] == 3);
    if (xp && h.alts.nalt[TR_PR_EXCESS_PRECISION] == 3) {
      /* 30*30 = 900 > 448: NaN in f8; 0, 2: fit; 1000 converts to NaN
       * (a convert: rounds), so its product's NaN has a NaN operand. */
      CHECK(xp[0].uncertain[0] && !xp[0].uncertain[1] && !xp[0].uncertain[2] && !xp[0].uncertain[3]);
      /* log(0) = -inf: NaN in f8 */
      CHECK(!xp[1].uncertain[0] && xp[1].uncertain[1] && !xp[1].uncertain[2] && !xp[1].uncertain[3]);
      for (int i = 0; i < 4; i++) CHECK(!xp[2].uncertain[i]);
    }
  }
  run_close(&h);
  tr_tensor_free(a);
  tr_profile_free(p);
}

/* excess-precision through sums and contractions: an f16 add reduce and
 * a dot whose sums pass 65504 (f32 keeps them; each term fits, so the
 * plain reference is a certain inf) make their consumers uncertain; the
 * same ops on values whose sums fit do not. */
TR_TEST(profile_excess_precision_sums) {
  tr_profile *p = parse_ok("excess-precision f16\n");
  if (!p) return;
  static const char *src =
      "HloModule m\nadd {\n  x = f16[] parameter(0)\n  y = f16[] parameter(1)\n  ROOT s = f16[] add(x, y)\n}\n"
      "ENTRY e {\n  a = f32[2] parameter(0)\n  h = f16[2] convert(a)\n  z = f16[] constant(0)\n"
      "  s = f16[] reduce(h, z), dimensions={0}, to_apply=add\n  cs = f32[] convert(s)\n"
      "  g = f16[2] constant({1, 1})\n"
      "  d = f16[] dot(h, g), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n  cd = f32[] convert(d)\n"
      "  ROOT t = (f32[], f32[]) tuple(cs, cd)\n}\n";
  double over[] = {40000, 40000}, fit[] = {100, 200};
  for (int k = 0; k < 2; k++) {
    tr_tensor *a = vec(TR_DT_F32, k == 0 ? over : fit, 2);
    ref_run h;
    const tr_shadow_out *xp = run_open(&h, p, src, &a, 1, 2) ? h.alts.alt[TR_PR_EXCESS_PRECISION] : NULL;
    CHECK(xp != NULL && h.alts.nalt[TR_PR_EXCESS_PRECISION] == 2);
    if (xp && h.alts.nalt[TR_PR_EXCESS_PRECISION] == 2) {
      if (k == 0) CHECK(isinf(xp[0].value[0]) && isinf(xp[1].value[0]));
      CHECK_EQ_INT(xp[0].uncertain[0], k == 0); /* 80000, or 300 */
      CHECK_EQ_INT(xp[1].uncertain[0], k == 0); /* 80000, or 300 */
    }
    run_close(&h);
    tr_tensor_free(a);
  }
  tr_profile_free(p);
}
