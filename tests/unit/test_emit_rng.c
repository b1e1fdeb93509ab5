/* test_emit_rng.c - rng-bit-generator through the built-in compiler
 * (src/comp/emit_rng.c): every algorithm, value width and shape class of
 * the reference's generators (eval_rng.c) gives the same bits. */
#include "../../src/target/target.h"
#include "test.h"

/* From test_builtin.c. */
tr_module *tb_parse(const char *text, const char *what);
tr_target *tb_open(const char *spec);
int tb_compare(tr_target *t, const tr_module *m, int seed, const char *what);

/* Philox with a two- and a three-word state (the counter's high word is
 * the key or state[2]), 64-bit values from word pairs with an odd count,
 * ThreeFry 64-bit (one block per value) and 32-bit and narrower (the
 * shape split in half along its first even dim, else its largest; a
 * scalar), and rng_default (Philox on CPU). */
static const char rng_module[] =
  "HloModule rng\n"
  "ENTRY e {\n"
  "  s = u64[2] parameter(0)\n"
  "  t = u64[3] parameter(1)\n"
  "  a = (u64[2], u32[3,5]) rng-bit-generator(s), algorithm=rng_philox\n"
  "  b = (u64[2], s64[7]) rng-bit-generator(s), algorithm=rng_philox\n"
  "  c = (u64[2], u8[3,5,2]) rng-bit-generator(s), algorithm=rng_three_fry\n"
  "  d = (u64[2], s16[]) rng-bit-generator(s), algorithm=rng_three_fry\n"
  "  f = (u64[2], u64[5]) rng-bit-generator(s), algorithm=rng_three_fry\n"
  "  g = (u64[3], s32[9]) rng-bit-generator(t), algorithm=rng_default\n"
  "  h = (u64[2], u16[3,7]) rng-bit-generator(s), algorithm=rng_three_fry\n"
  "  i = (u64[3], s8[5,3]) rng-bit-generator(t), algorithm=rng_philox\n"
  "  ROOT r = ((u64[2], u32[3,5]), (u64[2], s64[7]), (u64[2], u8[3,5,2]), (u64[2], s16[]),"
  " (u64[2], u64[5]), (u64[3], s32[9]), (u64[2], u16[3,7]), (u64[3], s8[5,3]))"
  " tuple(a, b, c, d, f, g, h, i)\n"
  "}\n";

TR_TEST(emit_rng_bit_generator_exact) {
  tr_target *t = tb_open("builtin");
  if (!t) return;
  tr_module *m = tb_parse(rng_module, "rng");
  if (m) {
    for (int seed = 0; seed < 3; seed++) CHECK_EQ_INT(tb_compare(t, m, seed, "rng"), 1);
    tr_module_free(m);
  }
  tr_target_close(t);
}

/* 4-bit values are not generated: a clean unsupported verdict. */
TR_TEST(emit_rng_bit_generator_s4_declined) {
  tr_target *t = tb_open("builtin");
  if (!t) return;
  tr_module *m = tb_parse("HloModule r4\nENTRY e {\n  s = u64[2] parameter(0)\n"
                          "  ROOT a = (u64[2], s4[6]) rng-bit-generator(s), algorithm=rng_philox\n}\n",
                          "rng s4");
  if (m) {
    CHECK_EQ_INT(tb_compare(t, m, 1, "rng s4"), 2);
    tr_module_free(m);
  }
  tr_target_close(t);
}
