/* test_optable.c - the op table's capability columns and kernel table are
 * true. Each mode letter of ops.def is checked against what the mode
 * really does, on the test corpora: an op marked x (exact) or e (emitter)
 * must occur in some module that mode handles whole, and an op not marked
 * must never be handled (and is reported "unsupported" where it occurs);
 * s (shadow rule) is checked on one-op probes, g against the generator
 * weights; y (the symbolic reference) has test_symref.c, and t is
 * checked against the torch translation by tests/torch/. The kernel
 * table's completeness (kernels.def against ops.def) has a test of its own
 * and a test that a row without kernels fails it. */
#include "../../src/comp/emit.h"
#include "../../src/eval/evalint.h"
#include "../../src/eval/shadow.h"
#include "test.h"
#include "testutil.h"

#include <stdlib.h>

/* ---- kernels.def ---- */

TR_TEST(optable_kernels_complete) {
  tr_buf why = {0};
  bool ok = ev_kernels_complete(tr_ops, ev_kernels, &why);
  if (!ok) fprintf(stderr, "  %s\n", tr_buf_str(&why));
  CHECK(ok);
  tr_buf_free(&why);
}

/* An op declared elementwise without a kernels.def row, and a row that
 * lost its float kernel, both fail the check (so the check can fail). */
TR_TEST(optable_row_without_kernels_fails) {
  tr_op_info *ops = tr_xmalloc(sizeof(tr_op_info) * TR_OP_COUNT);
  ev_kernel *kern = tr_xmalloc(sizeof(ev_kernel) * TR_OP_COUNT);
  memcpy(ops, tr_ops, sizeof(tr_op_info) * TR_OP_COUNT);
  memcpy(kern, ev_kernels, sizeof(ev_kernel) * TR_OP_COUNT);
  ops[TR_OP_ACOSH].cls = TR_OPC_UFLOAT; /* a new float op: a table row ... */
  ops[TR_OP_ACOSH].modes = "xe";        /* ... and no kernels */
  tr_buf why = {0};
  CHECK(!ev_kernels_complete(ops, kern, &why));
  CHECK_CONTAINS(tr_buf_str(&why), "acosh is elementwise (class 0) but has no kernels.def row");
  tr_buf_free(&why);
  memcpy(ops, tr_ops, sizeof(tr_op_info) * TR_OP_COUNT);
  kern[TR_OP_EXPONENTIAL].flt1 = NULL;
  CHECK(!ev_kernels_complete(ops, kern, &why));
  CHECK_CONTAINS(tr_buf_str(&why), "exponential accepts floats but has no float kernel");
  tr_buf_free(&why);
  memcpy(kern, ev_kernels, sizeof(ev_kernel) * TR_OP_COUNT);
  kern[TR_OP_SQRT].c = NULL;
  CHECK(!ev_kernels_complete(ops, kern, &why));
  CHECK_CONTAINS(tr_buf_str(&why), "sqrt is emitted (e) but has no C float spelling");
  tr_buf_free(&why);
  memcpy(kern, ev_kernels, sizeof(ev_kernel) * TR_OP_COUNT);
  kern[TR_OP_XOR].c_int = NULL;
  CHECK(!ev_kernels_complete(ops, kern, &why));
  CHECK_CONTAINS(tr_buf_str(&why), "xor is emitted (e) but has no C int spelling");
  tr_buf_free(&why);
  memcpy(kern, ev_kernels, sizeof(ev_kernel) * TR_OP_COUNT);
  kern[TR_OP_TANH].shadow = "0";
  CHECK(!ev_kernels_complete(ops, kern, &why));
  CHECK_CONTAINS(tr_buf_str(&why), "tanh accepts floats but has no shadow value function");
  tr_buf_free(&why);
  free(ops);
  free(kern);
}

/* ---- the x and e columns, on the corpora ---- */

typedef struct {
  int handled[TR_OP_COUNT];     /* modules containing the op that the mode took whole */
  int unsupported[TR_OP_COUNT]; /* "unsupported: OP" reported for the op itself */
} evidence;

/* The ops of every instruction of m (dead ones too: corpus modules keep
 * none worth counting, and an unsupported dead op would not fail them). */
static void mark_ops(const tr_module *m, int *count) {
  bool seen[TR_OP_COUNT] = {false};
  for (int k = 0; k < m->ncomps; k++)
    for (int i = 0; i < m->comps[k]->ninstrs; i++) seen[m->comps[k]->instrs[i]->op] = true;
  for (int op = 0; op < TR_OP_COUNT; op++) count[op] += seen[op];
}

/* The op a diagnostic "unsupported: OPNAME<end>" names, where end is the
 * end of the message or the given suffix. */
static bool unsupported_op(const char *msg, const char *suffix, tr_op *op) {
  const char *p = strstr(msg, "unsupported: ");
  if (!p) return false;
  p += strlen("unsupported: ");
  for (int o = 0; o < TR_OP_COUNT; o++) {
    size_t n = strlen(tr_ops[o].name);
    if (n && strncmp(p, tr_ops[o].name, n) == 0 && strcmp(p + n, suffix) == 0) {
      *op = (tr_op)o;
      return true;
    }
  }
  return false;
}

static int gather(evidence *ex, evidence *em) {
  int nmod = 0;
  static const char *const dirs[] = {"hlo", "eval", "eval/dtypes", "xla-suite"};
  for (int di = 0; di < TR_NELEMS(dirs); di++) {
    tr_test_files fl = tr_test_list_hlo(dirs[di]);
    for (int f = 0; f < fl.n; f++) {
      tr_diag d = {0};
      char *text = NULL;
      size_t len = 0;
      tr_module *m = NULL;
      if (tr_read_file(fl.paths[f], &text, &len, &d) == TR_OK)
        m = tr_parse(fl.paths[f], text, len, NULL, &d);
      free(text);
      if (!m || tr_verify(m, &d) != TR_OK) {
        if (m) tr_module_free(m);
        tr_diag_clear(&d);
        continue; /* the corpora hold invalid modules on purpose */
      }
      tr_diag_clear(&d);
      nmod++;
      /* emitter */
      tr_emit_opts eo;
      tr_emit_opts_init(&eo);
      tr_buf c = {0};
      tr_op op;
      if (tr_emit_c(m, &eo, &c, &d) == TR_OK) mark_ops(m, em->handled);
      else if (d.nmsgs > 0 && unsupported_op(d.msgs[0], " in builtin", &op)) em->unsupported[op]++;
      tr_buf_free(&c);
      tr_diag_clear(&d);
      /* exact interpreter, on deterministic inputs */
      tr_tensor *args[64];
      int nargs = 0;
      bool fit = true;
      for (int i = 0; i < m->entry->nparams && fit; i++)
        fit = tr_test_add_inputs(m->entry->params[i]->shape, args, &nargs, 64, 1);
      if (fit) {
        tr_tensor **outs = NULL;
        int nouts = 0;
        tr_eval_opts o = {.verified = true, .max_while_trips = 100000};
        if (tr_eval_opt(m, &o, args, nargs, &outs, &nouts, &d) == TR_OK) mark_ops(m, ex->handled);
        else if (d.nmsgs > 0 && unsupported_op(d.msgs[0], "", &op)) ex->unsupported[op]++;
        tr_eval_free_outputs(outs, nouts);
        tr_diag_clear(&d);
      }
      for (int i = 0; i < nargs; i++) tr_tensor_free(args[i]);
      tr_module_free(m);
    }
    tr_test_files_free(&fl);
  }
  return nmod;
}

/* Ops no corpus module can show either way, with why. */
static bool unprovable(tr_op op) {
  switch (op) {
  /* the async sugar's opcode is never a module's: it parses to the
   * spelled op (ops.def) */
  case TR_OP_ASYNC_SUGAR: return true;
  default: return false;
  }
}

static void check_column(const char *mode, tr_mode letter, const evidence *ev) {
  for (int op = 0; op < TR_OP_COUNT; op++) {
    if (unprovable((tr_op)op)) continue;
    bool claimed = tr_op_can((tr_op)op, letter);
    if (claimed && !ev->handled[op]) {
      fprintf(stderr, "  %s: %s is marked '%c' but no corpus module shows it handled\n", mode,
              tr_ops[op].name, (char)letter);
      tr_test_failed++;
    }
    if (!claimed && ev->handled[op]) {
      fprintf(stderr, "  %s: %s is handled in %d module(s) but not marked '%c'\n", mode,
              tr_ops[op].name, ev->handled[op], (char)letter);
      tr_test_failed++;
    }
    if (claimed && ev->unsupported[op]) {
      fprintf(stderr, "  %s: %s is marked '%c' but reported unsupported in %d module(s)\n", mode,
              tr_ops[op].name, (char)letter, ev->unsupported[op]);
      tr_test_failed++;
    }
  }
}

TR_TEST(optable_exact_and_emit_columns) {
  evidence ex, em;
  memset(&ex, 0, sizeof ex);
  memset(&em, 0, sizeof em);
  int nmod = gather(&ex, &em);
  check_column("exact", TR_MODE_EXACT, &ex);
  check_column("emit", TR_MODE_EMIT, &em);
  int nx = 0, ne = 0;
  for (int op = 0; op < TR_OP_COUNT; op++) {
    nx += tr_op_can((tr_op)op, TR_MODE_EXACT);
    ne += tr_op_can((tr_op)op, TR_MODE_EMIT);
  }
  fprintf(stderr, "  optable: %d ops evaluated, %d emitted, each shown on %d valid corpus modules\n", nx,
          ne, nmod);
}

/* ---- s, g, y, t ---- */

/* A float op with a shadow rule of its own gives certain results on
 * exact operands away from its discontinuities; without one (the
 * conservative fallback) every float result is uncertain. One-op probes
 * for every kernel op that takes floats. */
TR_TEST(optable_shadow_column) {
  for (int op = 0; op < TR_OP_COUNT; op++) {
    const ev_kernel *k = &ev_kernels[op];
    if (!k->row || !strchr("fna", tr_ops[op].types[0])) continue;
    bool is_finite = op == TR_OP_IS_FINITE;
    tr_buf text = {0};
    tr_buf_printf(&text, "HloModule p\nENTRY e {\n  a = f32[2] constant({0.75, 0.3})\n");
    tr_buf_printf(&text, "  b = f32[2] constant({0.5, 0.6})\n");
    tr_buf_printf(&text, "  ROOT r = %s[2] %s(a%s)\n}\n", is_finite ? "pred" : "f32", tr_ops[op].name,
                  k->arity == 2 ? ", b" : "");
    tr_diag d = {0};
    tr_module *m = tr_parse("probe.hlo", tr_buf_str(&text), strlen(tr_buf_str(&text)), NULL, &d);
    tr_shadow_out *o = NULL;
    int n = 0;
    if (!m || tr_eval_shadow(m, NULL, NULL, 0, &o, &n, &d) != TR_OK || n != 1) {
      fprintf(stderr, "  probe of %s failed:\n", tr_ops[op].name);
      tr_diag_print(&d, stderr);
      tr_test_failed++;
    } else if (tr_op_can((tr_op)op, TR_MODE_SHADOW) != (o[0].nuncertain == 0)) {
      fprintf(stderr, "  shadow: %s is %smarked 's' but %zu of 2 results are uncertain\n",
              tr_ops[op].name, tr_op_can((tr_op)op, TR_MODE_SHADOW) ? "" : "not ", o[0].nuncertain);
      tr_test_failed++;
    }
    tr_shadow_free(o, n);
    tr_diag_clear(&d);
    if (m) tr_module_free(m);
    tr_buf_free(&text);
  }
  /* A rule of its own is a rule for an op the interpreter evaluates. */
  for (int op = 0; op < TR_OP_COUNT; op++)
    if (tr_op_can((tr_op)op, TR_MODE_SHADOW) && !tr_op_can((tr_op)op, TR_MODE_EXACT)) {
      fprintf(stderr, "  %s is marked 's' but not 'x'\n", tr_ops[op].name);
      tr_test_failed++;
    }
}

/* g: exactly the ops of weight > 0, and only ops the reference evaluates
 * (a generated module must have a reference answer). y: test_symref.c. */
TR_TEST(optable_generate_column) {
  for (int op = 0; op < TR_OP_COUNT; op++) {
    bool g = tr_op_can((tr_op)op, TR_MODE_GENERATE);
    if (g != (tr_ops[op].weight > 0)) {
      fprintf(stderr, "  %s: 'g' is %s but the weight is %d\n", tr_ops[op].name, g ? "set" : "unset",
              tr_ops[op].weight);
      tr_test_failed++;
    }
    if (g && !tr_op_can((tr_op)op, TR_MODE_EXACT)) {
      fprintf(stderr, "  %s is generated but not evaluated\n", tr_ops[op].name);
      tr_test_failed++;
    }
  }
}

/* Flag M (moves values only) lets an op past the interpreters' element
 * type gate, so it must be an op they evaluate, and one that computes no
 * element: not elementwise arithmetic, not a reduction or contraction. */
TR_TEST(optable_moves_flag) {
  int n = 0;
  for (int op = 0; op < TR_OP_COUNT; op++) {
    if (!(tr_ops[op].flags & TR_OPF_M)) continue;
    n++;
    tr_opclass k = tr_ops[op].cls;
    if (!tr_op_can((tr_op)op, TR_MODE_EXACT) || tr_op_is_unary_kernel((tr_op)op) ||
        tr_op_is_binary_kernel((tr_op)op) || k == TR_OPC_REDUCE || k == TR_OPC_LINALG ||
        k == TR_OPC_SORT || k == TR_OPC_CONVERT || k == TR_OPC_COMPARE) {
      fprintf(stderr, "  %s: flag M on an op that computes or is not evaluated\n", tr_ops[op].name);
      tr_test_failed++;
    }
  }
  CHECK(n >= 30);
}
