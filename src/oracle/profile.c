/* profile.c - the profile config format of profile.h (docs/PROFILES.md):
 * one rule per line, words separated by blanks, '#' to the end of a line
 * is a comment.
 *   target NAME
 *   denormal-flush DTYPE...
 *   fast-minmax DTYPE...
 *   transcendental-ulps DTYPE OP=ULPS...
 *   reciprocal-divide DTYPE=ULPS...
 *   fma-contraction covered
 *   reordered-reduction covered
 *   log-exp-fold DTYPE...
 *   int-conv-wrap DTYPE...
 *   flush-results DTYPE OP...
 *   conv-zero-pad DTYPE...
 *   narrow-in-f32 DTYPE...
 *   dot-accumulate DTYPE=ACC...
 *   reduce-init-identity documented
 *   convert-out-of-range DTYPE...  integer result dtypes
 *   int-power-unit-base DTYPE...   signed integer dtypes
 *   select-nan-order documented
 *   excess-precision [ops] DTYPE... float dtypes narrower than f32
 *   contract DTYPE OP=ULPS...      the target's stated accuracy
 *   release VER                    the release a plain target name runs
 *   @VER[,VER...] RULE ...         a rule for those releases only */
#include "profile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const k_rule_names[TR_PR_COUNT] = {
  "denormal-flush", "fast-minmax", "transcendental-ulps", "reciprocal-divide",
  "fma-contraction", "reordered-reduction", "log-exp-fold", "int-conv-wrap",
  "flush-results", "conv-zero-pad", "narrow-in-f32", "dot-accumulate",
  "reduce-init-identity", "convert-out-of-range", "int-power-unit-base",
  "select-nan-order", "excess-precision",
};

const char *tr_prule_name(tr_prule r) {
  return (unsigned)r < TR_PR_COUNT ? k_rule_names[r] : "?";
}

bool tr_prule_lookup(const char *s, size_t n, tr_prule *r) {
  for (int i = 0; i < TR_PR_COUNT; i++)
    if (strlen(k_rule_names[i]) == n && memcmp(k_rule_names[i], s, n) == 0) {
      *r = (tr_prule)i;
      return true;
    }
  return false;
}

double tr_min_normal(tr_dtype dt) {
  const tr_dtype_info *f = &tr_dtypes[dt];
  if (f->kind != TR_DK_FLOAT) return 0;
  return ldexp(1.0, 1 - f->bias);
}

/* A word of a line: where it starts (for the caret) and how long it is. */
typedef struct {
  const char *s;
  size_t n;
} word;

enum { MAX_WORDS = 64 };

static bool word_is(word w, const char *s) { return strlen(s) == w.n && memcmp(w.s, s, w.n) == 0; }

typedef struct {
  tr_src src;
  tr_diag *d;
  tr_profile *p;
  int errors;
  const char *(*ulps_at)[TR_DT_COUNT]; /* where each allowance was written */
} parser;

static void err(parser *ps, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void err(parser *ps, const char *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tr_diag_vat(ps->d, &ps->src, (size_t)(at - ps->src.text), fmt, ap);
  va_end(ap);
  ps->errors++;
}

static bool float_dtype(parser *ps, word w, tr_dtype *dt) {
  if (!tr_dtype_lookup(w.s, w.n, dt)) {
    err(ps, w.s, "'%.*s' is not a dtype", (int)w.n, w.s);
    return false;
  }
  if (!tr_dtype_is_float(*dt)) {
    err(ps, w.s, "'%.*s' is not a float dtype", (int)w.n, w.s);
    return false;
  }
  return true;
}

/* ULPS of KEY=ULPS: a number in (0, 1e9]. */
static bool ulps_value(parser *ps, const char *s, size_t n, float *out) {
  char buf[64];
  char *end;
  if (n == 0 || n >= sizeof buf) goto bad;
  memcpy(buf, s, n);
  buf[n] = 0;
  double v = strtod(buf, &end);
  if (*end || !(v > 0) || v > 1e9) goto bad;
  *out = (float)v;
  return true;
bad:
  err(ps, s, "'%.*s' is not an ulp count (a number above 0)", (int)n, s);
  return false;
}

static void set_ulps(parser *ps, const char *at, tr_prule r, tr_op op, tr_dtype dt, float u) {
  ps->p->ulps[op][dt] = u;
  ps->p->ulps_rule[op][dt] = r;
  ps->ulps_at[op][dt] = at;
}

/* OP=ULPS words from w[from] on for dtype dt into the allowance table (r)
 * or, r == TR_PR_COUNT, into the contract. */
static void op_ulps(parser *ps, word *w, int from, int nw, tr_prule r, tr_dtype dt) {
  for (int i = from; i < nw; i++) {
    const char *eq = memchr(w[i].s, '=', w[i].n);
    tr_op op;
    float u;
    if (!eq) {
      err(ps, w[i].s, "expected OP=ULPS, not '%.*s'", (int)w[i].n, w[i].s);
      continue;
    }
    if (!tr_op_lookup(w[i].s, (size_t)(eq - w[i].s), &op)) {
      err(ps, w[i].s, "'%.*s' is not an opcode", (int)(eq - w[i].s), w[i].s);
      continue;
    }
    if (!ulps_value(ps, eq + 1, w[i].n - (size_t)(eq + 1 - w[i].s), &u)) continue;
    if (r == TR_PR_COUNT) ps->p->contract[op][dt] = u;
    else set_ulps(ps, w[i].s, r, op, dt, u);
  }
}

static void parse_line(parser *ps, word *w, int nw) {
  tr_profile *p = ps->p;
  tr_prule r;
  if (word_is(w[0], "target")) {
    if (nw != 2) {
      err(ps, w[0].s, "'target' takes one name");
      return;
    }
    if (p->target) {
      err(ps, w[0].s, "a second 'target' line");
      return;
    }
    p->target = tr_xmalloc(w[1].n + 1);
    memcpy(p->target, w[1].s, w[1].n);
    p->target[w[1].n] = 0;
    return;
  }
  if (word_is(w[0], "contract")) {
    tr_dtype dt;
    if (nw < 3) {
      err(ps, w[0].s, "'contract' needs a dtype and OP=ULPS pairs");
      return;
    }
    if (float_dtype(ps, w[1], &dt)) op_ulps(ps, w, 2, nw, TR_PR_COUNT, dt);
    return;
  }
  if (word_is(w[0], "release")) {
    /* Read before the other lines (release_line): keys need it. */
    if (nw != 2) err(ps, w[0].s, "'release' takes one version");
    return;
  }
  if (!tr_prule_lookup(w[0].s, w[0].n, &r)) {
    err(ps, w[0].s,
        "unknown rule '%.*s' (known: target, contract, release, denormal-flush, fast-minmax, transcendental-ulps, "
        "reciprocal-divide, fma-contraction, reordered-reduction, log-exp-fold, int-conv-wrap, "
        "flush-results, conv-zero-pad, narrow-in-f32, dot-accumulate, reduce-init-identity, "
        "convert-out-of-range, int-power-unit-base, select-nan-order, excess-precision)",
        (int)w[0].n, w[0].s);
    return;
  }
  switch (r) {
  case TR_PR_DENORMAL_FLUSH:
  case TR_PR_FAST_MINMAX: {
    if (nw < 2) {
      err(ps, w[0].s, "'%s' needs the dtypes it applies to", tr_prule_name(r));
      return;
    }
    for (int i = 1; i < nw; i++) {
      tr_dtype dt;
      if (!float_dtype(ps, w[i], &dt)) continue;
      if (r == TR_PR_DENORMAL_FLUSH) p->flush[dt] = true;
      else p->minmax[dt] = true;
    }
    break;
  }
  case TR_PR_TRANSCENDENTAL_ULPS: {
    tr_dtype dt;
    if (nw < 3) {
      err(ps, w[0].s, "'%s' needs a dtype and OP=ULPS pairs", tr_prule_name(r));
      return;
    }
    if (!float_dtype(ps, w[1], &dt)) return;
    op_ulps(ps, w, 2, nw, r, dt);
    break;
  }
  case TR_PR_RECIPROCAL_DIVIDE: {
    if (nw < 2) {
      err(ps, w[0].s, "'%s' needs DTYPE=ULPS pairs", tr_prule_name(r));
      return;
    }
    for (int i = 1; i < nw; i++) {
      const char *eq = memchr(w[i].s, '=', w[i].n);
      tr_dtype dt;
      float u;
      if (!eq) {
        err(ps, w[i].s, "expected DTYPE=ULPS, not '%.*s'", (int)w[i].n, w[i].s);
        continue;
      }
      if (!float_dtype(ps, (word){w[i].s, (size_t)(eq - w[i].s)}, &dt)) continue;
      if (ulps_value(ps, eq + 1, w[i].n - (size_t)(eq + 1 - w[i].s), &u))
        set_ulps(ps, w[i].s, r, TR_OP_DIVIDE, dt, u);
    }
    break;
  }
  case TR_PR_LOG_EXP_FOLD:
  case TR_PR_CONV_ZERO_PAD:
  case TR_PR_INT_CONV_WRAP: {
    bool ints = r == TR_PR_INT_CONV_WRAP;
    if (nw < 2) {
      err(ps, w[0].s, "'%s' needs the dtypes it applies to", tr_prule_name(r));
      return;
    }
    for (int i = 1; i < nw; i++) {
      tr_dtype dt;
      if (!ints) {
        if (float_dtype(ps, w[i], &dt)) {
          if (r == TR_PR_LOG_EXP_FOLD) p->fold[dt] = true;
          else p->zpad[dt] = true;
        }
        continue;
      }
      if (!tr_dtype_lookup(w[i].s, w[i].n, &dt)) {
        err(ps, w[i].s, "'%.*s' is not a dtype", (int)w[i].n, w[i].s);
      } else if (!tr_dtype_is_int(dt) || tr_dtypes[dt].bits >= 64) {
        err(ps, w[i].s, "'%.*s' is not an integer dtype narrower than 64 bits", (int)w[i].n, w[i].s);
      } else {
        p->wrap[dt] = true;
      }
    }
    break;
  }
  case TR_PR_CONVERT_OUT_OF_RANGE: {
    /* Not a measured deviation but the specification's own gap
     * (StableHLO, convert: "If the truncated value cannot be represented
     * in the destination type, the behavior is TBD"). */
    if (nw < 2) {
      err(ps, w[0].s, "'%s' needs the integer dtypes it applies to", tr_prule_name(r));
      return;
    }
    for (int i = 1; i < nw; i++) {
      tr_dtype dt;
      if (!tr_dtype_lookup(w[i].s, w[i].n, &dt)) err(ps, w[i].s, "'%.*s' is not a dtype", (int)w[i].n, w[i].s);
      else if (!tr_dtype_is_int(dt)) err(ps, w[i].s, "'%.*s' is not an integer dtype", (int)w[i].n, w[i].s);
      else p->cvt_undef[dt] = true;
    }
    break;
  }
  case TR_PR_INT_POWER_UNIT_BASE: {
    /* A difference of specifications, not a measurement: XLA's power of
     * a signed integer to a negative exponent is 0 unless the base is 1;
     * StableHLO's interpreter (stablehlo/reference/Element.cpp, power)
     * takes a base of -1 to the absolute exponent. */
    if (nw < 2) {
      err(ps, w[0].s, "'%s' needs the signed integer dtypes it applies to", tr_prule_name(r));
      return;
    }
    for (int i = 1; i < nw; i++) {
      tr_dtype dt;
      if (!tr_dtype_lookup(w[i].s, w[i].n, &dt)) err(ps, w[i].s, "'%.*s' is not a dtype", (int)w[i].n, w[i].s);
      else if (tr_dtypes[dt].kind != TR_DK_SINT)
        err(ps, w[i].s, "'%.*s' is not a signed integer dtype", (int)w[i].n, w[i].s);
      else p->ipow_unit[dt] = true;
    }
    break;
  }
  case TR_PR_NARROW_IN_F32:
  case TR_PR_EXCESS_PRECISION: {
    if (nw < 2) {
      err(ps, w[0].s, "'%s' needs the dtypes it applies to", tr_prule_name(r));
      return;
    }
    int first = 1;
    /* "ops": only arithmetic results keep the excess precision; a convert
     * into a listed dtype rounds (and overflows) as written (XLA CPU). */
    if (r == TR_PR_EXCESS_PRECISION && w[1].n == 3 && memcmp(w[1].s, "ops", 3) == 0) {
      p->excess_ops = true;
      first = 2;
      if (nw < 3) err(ps, w[1].s, "'%s ops' needs the dtypes it applies to", tr_prule_name(r));
    }
    for (int i = first; i < nw; i++) {
      tr_dtype dt;
      if (!float_dtype(ps, w[i], &dt)) continue;
      if (tr_dtypes[dt].bits >= 32) err(ps, w[i].s, "'%.*s' is not narrower than f32", (int)w[i].n, w[i].s);
      else if (r == TR_PR_NARROW_IN_F32) p->narrow[dt] = true;
      else p->excess[dt] = true;
    }
    break;
  }
  case TR_PR_DOT_ACCUMULATE: {
    if (nw < 2) {
      err(ps, w[0].s, "'%s' needs DTYPE=ACC pairs", tr_prule_name(r));
      return;
    }
    for (int i = 1; i < nw; i++) {
      const char *eq = memchr(w[i].s, '=', w[i].n);
      tr_dtype dt, acc;
      if (!eq) {
        err(ps, w[i].s, "expected DTYPE=ACC, not '%.*s'", (int)w[i].n, w[i].s);
        continue;
      }
      word a = {eq + 1, w[i].n - (size_t)(eq + 1 - w[i].s)};
      if (!float_dtype(ps, (word){w[i].s, (size_t)(eq - w[i].s)}, &dt) || !float_dtype(ps, a, &acc)) continue;
      if (tr_dtypes[acc].bits <= tr_dtypes[dt].bits)
        err(ps, a.s, "'%.*s' is not wider than '%s'", (int)a.n, a.s, tr_dtypes[dt].name);
      else p->dot_acc[dt] = acc;
    }
    break;
  }
  case TR_PR_FLUSH_RESULTS: {
    tr_dtype dt;
    if (nw < 3) {
      err(ps, w[0].s, "'%s' needs a dtype and the opcodes it applies to", tr_prule_name(r));
      return;
    }
    if (!float_dtype(ps, w[1], &dt)) return;
    for (int i = 2; i < nw; i++) {
      tr_op op;
      if (!tr_op_lookup(w[i].s, w[i].n, &op)) err(ps, w[i].s, "'%.*s' is not an opcode", (int)w[i].n, w[i].s);
      else p->flushres[op][dt] = true;
    }
    break;
  }
  case TR_PR_REDUCE_INIT_IDENTITY:
  case TR_PR_SELECT_NAN_ORDER:
    /* Specifications, not measurements. reduce-init-identity: XLA's
     * contract, reduce and reduce-window take an init that is an identity
     * of the reducer, and the simplifier relies on it (a reduce over
     * size-1 dims becomes a reshape). select-nan-order: StableHLO selects
     * through a reduce_window, whose order is implementation-defined. */
    if (nw != 2 || !word_is(w[1], "documented")) {
      err(ps, w[0].s, "'%s' takes one word, 'documented' (the target's stated contract)",
          tr_prule_name(r));
      return;
    }
    break;
  case TR_PR_FMA_CONTRACTION:
  case TR_PR_REORDERED_REDUCTION:
    /* Measured and found inside the default bounds of a whole module:
     * the line records that. Per-instruction checks read fma-contraction
     * as an input allowance (tr_profile_input_ulps). */
    if (nw != 2 || !word_is(w[1], "covered")) {
      err(ps, w[0].s, "'%s' takes one word, 'covered' (the default bounds cover it)",
          tr_prule_name(r));
      return;
    }
    break;
  case TR_PR_COUNT: return;
  }
  p->on[r] = true;
}

/* Whether the key word "@V1,V2" names release rel. */
static bool key_names(word k, const char *rel) {
  size_t rl = strlen(rel), i = 1;
  while (i < k.n) {
    size_t j = i;
    while (j < k.n && k.s[j] != ',') j++;
    if (j - i == rl && memcmp(k.s + i, rel, rl) == 0) return true;
    i = j + 1;
  }
  return false;
}

/* The "release VER" line of a profile text, if any (heap), before the
 * keyed lines are sorted out. */
static char *release_line(const char *text, size_t len) {
  size_t i = 0;
  while (i < len) {
    size_t eol = i;
    while (eol < len && text[eol] != '\n') eol++;
    size_t j = i;
    while (j < eol && (text[j] == ' ' || text[j] == '\t')) j++;
    if (eol - j > 8 && !strncmp(text + j, "release", 7) && (text[j + 7] == ' ' || text[j + 7] == '\t')) {
      j += 7;
      while (j < eol && (text[j] == ' ' || text[j] == '\t')) j++;
      size_t s = j;
      while (j < eol && text[j] != ' ' && text[j] != '\t' && text[j] != '\r' && text[j] != '#') j++;
      char *r = tr_xmalloc(j - s + 1);
      memcpy(r, text + s, j - s);
      r[j - s] = 0;
      return r;
    }
    i = eol + 1;
  }
  return NULL;
}

tr_status tr_profile_parse_release(const char *file, const char *text, size_t len,
                                   const char *release, tr_profile **out, tr_diag *d) {
  *out = NULL;
  parser ps = {{file, text, len}, d, tr_xcalloc(1, sizeof(tr_profile)), 0, NULL};
  ps.ulps_at = tr_xcalloc(TR_OP_COUNT, sizeof *ps.ulps_at);
  ps.p->file = tr_xstrdup(file);
  char *deflt = release ? NULL : release_line(text, len);
  const char *rel = release ? release : deflt;
  size_t i = 0;
  while (i < len) {
    size_t eol = i;
    while (eol < len && text[eol] != '\n') eol++;
    word w[MAX_WORDS];
    int nw = 0;
    size_t j = i;
    while (j < eol) {
      while (j < eol && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r')) j++;
      if (j >= eol || text[j] == '#') break;
      size_t s = j;
      while (j < eol && text[j] != ' ' && text[j] != '\t' && text[j] != '\r' && text[j] != '#') j++;
      if (nw == MAX_WORDS) {
        err(&ps, text + s, "more than %d words on a line", MAX_WORDS);
        nw = 0;
        break;
      }
      w[nw++] = (word){text + s, j - s};
    }
    if (nw && w[0].n && w[0].s[0] == '@') {
      /* A release key: the rest of the line for those releases only. */
      if (w[0].n < 2 || nw < 2) err(&ps, w[0].s, "'@' needs releases and a rule after them");
      else if (rel && key_names(w[0], rel)) parse_line(&ps, w + 1, nw - 1);
    } else if (nw) {
      parse_line(&ps, w, nw);
    }
    i = eol + 1;
  }
  /* No allowance beyond its stated contract: measuring a release and
   * widening to fit would ratify its bugs (docs/PROFILES.md). */
  for (int op = 0; op < TR_OP_COUNT; op++)
    for (int dt = 0; dt < TR_DT_COUNT; dt++) {
      float c = ps.p->contract[op][dt], u = ps.p->ulps[op][dt];
      if (c > 0 && u > c && ps.ulps_at[op][dt])
        err(&ps, ps.ulps_at[op][dt], "%s %s=%g exceeds its contract, %g ulps (a 'contract %s' line)",
            tr_prule_name(ps.p->ulps_rule[op][dt]), tr_ops[op].name, u, c, tr_dtypes[dt].name);
    }
  tr_free(ps.ulps_at);
  if (rel) ps.p->release = tr_xstrdup(rel);
  tr_free(deflt);
  if (ps.errors) {
    tr_profile_free(ps.p);
    return TR_ERR_SYNTAX;
  }
  *out = ps.p;
  return TR_OK;
}

tr_status tr_profile_parse(const char *file, const char *text, size_t len, tr_profile **out,
                           tr_diag *d) {
  return tr_profile_parse_release(file, text, len, NULL, out, d);
}

tr_status tr_profile_load_release(const char *path, const char *release, tr_profile **out,
                                  tr_diag *d) {
  char *text;
  size_t len;
  *out = NULL;
  tr_status s = tr_read_file(path, &text, &len, d);
  if (s != TR_OK) return s;
  s = tr_profile_parse_release(path, text, len, release, out, d);
  tr_free(text);
  return s;
}

tr_status tr_profile_load(const char *path, tr_profile **out, tr_diag *d) {
  char *text;
  size_t len;
  *out = NULL;
  tr_status s = tr_read_file(path, &text, &len, d);
  if (s != TR_OK) return s;
  s = tr_profile_parse(path, text, len, out, d);
  tr_free(text);
  return s;
}

void tr_profile_free(tr_profile *p) {
  if (!p) return;
  tr_free(p->file);
  tr_free(p->target);
  tr_free(p->release);
  tr_free(p);
}

void tr_profile_ulp_table(const tr_profile *p, unsigned mask, tr_ulp_table *t) {
  tr_ulp_table_default(t);
  if (!p) return;
  for (int op = 0; op < TR_OP_COUNT; op++)
    for (int dt = 0; dt < TR_DT_COUNT; dt++) {
      float u = p->ulps[op][dt];
      if (u > 0 && (mask & (1u << p->ulps_rule[op][dt])) && p->on[p->ulps_rule[op][dt]] &&
          u > t->ulps[op][dt])
        t->ulps[op][dt] = u;
      float c = p->contract[op][dt];
      if (c > 0 && t->ulps[op][dt] > c) t->ulps[op][dt] = c;
    }
}

double tr_profile_input_ulps(const tr_profile *p, tr_prule r, tr_dtype dt) {
  if (!p || !p->on[r] || !tr_dtype_is_float(dt)) return 0;
  if (r == TR_PR_NARROW_IN_F32) return p->narrow[dt] ? 0.5 : 0;
  if (r == TR_PR_FMA_CONTRACTION) return 0.5;
  return 0;
}

bool tr_profile_widens(const tr_profile *p, tr_prule r, tr_op op, tr_dtype dt) {
  if (!p || !p->on[r] || !(p->ulps[op][dt] > 0) || p->ulps_rule[op][dt] != r) return false;
  tr_ulp_table def;
  tr_ulp_table_default(&def);
  return p->ulps[op][dt] > def.ulps[op][dt];
}

bool tr_profile_widens_module(const tr_profile *p, tr_prule r, const tr_module *m) {
  for (int k = 0; k < m->ncomps; k++)
    for (int i = 0; i < m->comps[k]->ninstrs; i++) {
      const tr_instr *in = m->comps[k]->instrs[i];
      if (in->shape && tr_dtype_is_float(in->shape->dtype) &&
          tr_profile_widens(p, r, in->op, in->shape->dtype))
        return true;
    }
  return false;
}
