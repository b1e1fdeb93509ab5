/* fuzz_parser.c - libFuzzer entry: any bytes through the HLO parser, and
 * whatever parses through the verifier, printer, clone and a second parse.
 * Run with `make fuzz-parser`. */
#include "../src/ir/ir.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tr_diag d = {0};
  tr_parse_opts opts = {size & 1};
  tr_module *m = tr_parse("fuzz.hlo", (const char *)data, size, &opts, &d);
  if (m) {
    tr_verify(m, &d);
    tr_buf b = {0};
    tr_print_module(&b, m);
    tr_diag d2 = {0};
    tr_module *m2 = tr_parse("printed.hlo", b.p, b.n, &opts, &d2);
    /* Whatever parses must print to text that parses to the same module. */
    if (!m2) {
      fprintf(stderr, "printed text does not parse:\n%s\n", tr_diag_first(&d2));
      abort();
    }
    tr_buf why = {0};
    if (!tr_module_equal(m, m2, &why)) {
      fprintf(stderr, "round trip differs: %s\n", tr_buf_str(&why));
      abort();
    }
    tr_module *c = tr_module_clone(m);
    tr_module_free(c);
    tr_buf_free(&why);
    tr_module_free(m2);
    tr_diag_clear(&d2);
    tr_buf_free(&b);
    tr_module_free(m);
  }
  tr_diag_clear(&d);
  return 0;
}
