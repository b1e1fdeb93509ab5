/* test_defects_emit.c - cases for the emitter's defects of the registry
 * (src/comp/defects.def, category emitter and the fusion defects that live
 * in the emitter). The checking is test_defects.c's td_check_case; each
 * case there has a TR_TEST here. */
#include "test.h"
#include "test_defects.h"

/* Dot operands: small positive ints, so every product counts. */
static int64_t gen_dot(int p, size_t i) { return (int64_t)(i % 7) + 1 + p; }

/* Row r of a [rows, 13] (or [rows, 16]) max reduce: 0, 1, 2, ... with the
 * row's maximum 100 + r at column 10, past the last whole chunk of 8 lanes
 * of a 13-wide row. */
static int64_t gen_max(int p, size_t i) {
  (void)p;
  return i % 13 == 10 ? 100 + (int64_t)(i / 13) : (int64_t)(i % 13);
}

/* Reduced operands of the input fusion: row r of x is r, r+1; y is 1. */
static int64_t gen_fused(int p, size_t i) { return p == 0 ? (int64_t)(i / 2 + i % 2) : 1; }

const dcase td_emit_cases[] = {
  /* K = 20 with blocks of 16: the last block [16,20) is stepped back to
   * [4,20), so the products 4..15 are added twice, in every output. With
   * K = 32 the blocks are whole. */
  {.defect = "emit-dot-k-block-revisit",
   .hlo = "HloModule dotk\nENTRY e {\n  a = s32[2,20] parameter(0)\n  b = s32[20,3] parameter(1)\n"
          "  ROOT d = s32[2,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
   .first_bad = 0,
   .safe_hlo = "HloModule dotk32\nENTRY e {\n  a = s32[2,32] parameter(0)\n  b = s32[32,3] parameter(1)\n"
               "  ROOT d = s32[2,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
   .gen = gen_dot},
  /* Five s4 elements: the fifth is packed into the high nibble of byte 2
   * and read back from the low one as 0, in both parameters, so
   * r[4] = 0 + 0 instead of 5 + 1. Six elements leave no odd tail. */
  {.defect = "emit-packed-nibble-order",
   .hlo = "HloModule nib\nENTRY e {\n  a = s4[5] parameter(0)\n  b = s4[5] parameter(1)\n"
          "  ROOT r = s4[5] add(a, b)\n}\n",
   .in = {{1, -2, 3, -4, 5}, {1, 1, 1, 1, 1}},
   .first_bad = 4,
   .safe_hlo = "HloModule nib6\nENTRY e {\n  a = s4[6] parameter(0)\n  b = s4[6] parameter(1)\n"
               "  ROOT r = s4[6] add(a, b)\n}\n",
   .safe_in = {{1, -2, 3, -4, 5, -6}, {1, 1, 1, 1, 1, 1}}},
  /* 3 << 40 is 0 in the reference; the hardware shift takes 40 mod 32 and
   * gives 3 << 8. Amounts below 32 agree. */
  {.defect = "emit-shift-amount-mod-width",
   .hlo = "HloModule shl\nENTRY e {\n  a = s32[4] parameter(0)\n  b = s32[4] parameter(1)\n"
          "  ROOT r = s32[4] shift-left(a, b)\n}\n",
   .in = {{1, 3, -5, 7}, {3, 40, 31, 32}},
   .first_bad = 1,
   .safe_in = {{1, 3, -5, 7}, {3, 0, 31, 5}}},
  /* 30 * 30 = 900 overflows f8e4m3fn (max 448): NaN in the reference, 448
   * saturated. 21 * 21 = 441 rounds to 448 either way. */
  {.defect = "emit-f8e4m3fn-saturate",
   .hlo = "HloModule f8\nENTRY e {\n  a = s32[4] parameter(0)\n  f = f32[4] convert(a)\n"
          "  g = f32[4] multiply(f, f)\n  ROOT r = f8e4m3fn[4] convert(g)\n}\n",
   .in = {{1, 30, -40, 2}},
   .first_bad = 1,
   .safe_in = {{1, 21, -20, 2}}},
  /* pad 2_0: out[0] = x[0] * k[2] = 100; with the pads swapped the window
   * starts at x[0]: 1 + 20 + 300. Equal pads (1_1) cannot be swapped. */
  {.defect = "emit-conv-pad-lo-hi-swap",
   .hlo = "HloModule convpad\nENTRY e {\n  x = s32[1,8,1] parameter(0)\n  k = s32[3,1,1] parameter(1)\n"
          "  ROOT c = s32[1,8,1] convolution(x, k), window={size=3 pad=2_0}, dim_labels=b0f_0io->b0f\n}\n",
   .in = {{1, 2, 3, 4, 5, 6, 7, 8}, {1, 10, 100}},
   .first_bad = 0,
   .safe_hlo = "HloModule convpad11\nENTRY e {\n  x = s32[1,8,1] parameter(0)\n  k = s32[3,1,1] parameter(1)\n"
               "  ROOT c = s32[1,8,1] convolution(x, k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f\n}\n",
   .safe_in = {{1, 2, 3, 4, 5, 6, 7, 8}, {1, 10, 100}}},
  /* lhs_dilate=2 reads x0 _ x1 _ x2 _ x3: the first window holds x0
   * only (1); undilated it holds x0 and x1 (3). No dilation, no change. */
  {.defect = "emit-reduce-window-base-dilation",
   .hlo = "HloModule rwd\nadd {\n  p = s32[] parameter(0)\n  q = s32[] parameter(1)\n  ROOT s = s32[] add(p, q)\n}\n"
          "ENTRY e {\n  x = s32[4] parameter(0)\n  z = s32[] constant(0)\n"
          "  ROOT r = s32[6] reduce-window(x, z), window={size=2 lhs_dilate=2}, to_apply=add\n}\n",
   .in = {{1, 2, 3, 4}},
   .first_bad = 0,
   .safe_hlo = "HloModule rw\nadd {\n  p = s32[] parameter(0)\n  q = s32[] parameter(1)\n  ROOT s = s32[] add(p, q)\n}\n"
               "ENTRY e {\n  x = s32[4] parameter(0)\n  z = s32[] constant(0)\n"
               "  ROOT r = s32[3] reduce-window(x, z), window={size=2}, to_apply=add\n}\n",
   .safe_in = {{1, 2, 3, 4}}},
  /* 13-wide rows with 8 lanes: columns 8..12 are never seen, and the
   * row maximum sits at column 10. 16-wide rows are two whole chunks. */
  {.defect = "emit-int-minmax-reduce-lanes",
   .hlo = "HloModule rmax\nmax {\n  p = s32[] parameter(0)\n  q = s32[] parameter(1)\n  ROOT m = s32[] maximum(p, q)\n}\n"
          "ENTRY e {\n  x = s32[2,13] parameter(0)\n  z = s32[] constant(-1000)\n"
          "  ROOT r = s32[2] reduce(x, z), dimensions={1}, to_apply=max\n}\n",
   .first_bad = 0,
   .safe_hlo = "HloModule rmax16\nmax {\n  p = s32[] parameter(0)\n  q = s32[] parameter(1)\n  ROOT m = s32[] maximum(p, q)\n}\n"
               "ENTRY e {\n  x = s32[2,16] parameter(0)\n  z = s32[] constant(-1000)\n"
               "  ROOT r = s32[2] reduce(x, z), dimensions={1}, to_apply=max\n}\n",
   .gen = gen_max},
  /* reduce(add(x, y)) is one input fusion; 20 rows are two tiles of 16,
   * and the second tile starts from the first tile's sums instead of 0:
   * row 16 comes out as 33 + 3. 16 rows are one tile. */
  {.defect = "fusion-reduce-init-once",
   .hlo = "HloModule fred\nadd {\n  p = s32[] parameter(0)\n  q = s32[] parameter(1)\n  ROOT s = s32[] add(p, q)\n}\n"
          "ENTRY e {\n  x = s32[20,2] parameter(0)\n  y = s32[20,2] parameter(1)\n  s = s32[20,2] add(x, y)\n"
          "  z = s32[] constant(0)\n  ROOT r = s32[20] reduce(s, z), dimensions={1}, to_apply=add\n}\n",
   .first_bad = 16,
   .safe_hlo = "HloModule fred16\nadd {\n  p = s32[] parameter(0)\n  q = s32[] parameter(1)\n  ROOT s = s32[] add(p, q)\n}\n"
               "ENTRY e {\n  x = s32[16,2] parameter(0)\n  y = s32[16,2] parameter(1)\n  s = s32[16,2] add(x, y)\n"
               "  z = s32[] constant(0)\n  ROOT r = s32[16] reduce(s, z), dimensions={1}, to_apply=add\n}\n",
   .gen = gen_fused},
};
const int td_emit_ncases = (int)(sizeof td_emit_cases / sizeof td_emit_cases[0]);

TR_TEST(defect_emit_dot_k_block_revisit) { td_check_case(&td_emit_cases[0]); }
TR_TEST(defect_emit_packed_nibble_order) { td_check_case(&td_emit_cases[1]); }
TR_TEST(defect_emit_shift_amount_mod_width) { td_check_case(&td_emit_cases[2]); }
TR_TEST(defect_emit_f8e4m3fn_saturate) { td_check_case(&td_emit_cases[3]); }
TR_TEST(defect_emit_conv_pad_lo_hi_swap) { td_check_case(&td_emit_cases[4]); }
TR_TEST(defect_emit_reduce_window_base_dilation) { td_check_case(&td_emit_cases[5]); }
TR_TEST(defect_emit_int_minmax_reduce_lanes) { td_check_case(&td_emit_cases[6]); }
TR_TEST(defect_fusion_reduce_init_once) { td_check_case(&td_emit_cases[7]); }
