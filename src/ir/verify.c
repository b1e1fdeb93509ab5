/* verify.c - the module verifier: walks a module and reports every
 * structural problem it finds, each located at its instruction (operand
 * counts and order, attributes, called computations, parameters, and the
 * declared shape against tr_infer_shape), so that a module that passes can
 * be evaluated, compiled and printed without further checks. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>
/* ---- the verifier ---- */
#define MAX_ERRORS 20

typedef struct {
  const tr_module *m;   /* module being checked */
  tr_diag *d;           /* where problems go */
  const char *file;     /* file name for messages */
  int nerrs;            /* problems found so far */
  int nids;             /* size of the id maps */
  const tr_comp **comp; /* id -> computation of the module */
  unsigned char *seen;  /* id -> instruction defined already (in walk order) */
  tr_arena *a;          /* inferred shapes, freed at the end */
  const tr_instr **holder; /* check_params' table (here, so a jump frees it) */
} vctx;

static void report(vctx *v, int line, int col, const char *what, const char *name,
                   const char *fmt, va_list ap) {
  v->nerrs++;
  if (v->nerrs > MAX_ERRORS) {
    if (v->nerrs == MAX_ERRORS + 1)
      tr_diag_errorf(v->d, "%s: error: too many errors; stopping after %d", v->file, MAX_ERRORS);
    return;
  }
  tr_buf b = {0};
  if (line > 0) tr_buf_printf(&b, "%s:%d:%d: error: ", v->file, line, col);
  else tr_buf_printf(&b, "%s: error: ", v->file);
  if (name) tr_buf_printf(&b, "in %s%s: ", what, name);
  tr_buf_vprintf(&b, fmt, ap);
  tr_diag_errorf(v->d, "%s", tr_buf_str(&b));
  tr_buf_free(&b);
}

static void ierr(vctx *v, const tr_instr *in, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void ierr(vctx *v, const tr_instr *in, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(v, in->line, in->col, "%", in->name, fmt, ap);
  va_end(ap);
}

static void cerr(vctx *v, const tr_comp *k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cerr(vctx *v, const tr_comp *k, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(v, k ? k->line : 0, k ? k->col : 0, "computation %", k ? k->name : NULL, fmt, ap);
  va_end(ap);
}

static void merr(vctx *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void merr(vctx *v, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(v, 0, 0, "", NULL, fmt, ap);
  va_end(ap);
}

static bool in_module(const vctx *v, const tr_comp *k) {
  return k && k->id >= 0 && k->id < v->nids && v->comp[k->id] == k;
}

/* Attribute problems of one instruction; returns false when inference
 * should not be attempted. */
static bool check_attrs(vctx *v, const tr_instr *in, const char *opname) {
  bool ok = true;
  for (int i = 0; i < in->nattrs; i++) {
    const tr_attr *at = &in->attrs[i];
    if (at->key == TR_ATTR_RAW) continue;
    if ((int)at->key < 0 || at->key > TR_ATTR_RAW) {
      ierr(v, in, "attribute %s has an unknown key", at->name ? at->name : "?");
      ok = false;
      continue;
    }
    const tr_attr_info *ai = &tr_attrs[at->key];
    if (at->kind != ai->kind) {
      ierr(v, in, "attribute %s holds the wrong kind of value", ai->name);
      ok = false;
      continue;
    }
    switch (at->kind) {
    case TR_AK_IDENT:
      if (!at->u.s || (ai->allowed && !tr_attr_value_allowed(ai->allowed, at->u.s))) {
        ierr(v, in, "%s=%s is not one of %s", ai->name, at->u.s ? at->u.s : "", ai->allowed);
        ok = false;
      }
      break;
    case TR_AK_COMP:
      if (!in_module(v, at->u.comp)) {
        ierr(v, in, "%s names a computation that is not in the module", ai->name);
        ok = false;
      }
      break;
    case TR_AK_COMPS:
      for (int k = 0; k < at->n; k++)
        if (!in_module(v, at->u.comps[k])) {
          ierr(v, in, "%s entry %d names a computation that is not in the module", ai->name, k);
          ok = false;
        }
      break;
    case TR_AK_INSTRS:
      for (int k = 0; k < at->n; k++)
        if (!at->u.instrs[k] || at->u.instrs[k]->parent != in->parent) {
          ierr(v, in, "%s entry %d is not an instruction of this computation", ai->name, k);
          ok = false;
        }
      break;
    default: break;
    }
  }
  /* Required attributes: the '+' entries of the op's ops.def list. */
  for (const char *p = tr_ops[in->op].attrs; *p;) {
    while (*p == ' ') p++;
    bool req = *p == '+';
    if (req) p++;
    const char *e = p;
    while (*e && *e != ' ') e++;
    tr_attr_key k;
    if (req && e > p && tr_attr_lookup(p, (size_t)(e - p), &k) && !tr_instr_attr(in, k)) {
      ierr(v, in, "%s needs attribute %s", opname, tr_attrs[k].name);
      ok = false;
    }
    p = e;
  }
  return ok;
}

/* fft's types and dims as XLA's InferFftShape has them: FFT and IFFT keep
 * the complex operand's shape; RFFT takes f32/f64 whose innermost dims
 * are fft_length and gives c64/c128 with fft_length[-1]/2+1 last; IRFFT
 * takes complex with fft_length[-1]/2+1 last and gives the component
 * type with fft_length[-1] last. */
static void check_fft(vctx *v, const tr_instr *in, const tr_shape *a, const tr_shape *s) {
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_FFT_TYPE), *la = tr_instr_attr(in, TR_ATTR_FFT_LENGTH);
  if (!ta || !la || !ta->u.s) return; /* required attributes: reported elsewhere */
  const char *t = ta->u.s;
  bool rfft = strcmp(t, "RFFT") == 0, irfft = strcmp(t, "IRFFT") == 0;
  bool cplx = tr_dtypes[a->dtype].kind == TR_DK_COMPLEX;
  int r = la->n;
  if (r < 1 || r > 3 || a->rank < r) {
    ierr(v, in, "fft_length has %d entries for an operand of rank %d; XLA takes 1 to 3, at most the rank", r, a->rank);
    return;
  }
  tr_dtype want = a->dtype;
  if (rfft) {
    if (a->dtype != TR_DT_F32 && a->dtype != TR_DT_F64) {
      ierr(v, in, "fft_type=RFFT of %s: XLA takes f32 or f64", tr_dtype_name(a->dtype));
      return;
    }
    want = a->dtype == TR_DT_F32 ? TR_DT_C64 : TR_DT_C128;
  } else {
    if (!cplx) {
      ierr(v, in, "fft_type=%s of %s: XLA takes c64 or c128", t, tr_dtype_name(a->dtype));
      return;
    }
    if (irfft) want = a->dtype == TR_DT_C64 ? TR_DT_F32 : TR_DT_F64;
  }
  bool ok = s->dtype == want && s->rank == a->rank;
  for (int i = 0; ok && i < a->rank; i++) {
    int k = i - (a->rank - r);
    int64_t wa = a->dims[i], ws = a->dims[i];
    if (k >= 0 && (rfft || irfft)) {
      int64_t L = la->u.ints[k];
      bool last = i == a->rank - 1;
      wa = rfft || !last ? L : L / 2 + 1;
      ws = irfft || !last ? L : L / 2 + 1;
    }
    ok = a->dims[i] == wa && s->dims[i] == ws;
  }
  if (!ok) {
    ierr(v, in, "fft_type=%s with fft_length of %d entries does not take this operand to this result "
         "(XLA's InferFftShape)", t, r);
  }
}

/* Element types XLA's shape inference and HLO verifier reject though the
 * shape rules here would allow them (xla/service/shape_inference.cc,
 * InferUnaryOpShape kReal/kImag, InferBinaryOpShape kComplex,
 * InferBitcastConvertShape; hlo_verifier.cc HandleIota). */
static void check_xla_types(vctx *v, const tr_instr *in, const char *opname) {
  const tr_shape *s = in->shape, *a = in->noperands > 0 ? in->operands[0]->shape : NULL;
  const tr_shape *b = in->noperands > 1 ? in->operands[1]->shape : NULL;
  bool arr_a = a && tr_shape_is_array(a), arr_b = b && tr_shape_is_array(b);
  switch (in->op) {
  case TR_OP_REAL: case TR_OP_IMAG:
    if (arr_a && !tr_dtype_is_float(a->dtype) && tr_dtypes[a->dtype].kind != TR_DK_COMPLEX)
      ierr(v, in, "%s of %s: XLA takes only float or complex operands", opname,
           tr_dtype_name(a->dtype));
    break;
  case TR_OP_COMPLEX:
    if (arr_a && arr_b && !((a->dtype == TR_DT_F32 || a->dtype == TR_DT_F64) && b->dtype == a->dtype))
      ierr(v, in, "complex of %s and %s: XLA builds c64 from f32 and c128 from f64 parts only", tr_dtype_name(a->dtype),
           tr_dtype_name(b->dtype));
    break;
  case TR_OP_IOTA:
    if (s && tr_shape_is_array(s) && s->dtype == TR_DT_PRED)
      ierr(v, in, "iota of pred: XLA makes iotas of integer, float and complex types only");
    break;
  case TR_OP_BITCAST_CONVERT:
    if (arr_a && s && tr_shape_is_array(s) &&
        (tr_dtypes[a->dtype].kind == TR_DK_COMPLEX) != (tr_dtypes[s->dtype].kind == TR_DK_COMPLEX))
      ierr(v, in, "bitcast-convert from %s to %s: XLA does not convert between complex and real types",
           tr_dtype_name(a->dtype), tr_dtype_name(s->dtype));
    break;
  case TR_OP_FFT:
    if (arr_a && s && tr_shape_is_array(s)) check_fft(v, in, a, s);
    break;
  default: break;
  }
}

static void check_instr(vctx *v, const tr_comp *k, const tr_instr *in) {
  const char *opname = in->opname && in->opname[0] ? in->opname : tr_ops[in->op].name;
  bool ok = true;
  if (!in->shape) {
    ierr(v, in, "instruction has no shape");
    ok = false;
  }
  for (int i = 0; i < in->noperands; i++) {
    const tr_instr *o = in->operands[i];
    if (!o) {
      ierr(v, in, "operand %d is missing", i);
      ok = false;
    } else if (o->parent != k) {
      ierr(v, in, "operand %d (%%%s) is not in computation %s", i, o->name, k->name);
      ok = false;
    } else if (o->id >= 0 && o->id < v->nids && !v->seen[o->id]) {
      ierr(v, in, "operand %d (%%%s) is used before it is defined", i, o->name);
      ok = false;
    }
  }
  int arity = tr_instr_arity(in);
  if (arity >= 0 && in->noperands != arity) {
    ierr(v, in, "%s takes %d operand(s) but has %d", opname, arity, in->noperands);
    ok = false;
  }
  if (!check_attrs(v, in, opname)) ok = false;
  if (ok) check_xla_types(v, in, opname);
  if (ok) {
    tr_buf why = {0};
    tr_shape *s = tr_infer_shape(v->a, in, &why);
    if (!s) {
      if (tr_ops[in->op].rule != TR_RULE_DECLARED || why.n)
        ierr(v, in, "%s", why.n ? tr_buf_str(&why) : "cannot infer the shape");
    } else if (!tr_shape_compatible(in->shape, s)) {
      tr_buf b1 = {0}, b2 = {0};
      tr_shape_print(&b1, in->shape, false);
      tr_shape_print(&b2, s, false);
      ierr(v, in, "declared shape %s but operands give %s", tr_buf_str(&b1), tr_buf_str(&b2));
      tr_buf_free(&b1);
      tr_buf_free(&b2);
    }
    tr_buf_free(&why);
  }
  if (in->id >= 0 && in->id < v->nids) v->seen[in->id] = 1;
}

/* Parameters must be numbered 0..n-1 without gaps or repeats, and the
 * computation's parameter table must agree with them. */
static void check_params(vctx *v, const tr_comp *k) {
  int np = 0;
  bool numbered = true;
  for (int i = 0; i < k->ninstrs; i++)
    if (k->instrs[i]->op == TR_OP_PARAMETER) np++;
  v->holder = tr_arena_heap(v->a, NULL, ((size_t)np + 1) * sizeof *v->holder);
  const tr_instr **holder = v->holder;
  memset(holder, 0, ((size_t)np + 1) * sizeof *holder);
  for (int i = 0; i < k->ninstrs; i++) {
    const tr_instr *p = k->instrs[i];
    if (p->op != TR_OP_PARAMETER) continue;
    if (p->param_index < 0 || p->param_index >= np) {
      ierr(v, p, "parameter number %lld is out of range: computation %s has %d parameter(s), numbered 0..%d",
           (long long)p->param_index, k->name, np, np - 1);
      numbered = false;
      continue;
    }
    /* the first holder of each number, so the check is linear (modules
     * with 100,000 parameters exist: flattened weights) */
    if (holder[p->param_index]) {
      ierr(v, p, "parameter number %lld is also used by %%%s", (long long)p->param_index,
           holder[p->param_index]->name);
      numbered = false;
    } else {
      holder[p->param_index] = p;
    }
  }
  tr_free(holder);
  v->holder = NULL;
  /* The table is only worth a word when the numbering itself is sound. */
  if (numbered && k->params) {
    bool table_ok = k->nparams == np;
    for (int i = 0; table_ok && i < np; i++)
      table_ok = k->params[i] && k->params[i]->parent == k && k->params[i]->param_index == i;
    if (!table_ok) cerr(v, k, "its parameter table does not match its %d parameter instruction(s)", np);
  }
}

static void check_comp(vctx *v, const tr_comp *k) {
  if (k->ninstrs == 0) {
    cerr(v, k, "it has no instructions");
    return;
  }
  if (!k->root) cerr(v, k, "it has no ROOT instruction");
  else if (k->root->parent != k) cerr(v, k, "its ROOT %%%s belongs to another computation", k->root->name);
  check_params(v, k);
  for (int i = 0; i < k->ninstrs && v->nerrs <= MAX_ERRORS; i++) check_instr(v, k, k->instrs[i]);
}

/* The checks, with every allocation of v's arena (and the tables) set to
 * jump back here when memory runs out (tr_arena_catch): an error, never an
 * abort. Returns false then. v is not changed after setjmp (only what it
 * points to). */
static bool verify_caught(vctx *v) {
  jmp_buf jb;
  if (setjmp(jb)) return false;
  tr_arena_catch(v->a, &jb);
  const tr_module *m = v->m;
  size_t n = (size_t)v->nids + 1;
  v->comp = tr_arena_heap(v->a, NULL, n * sizeof(tr_comp *));
  memset(v->comp, 0, n * sizeof(tr_comp *));
  v->seen = tr_arena_heap(v->a, NULL, n);
  memset(v->seen, 0, n);
  for (int i = 0; i < m->ncomps; i++) {
    const tr_comp *k = m->comps[i];
    if (k && k->id >= 0 && k->id < v->nids) v->comp[k->id] = k;
  }
  if (!m->entry) merr(v, "module %s has no ENTRY computation", m->name ? m->name : "");
  else if (!in_module(v, m->entry)) merr(v, "the ENTRY computation is not in the module");
  for (int i = 0; i < m->ncomps && v->nerrs <= MAX_ERRORS; i++) check_comp(v, m->comps[i]);
  tr_arena_catch(v->a, NULL);
  return true;
}

tr_status tr_verify(const tr_module *m, tr_diag *d) {
  vctx v;
  memset(&v, 0, sizeof v);
  v.m = m;
  v.d = d;
  v.file = m->file ? m->file : "<module>";
  /* Every id comes from next_id, so the maps below cover them all; an
   * instruction id out of range (a broken builder) skips the order check. */
  v.nids = m->next_id > 0 ? m->next_id : 0;
  v.a = tr_arena_new();
  bool done = verify_caught(&v);
  size_t used = tr_arena_used(v.a);
  tr_arena_free(v.a);
  tr_free(v.comp);
  tr_free(v.seen);
  tr_free(v.holder);
  if (!done) {
    tr_diag_errorf(d, "%s: error: out of memory verifying the module (%d instructions; %zu bytes of "
                   "inferred shapes so far)", v.file, v.nids, used);
    return TR_ERR_UNSUPPORTED;
  }
  return v.nerrs ? TR_ERR_INVALID : TR_OK;
}
