/* test_gen.c - the program generator (src/fuzz/): modules verify and
 * round-trip through the text format, the same seed gives the same bytes,
 * every op the reference evaluates can be generated, every element type
 * occurs, and the reference evaluates generated modules in exact and
 * shadow mode without an error. TRENCH_TEST_RANDOM=N sets how many
 * modules the bulk test makes (default 2000; the long tier 100000). */
#include "test.h"

#include "../../src/eval/eval.h"
#include "../../src/eval/shadow.h"
#include "../../src/fuzz/gen.h"
#include "../../src/oracle/inputs.h"

#include <stdlib.h>

static int bulk_count(int dflt) {
  const char *e = getenv("TRENCH_TEST_RANDOM");
  int n = e ? atoi(e) : 0;
  return n > 0 ? n : dflt;
}

static tr_module *gen(const tr_gen_opts *o, tr_buf *text) {
  tr_diag d = {0};
  tr_module *m = NULL;
  tr_status st = tr_gen_module(o, &m, &d);
  if (st) {
    fprintf(stderr, "  seed %llu: %s\n", (unsigned long long)o->seed,
            tr_diag_first(&d) ? tr_diag_first(&d) : "(no message)");
    tr_diag_print(&d, stderr);
  }
  tr_diag_clear(&d);
  if (m && text) {
    text->n = 0;
    tr_print_module(text, m);
  }
  return m;
}

/* Generated modules verify, print, parse back to an equal module that
 * verifies, and print to the same bytes. */
TR_TEST(gen_modules_verify_and_round_trip) {
  int n = bulk_count(2000), bad = 0;
  tr_buf t1 = {0}, t2 = {0}, why = {0};
  tr_gen_opts o;
  tr_gen_opts_init(&o);
  for (int s = 0; s < n && bad < 5; s++) {
    o.seed = (uint64_t)s;
    tr_module *m = gen(&o, &t1);
    if (!m) {
      bad++;
      continue;
    }
    tr_diag d = {0};
    tr_module *r = tr_parse("gen.hlo", tr_buf_str(&t1), t1.n, NULL, &d);
    bool ok = r && tr_verify(r, &d) == TR_OK;
    if (ok) {
      t2.n = 0;
      tr_print_module(&t2, r);
      why.n = 0;
      ok = t2.n == t1.n && memcmp(t1.p, t2.p, t1.n) == 0 && tr_module_equal(m, r, &why);
    }
    if (!ok) {
      fprintf(stderr, "  seed %d does not round-trip: %s%s\n", s, tr_diag_first(&d) ? tr_diag_first(&d) : "",
              why.n ? tr_buf_str(&why) : "");
      bad++;
    }
    tr_diag_clear(&d);
    tr_module_free(r);
    tr_module_free(m);
  }
  CHECK_EQ_INT(bad, 0);
  tr_buf_free(&t1);
  tr_buf_free(&t2);
  tr_buf_free(&why);
}

TR_TEST(gen_same_seed_same_bytes) {
  tr_buf a = {0}, b = {0};
  tr_gen_opts o;
  tr_gen_opts_init(&o);
  int differ = 0;
  for (int s = 0; s < 200; s++) {
    o.seed = (uint64_t)s * 7919u;
    tr_module *m1 = gen(&o, &a), *m2 = gen(&o, &b);
    CHECK(m1 && m2);
    CHECK(a.n == b.n && memcmp(a.p, b.p, a.n) == 0);
    o.seed++;
    tr_module *m3 = gen(&o, &b);
    differ += !(a.n == b.n && memcmp(a.p, b.p, a.n) == 0);
    tr_module_free(m1);
    tr_module_free(m2);
    tr_module_free(m3);
  }
  CHECK(differ >= 195); /* neighbouring seeds give other modules */
  tr_buf_free(&a);
  tr_buf_free(&b);
}

static bool module_has_op(const tr_module *m, tr_op op) {
  for (int i = 0; i < m->ncomps; i++)
    for (int j = 0; j < m->comps[i]->ninstrs; j++)
      if (m->comps[i]->instrs[j]->op == op) return true;
  return false;
}

/* Ops the reference evaluates that the generator leaves out, and why:
 * each is a wrapper of another op or has no meaning inside one module. */
static bool not_generated(tr_op op) {
  switch (op) {
  case TR_OP_PARAMETER:         /* a leaf of every module, not an op to choose */
  case TR_OP_RNG_BIT_GENERATOR: /* bits defined by each backend's algorithm */
  case TR_OP_DOMAIN:            /* a sharding marker with no value semantics */
  case TR_OP_ASYNC_START: case TR_OP_ASYNC_UPDATE: case TR_OP_ASYNC_DONE:
  case TR_OP_ALL_GATHER_START: case TR_OP_ALL_GATHER_DONE: case TR_OP_ALL_REDUCE_START:
  case TR_OP_ALL_REDUCE_DONE: case TR_OP_COLLECTIVE_PERMUTE_START:
  case TR_OP_COLLECTIVE_PERMUTE_DONE: case TR_OP_COPY_START: case TR_OP_COPY_DONE:
    /* async wrappers: the generator writes the synchronous op */
    return true;
  case TR_OP_SET_DIMENSION_SIZE: case TR_OP_GET_DIMENSION_SIZE:
    /* evaluated as the iota, compare and select they are rewritten into
     * (desugar.c), which the generator writes */
    return true;
  case TR_OP_OUTFEED: /* its data goes to a host no target provides */
  case TR_OP_SCAN: /* HLO only: StableHLO has no scan, so no target behind
                      jax can compile one (tests/eval/scan.hlo covers it) */
    return true;
  default: return false;
  }
}

/* Every op the reference evaluates (the exact mode 'x' of ops.def) is
 * generated when it is asked for, and every op with a generator weight
 * has a maker. */
TR_TEST(gen_covers_every_evaluated_op) {
  tr_gen_opts o;
  tr_gen_opts_init(&o);
  o.size = 4;
  int covered = 0, evaluated = 0;
  for (int op = 0; op < TR_OP_COUNT; op++) {
    if (tr_ops[op].weight > 0 && !tr_gen_can_make((tr_op)op)) {
      fprintf(stderr, "  %s has generator weight %d but no maker\n", tr_ops[op].name, tr_ops[op].weight);
      tr_test_failed++;
    }
    if (!tr_op_can((tr_op)op, TR_MODE_EXACT) || not_generated((tr_op)op)) continue;
    evaluated++;
    if (!tr_gen_can_make((tr_op)op)) {
      fprintf(stderr, "  the reference evaluates %s but the generator cannot make it\n", tr_ops[op].name);
      tr_test_failed++;
      continue;
    }
    o.ops = tr_ops[op].name;
    bool seen = false;
    for (int s = 0; s < 200 && !seen; s++) {
      o.seed = (uint64_t)s;
      tr_module *m = gen(&o, NULL);
      seen = m && module_has_op(m, (tr_op)op);
      tr_module_free(m);
    }
    if (!seen) {
      fprintf(stderr, "  --ops %s made no %s in 200 seeds\n", tr_ops[op].name, tr_ops[op].name);
      tr_test_failed++;
    }
    covered += seen;
  }
  CHECK(evaluated > 60);
  CHECK_EQ_INT(covered, evaluated);
}

static void count_dtypes(const tr_shape *s, int *seen) {
  if (s->dtype == TR_DT_TUPLE) {
    for (int i = 0; i < s->nelems; i++) count_dtypes(s->elems[i], seen);
    return;
  }
  seen[s->dtype]++;
}

/* Every element type the generator claims (core types and complex)
 * occurs in the default mix. */
TR_TEST(gen_covers_every_element_type) {
  int seen[TR_DT_COUNT] = {0};
  tr_gen_opts o;
  tr_gen_opts_init(&o);
  for (int s = 0; s < 400; s++) {
    o.seed = (uint64_t)s;
    tr_module *m = gen(&o, NULL);
    for (int i = 0; m && i < m->ncomps; i++)
      for (int j = 0; j < m->comps[i]->ninstrs; j++) count_dtypes(m->comps[i]->instrs[j]->shape, seen);
    tr_module_free(m);
  }
  for (int t = 0; t < TR_DT_COUNT; t++) {
    bool want = tr_dtype_is_array((tr_dtype)t) && t != TR_DT_TOKEN &&
                (tr_dtypes[t].core || tr_dtypes[t].kind == TR_DK_COMPLEX);
    if (want && !seen[t]) {
      fprintf(stderr, "  no %s value in 400 modules\n", tr_dtypes[t].name);
      tr_test_failed++;
    }
  }
}

TR_TEST(gen_rejects_bad_lists) {
  tr_gen_opts o;
  tr_gen_opts_init(&o);
  tr_module *m = NULL;
  tr_diag d = {0};
  o.ops = "add,frobnicate";
  CHECK_EQ_INT(tr_gen_module(&o, &m, &d), TR_ERR_USAGE);
  CHECK_CONTAINS(tr_diag_first(&d), "unknown op 'frobnicate'");
  tr_diag_clear(&d);
  o.ops = NULL;
  o.dtypes = "f32,f7";
  CHECK_EQ_INT(tr_gen_module(&o, &m, &d), TR_ERR_USAGE);
  CHECK_CONTAINS(tr_diag_first(&d), "unknown element type 'f7'");
  tr_diag_clear(&d);
  o.dtypes = "f32,s32";
  CHECK_EQ_INT(tr_gen_module(&o, &m, &d), TR_OK);
  tr_module_free(m);
  tr_diag_clear(&d);
}

/* The reference evaluates generated modules, exact and shadow, on the
 * input policy's values without an error of any kind. */
TR_TEST(gen_modules_evaluate) {
  int n = bulk_count(2000) / 10, bad = 0;
  tr_gen_opts o;
  tr_gen_opts_init(&o);
  for (int s = 0; s < n && bad < 5; s++) {
    o.seed = 1000000u + (uint64_t)s;
    tr_module *m = gen(&o, NULL);
    if (!m) {
      bad++;
      continue;
    }
    tr_diag d = {0};
    tr_input_config cfg;
    tr_input_config_init(&cfg);
    cfg.seed = 1;
    tr_tensor **args = NULL, **outs = NULL;
    int nargs = 0, nouts = 0;
    tr_status st = tr_inputs_make(m, &cfg, &args, &nargs, &d);
    tr_eval_opts eo = {.max_while_trips = 1000, .verified = true};
    if (!st) st = tr_eval_opt(m, &eo, args, nargs, &outs, &nouts, &d);
    tr_eval_free_outputs(outs, nouts);
    tr_shadow_out *so = NULL;
    int nso = 0;
    tr_shadow_opts sopt = {.eval = eo};
    if (!st) st = tr_eval_shadow(m, &sopt, args, nargs, &so, &nso, &d);
    tr_shadow_free(so, nso);
    if (st) {
      fprintf(stderr, "  seed %llu: %s\n", (unsigned long long)o.seed, tr_diag_first(&d));
      bad++;
    }
    tr_inputs_free(args, nargs);
    tr_diag_clear(&d);
    tr_module_free(m);
  }
  CHECK_EQ_INT(bad, 0);
}
