/* test_files.c - walks the self-describing HLO corpus. Every .hlo file
 * in tests/hlo must parse, verify, print, read back to an equal module,
 * print again to the same bytes and clone to an equal module; every .hlo
 * file in tests/bad must fail at the place and with the message its
 * first-line comment names; and the corpus must use every core (TR_OPF_K)
 * op at least once. */
#include "test.h"
#include "testutil.h"

#include <dirent.h>
#include <stdlib.h>

#include "../../src/ir/ir.h"

static void fail_diag(const char *path, const char *stage, const tr_diag *d) {
  const char *first = tr_diag_first(d);
  fprintf(stderr, "  %s: %s failed:\n%s\n", path, stage,
          first ? first : "(no diagnostic)");
  for (int i = 1; i < d->nmsgs && i < 5; i++)
    fprintf(stderr, "%s\n", d->msgs[i]);
  tr_test_failed++;
}

/* Parses, verifies, prints, re-parses, re-prints and clones one file. */
static void roundtrip_one(const char *path) {
  tr_parse_opts opts = {0};
  tr_diag d = {0};
  tr_module *m = tr_parse_file(path, &opts, &d);
  if (!m) {
    fail_diag(path, "parse", &d);
    tr_diag_clear(&d);
    return;
  }
  if (tr_verify(m, &d) != TR_OK) fail_diag(path, "verify", &d);
  tr_diag_clear(&d);

  tr_buf t1 = {0}, t2 = {0}, why = {0};
  tr_print_module(&t1, m);
  tr_buf pname = {0};
  tr_buf_printf(&pname, "%s (printed)", path);
  tr_module *m2 = tr_parse(tr_buf_str(&pname), tr_buf_str(&t1), t1.n, &opts, &d);
  if (!m2) {
    fail_diag(path, "re-parse of the printed text", &d);
    fprintf(stderr, "  printed text was:\n%s\n", tr_buf_str(&t1));
  } else {
    if (tr_verify(m2, &d) != TR_OK) fail_diag(path, "verify after re-parse", &d);
    if (!tr_module_equal(m, m2, &why)) {
      fprintf(stderr, "  %s: re-parsed module differs: %s\n", path,
              tr_buf_str(&why));
      tr_test_failed++;
    }
    tr_print_module(&t2, m2);
    if (t1.n != t2.n || strcmp(tr_buf_str(&t1), tr_buf_str(&t2)) != 0) {
      size_t i = 0;
      const char *a = tr_buf_str(&t1), *b = tr_buf_str(&t2);
      while (a[i] && a[i] == b[i]) i++;
      size_t from = i > 60 ? i - 60 : 0;
      fprintf(stderr,
              "  %s: printing is not idempotent; first difference at byte %zu:\n"
              "    first:  ...%.120s\n    second: ...%.120s\n",
              path, i, a + from, b + from);
      tr_test_failed++;
    }
    tr_module_free(m2);
  }
  tr_diag_clear(&d);

  tr_module *m3 = tr_module_clone(m);
  tr_buf_free(&why);
  if (!m3) {
    fprintf(stderr, "  %s: clone returned NULL\n", path);
    tr_test_failed++;
  } else {
    if (!tr_module_equal(m, m3, &why)) {
      fprintf(stderr, "  %s: clone differs: %s\n", path, tr_buf_str(&why));
      tr_test_failed++;
    }
    tr_module_free(m3);
  }
  tr_module_free(m);
  tr_buf_free(&t1);
  tr_buf_free(&t2);
  tr_buf_free(&why);
  tr_buf_free(&pname);
}

TR_TEST(files_hlo_roundtrip) {
  tr_test_files fl = tr_test_list_hlo("hlo");
  CHECK(fl.n >= 25);
  for (int i = 0; i < fl.n; i++) {
    int before = tr_test_failed;
    roundtrip_one(fl.paths[i]);
    if (tr_test_failed != before) fprintf(stderr, "  FAILED FILE %s\n", fl.paths[i]);
  }
  tr_test_files_free(&fl);
}

/* ---- broken modules ---- */
/* The first line reads "// ERROR: L:C: text" (the parser must reject the
 * file) or "// VERIFY: L:C: text" (it parses, the verifier rejects it). */
typedef struct {
  bool verify;  /* VERIFY: rather than ERROR: */
  int line, col;
  char want[256]; /* substring of the message */
} bad_expect;

static bool read_expect(const char *text, bad_expect *e) {
  const char *p = text;
  while (*p == ' ' || *p == '\t') p++;
  if (strncmp(p, "//", 2) != 0) return false;
  p += 2;
  while (*p == ' ') p++;
  if (strncmp(p, "ERROR:", 6) == 0) {
    e->verify = false;
    p += 6;
  } else if (strncmp(p, "VERIFY:", 7) == 0) {
    e->verify = true;
    p += 7;
  } else {
    return false;
  }
  char *end;
  long l = strtol(p, &end, 10);
  if (end == p || *end != ':') return false;
  p = end + 1;
  long c = strtol(p, &end, 10);
  if (end == p || *end != ':') return false;
  p = end + 1;
  while (*p == ' ') p++;
  size_t n = 0;
  while (p[n] && p[n] != '\n' && p[n] != '\r' && n + 1 < sizeof e->want) n++;
  while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
  if (n == 0) return false;
  memcpy(e->want, p, n);
  e->want[n] = '\0';
  e->line = (int)l;
  e->col = (int)c;
  return true;
}

/* Whether the first line of msg (the message proper, not the quoted source
 * line and caret that follow it) contains want. Callers pass the text
 * after "path:line:col: error:", since a file name may contain want. */
static bool first_line_has(const char *msg, const char *want) {
  size_t n = strcspn(msg, "\n");
  size_t m = strlen(want);
  for (size_t i = 0; i + m <= n; i++)
    if (memcmp(msg + i, want, m) == 0) return true;
  return false;
}

static void bad_one(const char *path) {
  char *text = NULL;
  size_t len = 0;
  tr_diag d = {0};
  if (tr_read_file(path, &text, &len, &d) != TR_OK) {
    fail_diag(path, "read", &d);
    tr_diag_clear(&d);
    return;
  }
  bad_expect e;
  if (!read_expect(text, &e)) {
    fprintf(stderr, "  %s: first line is not \"// ERROR: L:C: text\" or "
                    "\"// VERIFY: L:C: text\"\n", path);
    tr_test_failed++;
    free(text);
    return;
  }
  free(text);

  tr_parse_opts opts = {0};
  tr_module *m = tr_parse_file(path, &opts, &d);
  const char *stage = "parse";
  if (e.verify) {
    if (!m) {
      fprintf(stderr, "  %s: expected to parse and fail verification, but "
                      "parsing failed:\n%s\n", path,
              tr_diag_first(&d) ? tr_diag_first(&d) : "(no diagnostic)");
      tr_test_failed++;
      tr_diag_clear(&d);
      return;
    }
    stage = "verify";
    tr_diag_clear(&d);
    if (tr_verify(m, &d) == TR_OK) {
      fprintf(stderr, "  %s: verifier accepted a module it must reject\n", path);
      tr_test_failed++;
      tr_module_free(m);
      tr_diag_clear(&d);
      return;
    }
  } else if (m) {
    fprintf(stderr, "  %s: parser accepted a module it must reject\n", path);
    tr_test_failed++;
    tr_module_free(m);
    tr_diag_clear(&d);
    return;
  }

  const char *got = tr_diag_first(&d);
  tr_buf prefix = {0};
  tr_buf_printf(&prefix, "%s:%d:%d: error:", path, e.line, e.col);
  if (!got) {
    fprintf(stderr, "  %s: %s failed without a diagnostic\n", path, stage);
    tr_test_failed++;
  } else if (strncmp(got, tr_buf_str(&prefix), prefix.n) != 0 ||
             !first_line_has(got + prefix.n, e.want)) {
    fprintf(stderr, "  %s: %s diagnostic\n%s\n  expected it to start with "
                    "\"%s\" and contain \"%s\"\n",
            path, stage, got, tr_buf_str(&prefix), e.want);
    tr_test_failed++;
  }
  tr_buf_free(&prefix);
  if (m) tr_module_free(m);
  tr_diag_clear(&d);
}

TR_TEST(files_bad_diagnostics) {
  tr_test_files fl = tr_test_list_hlo("bad");
  CHECK(fl.n >= 25);
  for (int i = 0; i < fl.n; i++) bad_one(fl.paths[i]);
  tr_test_files_free(&fl);
}

/* ---- coverage of the core op set ---- */
TR_TEST(files_core_op_coverage) {
  tr_test_files fl = tr_test_list_hlo("hlo");
  int counts[TR_OP_COUNT] = {0};
  tr_parse_opts opts = {0};
  for (int i = 0; i < fl.n; i++) {
    tr_diag d = {0};
    tr_module *m = tr_parse_file(fl.paths[i], &opts, &d);
    tr_diag_clear(&d);
    if (!m) continue; /* reported by files_hlo_roundtrip */
    for (int c = 0; c < m->ncomps; c++) {
      const tr_comp *comp = m->comps[c];
      for (int j = 0; j < comp->ninstrs; j++) counts[comp->instrs[j]->op]++;
    }
    tr_module_free(m);
  }
  int missing = 0;
  for (int op = 0; op < TR_OP_COUNT; op++) {
    if (!(tr_ops[op].flags & TR_OPF_K) || counts[op] > 0) continue;
    if (!missing) fprintf(stderr, "  core ops no tests/hlo module uses:");
    fprintf(stderr, " %s", tr_ops[op].name);
    missing++;
  }
  if (missing) {
    fprintf(stderr, "\n");
    tr_test_failed++;
  }
  tr_test_files_free(&fl);
}
