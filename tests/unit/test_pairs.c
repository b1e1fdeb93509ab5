/* test_pairs.c - coverage of the reference interpreter by hand-derived
 * test modules: every (opcode, element type) pair the reference claims to
 * evaluate must occur in some EXPECT module of tests/eval or
 * tests/eval/dtypes (issue 3: "every opcode/dtype pair the interpreter
 * claims has a test with hand-derived expected values").
 *
 * The claimed set is found by trying: for each templated op and each array
 * element type its ops.def types column accepts, a tiny module goes through
 * tr_eval; the pair is claimed when it evaluates. A pair the verifier
 * rejects is not claimed (the op does not accept it); an evaluation error
 * other than "unsupported" fails the test (a template or reference bug).
 *
 * A module covers (op, T) when an instruction of that op that the entry's
 * root depends on has result element type T, or has T as its first
 * operand's element type (so converts, compares, is-finite and abs of
 * complex count for their operand type; not select, whose first operand is
 * the predicate). Ops and pairs left out are listed below with why.
 * tests/eval/gen_pairs.py writes the pairs_<T>.hlo modules. */
#include <dirent.h>
#include <stdlib.h>

#include "../../src/eval/eval.h"
#include "test.h"

/* Ops left out of the claimed set, with why. They pass whole values through
 * by reference (tr_value) without reading an element, so the element type
 * cannot change their result; or they are not value-computing. */
static bool excluded_op(tr_op op) {
  switch (op) {
  case TR_OP_PARAMETER: case TR_OP_CONSTANT: /* every module has constants */
  case TR_OP_TUPLE: case TR_OP_GET_TUPLE_ELEMENT: case TR_OP_CALL: case TR_OP_FUSION:
  case TR_OP_WHILE: case TR_OP_CONDITIONAL: case TR_OP_OPT_BARRIER: case TR_OP_DOMAIN:
  case TR_OP_SCAN: /* control flow: its computation reads the elements */
  case TR_OP_OUTFEED: /* a token: its data leaves the module */
  case TR_OP_ADD_DEPENDENCY: case TR_OP_AFTER_ALL:
  /* single-replica collectives hand their operands back */
  case TR_OP_ALL_REDUCE: case TR_OP_ALL_GATHER: case TR_OP_REDUCE_SCATTER:
  case TR_OP_ALL_TO_ALL: case TR_OP_COLLECTIVE_PERMUTE: case TR_OP_ASYNC_START:
  case TR_OP_ASYNC_UPDATE: case TR_OP_ASYNC_DONE:
  /* the <op>-start/-done pairs evaluate as their synchronous op */
  case TR_OP_ALL_GATHER_START: case TR_OP_ALL_GATHER_DONE: case TR_OP_ALL_REDUCE_START:
  case TR_OP_ALL_REDUCE_DONE: case TR_OP_COLLECTIVE_PERMUTE_START:
  case TR_OP_COLLECTIVE_PERMUTE_DONE: case TR_OP_COPY_START: case TR_OP_COPY_DONE:
  /* rewritten before evaluation into iota, compare and select, covered
   * as ops (desugar.c); eval/set_dimension_size.hlo shows the result */
  case TR_OP_SET_DIMENSION_SIZE: case TR_OP_GET_DIMENSION_SIZE:
  /* fixed u32 results; bits of a documented generator; a dispatcher to
   * top-k, cholesky and triangular-solve, which are covered as ops */
  case TR_OP_PARTITION_ID: case TR_OP_REPLICA_ID: case TR_OP_RNG_BIT_GENERATOR:
  case TR_OP_CUSTOM_CALL:
    return true;
  default: return false;
  }
}

/* Pairs XLA rejects (complex of parts other than f32/f64, real and imag of
 * integers and pred, iota of pred, bitcast-convert between complex and
 * real) are rejected by the verifier (src/ir/verify.c, check_xla_types),
 * so their probes never claim them. */

/* Pairs claimed but not yet covered by a module, each with its reason.
 * Empty means every claimed pair has a hand-derived test. */
static const char *const allowed_missing[] = {
  NULL
};

/* Templates: the body of the entry computation after "a = $T[2,2]
 * constant(...)" and friends; $T is the element type, $V a value of it,
 * $R the real type of $T (its component type for complex), $C the complex
 * type with component $T. */
typedef struct {
  tr_op op;
  const char *body; /* lines of ENTRY, the last one the ROOT */
} tmpl;

#define UN(op, name) {TR_OP_##op, "ROOT r = $T[2,2] " name "(a)"}
#define BIN(op, name) {TR_OP_##op, "ROOT r = $T[2,2] " name "(a, a)"}

static const tmpl tmpls[] = {
  UN(ABS, "abs"), UN(NEGATE, "negate"), UN(SIGN, "sign"), UN(FLOOR, "floor"), UN(CEIL, "ceil"),
  UN(ROUND_NEAREST_AFZ, "round-nearest-afz"), UN(ROUND_NEAREST_EVEN, "round-nearest-even"),
  UN(EXPONENTIAL, "exponential"), UN(EXPONENTIAL_MINUS_ONE, "exponential-minus-one"),
  UN(LOG, "log"), UN(LOG_PLUS_ONE, "log-plus-one"), UN(SQRT, "sqrt"), UN(RSQRT, "rsqrt"),
  UN(CBRT, "cbrt"), UN(TANH, "tanh"), UN(LOGISTIC, "logistic"), UN(SINE, "sine"),
  UN(COSINE, "cosine"), UN(TAN, "tan"), UN(ERF, "erf"), UN(NOT, "not"), UN(POPCNT, "popcnt"),
  UN(COUNT_LEADING_ZEROS, "count-leading-zeros"), UN(COPY, "copy"),
  {TR_OP_ABS, "ROOT r = $R[2,2] abs(a)"},
  {TR_OP_IS_FINITE, "ROOT r = pred[2,2] is-finite(a)"},
  BIN(ATAN2, "atan2"), BIN(ADD, "add"), BIN(SUBTRACT, "subtract"), BIN(MULTIPLY, "multiply"),
  BIN(DIVIDE, "divide"), BIN(REMAINDER, "remainder"), BIN(POWER, "power"),
  BIN(MAXIMUM, "maximum"), BIN(MINIMUM, "minimum"), BIN(AND, "and"), BIN(OR, "or"),
  BIN(XOR, "xor"), BIN(SHIFT_LEFT, "shift-left"),
  BIN(SHIFT_RIGHT_ARITHMETIC, "shift-right-arithmetic"),
  BIN(SHIFT_RIGHT_LOGICAL, "shift-right-logical"),
  {TR_OP_COMPARE, "ROOT r = pred[2,2] compare(a, a), direction=EQ"},
  {TR_OP_SELECT, "p = pred[2,2] constant({{1, 0}, {0, 1}})\n  ROOT r = $T[2,2] select(p, a, a)"},
  {TR_OP_CLAMP, "ROOT r = $T[2,2] clamp(a, a, a)"},
  {TR_OP_CONVERT, "ROOT r = f32[2,2] convert(a)"},
  {TR_OP_CONVERT, "f = f32[2,2] constant({{1, 1}, {1, 1}})\n  ROOT r = $T[2,2] convert(f)"},
  {TR_OP_BITCAST_CONVERT, "ROOT r = $T[2,2] bitcast-convert(a)"},
  {TR_OP_REDUCE_PRECISION, "ROOT r = $T[2,2] reduce-precision(a), exponent_bits=5, mantissa_bits=2"},
  {TR_OP_IOTA, "ROOT r = $T[4] iota(), iota_dimension=0"},
  {TR_OP_BROADCAST, "ROOT r = $T[2,2,3] broadcast(a), dimensions={0,1}"},
  {TR_OP_RESHAPE, "ROOT r = $T[4] reshape(a)"},
  {TR_OP_BITCAST, "ROOT r = $T[4] bitcast(a)"},
  {TR_OP_TRANSPOSE, "ROOT r = $T[2,2] transpose(a), dimensions={1,0}"},
  {TR_OP_SLICE, "ROOT r = $T[1,2] slice(a), slice={[0:1], [0:2]}"},
  {TR_OP_DYNAMIC_SLICE, "ROOT r = $T[1,2] dynamic-slice(a, i, i), dynamic_slice_sizes={1,2}"},
  {TR_OP_DYNAMIC_UPDATE_SLICE, "u = $T[1,2] slice(a), slice={[0:1], [0:2]}\n"
                               "  ROOT r = $T[2,2] dynamic-update-slice(a, u, i, i)"},
  {TR_OP_CONCATENATE, "ROOT r = $T[4,2] concatenate(a, a), dimensions={0}"},
  {TR_OP_PAD, "ROOT r = $T[3,2] pad(a, s), padding=1_0x0_0"},
  {TR_OP_REVERSE, "ROOT r = $T[2,2] reverse(a), dimensions={0}"},
  {TR_OP_GATHER, "ix = s32[2,1] constant({{0}, {1}})\n"
                 "  ROOT r = $T[2,2] gather(a, ix), offset_dims={1}, collapsed_slice_dims={0}, "
                 "start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}"},
  {TR_OP_SCATTER, "ix = s32[1,1] constant({{1}})\n  u = $T[1,2] slice(a), slice={[0:1], [0:2]}\n"
                  "  ROOT r = $T[2,2] scatter(a, ix, u), update_window_dims={1}, "
                  "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                  "index_vector_dim=1, to_apply=add"},
  {TR_OP_REDUCE, "ROOT r = $T[2] reduce(a, s), dimensions={1}, to_apply=add"},
  {TR_OP_REDUCE_WINDOW, "ROOT r = $T[1,1] reduce-window(a, s), window={size=2x2}, to_apply=add"},
  {TR_OP_SELECT_AND_SCATTER, "src = $T[1,1] slice(a), slice={[0:1], [0:1]}\n"
                             "  ROOT r = $T[2,2] select-and-scatter(a, src, s), window={size=2x2}, "
                             "select=ge, scatter=add"},
  {TR_OP_DOT, "ROOT r = $T[2,2] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
  {TR_OP_CONVOLUTION, "x = $T[1,2,1] reshape(v2)\n  k = $T[2,1,1] reshape(v2)\n"
                      "  ROOT r = $T[1,1,1] convolution(x, k), window={size=2}, "
                      "dim_labels=b0f_0io->b0f"},
  {TR_OP_SORT, "ROOT r = $T[2,2] sort(a), dimensions={1}, to_apply=lt"},
  /* complex keys: XLA orders no complex values, the comparator orders parts */
  {TR_OP_SORT, "ROOT r = $T[2,2] sort(a), dimensions={1}, to_apply=lt_re"},
  {TR_OP_SELECT_AND_SCATTER, "src = $T[1,1] slice(a), slice={[0:1], [0:1]}\n"
                             "  ROOT r = $T[2,2] select-and-scatter(a, src, s), window={size=2x2}, "
                             "select=ge_re, scatter=add"},
  {TR_OP_TOPK, "ROOT r = ($T[2,1], s32[2,1]) topk(a), k=1, largest=true"},
  {TR_OP_CHOLESKY, "ROOT r = $T[2,2] cholesky(a), lower=true"},
  {TR_OP_TRIANGULAR_SOLVE, "ROOT r = $T[2,2] triangular-solve(a, a), left_side=true, lower=true, "
                           "transpose_a=NO_TRANSPOSE"},
  {TR_OP_MAP, "ROOT r = $T[2,2] map(a, a), dimensions={0,1}, to_apply=add"},
  {TR_OP_REAL, "ROOT r = $R[2,2] real(a)"},
  {TR_OP_IMAG, "ROOT r = $R[2,2] imag(a)"},
  {TR_OP_COMPLEX, "ROOT r = $C[2,2] complex(a, a)"},
  {TR_OP_FFT, "ROOT r = $T[2,2] fft(a), fft_type=FFT, fft_length={2}"},
  {TR_OP_FFT, "ROOT r = $C[2,2] fft(a), fft_type=RFFT, fft_length={2}"},
  {TR_OP_FFT, "ROOT r = $R[2,2] fft(a), fft_type=IRFFT, fft_length={2}"},
};

static const char *value_of(tr_dtype t) {
  if (t == TR_DT_S1) return "-1";
  if (tr_dtypes[t].kind == TR_DK_COMPLEX) return "(1, 0)";
  return "1";
}

static const char *real_of(tr_dtype t) {
  if (t == TR_DT_C64) return "f32";
  if (t == TR_DT_C128) return "f64";
  return tr_dtype_name(t);
}

static const char *complex_of(tr_dtype t) {
  if (t == TR_DT_F32) return "c64";
  if (t == TR_DT_F64) return "c128";
  return "c64"; /* any other component type: the verifier rejects it */
}

/* Appends s with $T, $V, $R, $C replaced for t. */
static void subst(tr_buf *b, const char *s, tr_dtype t) {
  for (; *s; s++) {
    if (*s == '$' && s[1]) {
      s++;
      switch (*s) {
      case 'T': tr_buf_printf(b, "%s", tr_dtype_name(t)); break;
      case 'V': tr_buf_printf(b, "%s", value_of(t)); break;
      case 'R': tr_buf_printf(b, "%s", real_of(t)); break;
      case 'C': tr_buf_printf(b, "%s", complex_of(t)); break;
      default: tr_buf_printf(b, "$%c", *s); break;
      }
    } else {
      tr_buf_printf(b, "%c", *s);
    }
  }
}

static const char *const prelude =
  "HloModule probe\n\n"
  "add {\n  x = $T[] parameter(0)\n  y = $T[] parameter(1)\n  ROOT z = $T[] add(x, y)\n}\n\n"
  "lt {\n  x = $T[] parameter(0)\n  y = $T[] parameter(1)\n"
  "  ROOT z = pred[] compare(x, y), direction=LT\n}\n\n"
  "ge {\n  x = $T[] parameter(0)\n  y = $T[] parameter(1)\n"
  "  ROOT z = pred[] compare(x, y), direction=GE\n}\n\n";

/* Comparators on complex values (by real part; XLA's compare orders no
 * complex values), in the probe modules of complex types only. */
static const char *const complex_comps =
  "lt_re {\n  x = $T[] parameter(0)\n  y = $T[] parameter(1)\n  rx = $R[] real(x)\n"
  "  ry = $R[] real(y)\n  ROOT z = pred[] compare(rx, ry), direction=LT\n}\n\n"
  "ge_re {\n  x = $T[] parameter(0)\n  y = $T[] parameter(1)\n  rx = $R[] real(x)\n"
  "  ry = $R[] real(y)\n  ROOT z = pred[] compare(rx, ry), direction=GE\n}\n\n";

static const char *const entry =
  "ENTRY main {\n"
  "  a = $T[2,2] constant({{$V, $V}, {$V, $V}})\n"
  "  v2 = $T[2] constant({$V, $V})\n"
  "  s = $T[] constant($V)\n"
  "  i = s32[] constant(0)\n  ";

typedef enum { PROBE_YES, PROBE_NO, PROBE_BAD } probe_result;

static probe_result probe(const tmpl *tp, tr_dtype t, tr_buf *why) {
  tr_buf text = {0};
  subst(&text, prelude, t);
  if (tr_dtypes[t].kind == TR_DK_COMPLEX) subst(&text, complex_comps, t);
  subst(&text, entry, t);
  subst(&text, tp->body, t);
  tr_buf_printf(&text, "\n}\n");
  tr_diag d = {0};
  tr_parse_opts opts = {.fill_elided = false};
  tr_module *m = tr_parse("probe.hlo", tr_buf_str(&text), strlen(tr_buf_str(&text)), &opts, &d);
  probe_result r = PROBE_NO;
  if (m && tr_verify(m, &d) == TR_OK) {
    tr_tensor **outs = NULL;
    int n = 0;
    tr_status st = tr_eval(m, NULL, 0, &outs, &n, &d);
    if (st == TR_OK) {
      r = PROBE_YES;
    } else if (!tr_diag_first(&d) || !strstr(tr_diag_first(&d), "unsupported")) {
      r = PROBE_BAD;
      tr_buf_printf(why, "%s", tr_diag_first(&d) ? tr_diag_first(&d) : "(no message)");
    }
    tr_eval_free_outputs(outs, n);
  }
  if (m) tr_module_free(m);
  tr_diag_clear(&d);
  tr_buf_free(&text);
  return r;
}

/* covered[op][dtype], filled from the modules of one folder. */
typedef struct {
  bool covered[TR_OP_COUNT][TR_DT_COUNT];
} pairset;

/* Marks the pairs of the instructions the entry's root depends on (through
 * operands and called computations): an instruction whose value reaches no
 * EXPECT line tests nothing. */
static void mark_instr(pairset *ps, const tr_instr *in, bool *seen_instr, bool *seen_comp);

static void mark_comp(pairset *ps, const tr_comp *c, bool *seen_instr, bool *seen_comp) {
  if (seen_comp[c->id]) return;
  seen_comp[c->id] = true;
  for (int i = 0; i < c->ninstrs; i++) mark_instr(ps, c->instrs[i], seen_instr, seen_comp);
}

static void mark_instr(pairset *ps, const tr_instr *in, bool *seen_instr, bool *seen_comp) {
  if (seen_instr[in->id]) return;
  seen_instr[in->id] = true;
  if (in->shape && tr_shape_is_array(in->shape)) ps->covered[in->op][in->shape->dtype] = true;
  if (in->op != TR_OP_SELECT && in->noperands > 0 && in->operands[0]->shape &&
      tr_shape_is_array(in->operands[0]->shape))
    ps->covered[in->op][in->operands[0]->shape->dtype] = true;
  for (int i = 0; i < in->noperands; i++) mark_instr(ps, in->operands[i], seen_instr, seen_comp);
  tr_comp *called[16];
  int n = tr_instr_called(in, called, 16);
  for (int i = 0; i < n && i < 16; i++) mark_comp(ps, called[i], seen_instr, seen_comp);
}

static void mark_module(pairset *ps, const tr_module *m) {
  bool *seen_instr = calloc((size_t)m->next_id + 1, sizeof *seen_instr);
  bool *seen_comp = calloc((size_t)m->next_id + 1, sizeof *seen_comp);
  if (seen_instr && seen_comp && m->entry && m->entry->root)
    mark_instr(ps, m->entry->root, seen_instr, seen_comp);
  free(seen_instr);
  free(seen_comp);
}

static bool has_expect(const char *text) {
  for (const char *p = text; p[0] == '/' && p[1] == '/';) {
    const char *q = p + 2;
    while (*q == ' ') q++;
    if (strncmp(q, "EXPECT ", 7) == 0) return true;
    const char *eol = strchr(p, '\n');
    if (!eol) break;
    p = eol + 1;
  }
  return false;
}

static int mark_dir(pairset *ps, const char *sub) {
  tr_buf dir = {0};
  tr_buf_printf(&dir, "%s/%s", tr_test_dir, sub);
  DIR *dp = opendir(tr_buf_str(&dir));
  int n = 0;
  if (!dp) {
    fprintf(stderr, "  cannot open folder %s\n", tr_buf_str(&dir));
    tr_test_failed++;
    tr_buf_free(&dir);
    return 0;
  }
  struct dirent *e;
  while ((e = readdir(dp)) != NULL) {
    size_t len = strlen(e->d_name);
    if (e->d_name[0] == '.' || len < 4 || strcmp(e->d_name + len - 4, ".hlo") != 0) continue;
    tr_buf p = {0};
    tr_buf_printf(&p, "%s/%s", tr_buf_str(&dir), e->d_name);
    char *text = NULL;
    size_t tlen = 0;
    tr_diag d = {0};
    if (tr_read_file(tr_buf_str(&p), &text, &tlen, &d) == TR_OK && has_expect(text)) {
      tr_parse_opts opts = {.fill_elided = false};
      tr_module *m = tr_parse(tr_buf_str(&p), text, tlen, &opts, &d);
      if (m) {
        mark_module(ps, m);
        tr_module_free(m);
        n++;
      } else {
        fprintf(stderr, "  %s does not parse: %s\n", tr_buf_str(&p), tr_diag_first(&d));
        tr_test_failed++;
      }
    }
    free(text);
    tr_diag_clear(&d);
    tr_buf_free(&p);
  }
  closedir(dp);
  tr_buf_free(&dir);
  return n;
}

static bool allowed(tr_op op, tr_dtype t) {
  char key[96];
  snprintf(key, sizeof key, "%s %s", tr_ops[op].name, tr_dtype_name(t));
  for (int i = 0; allowed_missing[i]; i++) {
    size_t k = strcspn(allowed_missing[i], ":");
    if (strlen(key) == k && strncmp(allowed_missing[i], key, k) == 0) return true;
  }
  return false;
}

TR_TEST(eval_pairs_covered) {
  static pairset ps; /* large; zeroed once per run */
  memset(&ps, 0, sizeof ps);
  CHECK(mark_dir(&ps, "eval") > 0);
  CHECK(mark_dir(&ps, "eval/dtypes") > 0);
  bool templated[TR_OP_COUNT] = {0};
  int nclaimed = 0, nmissing = 0;
  tr_buf list = {0};
  for (size_t k = 0; k < sizeof tmpls / sizeof tmpls[0]; k++) templated[tmpls[k].op] = true;
  for (int op = 0; op < TR_OP_COUNT; op++) {
    if (!tr_eval_supports((tr_op)op) || excluded_op((tr_op)op)) continue;
    if (!templated[op]) {
      fprintf(stderr, "  %s: evaluated but has no probe template here\n", tr_ops[op].name);
      tr_test_failed++;
      continue;
    }
    int nop = 0;
    for (int t = 0; t < TR_DT_COUNT; t++) {
      if (!tr_dtype_is_array((tr_dtype)t)) continue;
      bool yes = false;
      for (size_t k = 0; k < sizeof tmpls / sizeof tmpls[0] && !yes; k++) {
        if (tmpls[k].op != (tr_op)op) continue;
        tr_buf why = {0};
        probe_result r = probe(&tmpls[k], (tr_dtype)t, &why);
        if (r == PROBE_BAD) {
          fprintf(stderr, "  probe %s %s failed: %s\n", tr_ops[op].name,
                  tr_dtype_name((tr_dtype)t), tr_buf_str(&why));
          tr_test_failed++;
        }
        yes = r == PROBE_YES;
        tr_buf_free(&why);
      }
      if (!yes) continue;
      nop++;
      nclaimed++;
      if (!ps.covered[op][t] && !allowed((tr_op)op, (tr_dtype)t)) {
        tr_buf_printf(&list, " %s:%s", tr_ops[op].name, tr_dtype_name((tr_dtype)t));
        nmissing++;
      }
    }
    if (nop == 0) { /* a template that never evaluates hides the whole op */
      fprintf(stderr, "  %s: no element type evaluates through its probe\n", tr_ops[op].name);
      tr_test_failed++;
    }
  }
  if (nmissing) {
    fprintf(stderr, "  %d of %d claimed (op:type) pairs have no EXPECT module:%s\n", nmissing,
            nclaimed, tr_buf_str(&list));
    tr_test_failed++;
  } else {
    fprintf(stderr, "  eval pairs: %d claimed (op, type) pairs, each in an EXPECT module\n",
            nclaimed);
  }
  tr_buf_free(&list);
}
