/* emit_rng.c - the kernel of rng-bit-generator: the reference's
 * generators (src/eval/eval_rng.c, which follows XLA:CPU's expansion of
 * the op: Philox4x32-10 for rng_default and rng_philox, ThreeFry2x32-20
 * for rng_three_fry) written out as C, step for step, so the bits agree.
 * Result leaf 0 is the new state, leaf 1 the data. */
#include "emitint.h"

tr_status k_rng_bit_generator(em *e, const tr_instr *in) {
  const tr_shape *s = in->shape, *st = in->operands[0]->shape;
  const tr_attr *aa = tr_instr_attr(in, TR_ATTR_ALGORITHM);
  const char *alg = aa && aa->u.s ? aa->u.s : "rng_default";
  if (s->dtype != TR_DT_TUPLE || s->nelems != 2 || st->dtype != TR_DT_U64 || st->rank != 1 ||
      st->dims[0] < 2)
    return em_unsup(e, in, "state or result shape");
  const tr_shape *ds = s->elems[1];
  int bits = bits_of(ds->dtype);
  if (!tr_dtype_is_int(ds->dtype) || (bits != 8 && bits != 16 && bits != 32 && bits != 64))
    return em_unsup(e, in, "value type");
  bool three = strcmp(alg, "rng_three_fry") == 0;
  if (!three && strcmp(alg, "rng_philox") != 0 && strcmp(alg, "rng_default") != 0)
    return em_unsup(e, in, "algorithm");
  long long ns = st->dims[0], n = count_of(ds);
  const char *dt = tr_dtype_name(ds->dtype);
  tr_buf *k = &e->cur;
  /* eK: one block of the generator on x[] with the key. */
  tr_buf_puts(k, "static void eK(uint32_t *x, u64 key) {\n");
  if (!three)
    tr_buf_puts(k,
      "  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);\n  int q;\n"
      "  for (q = 0; q < 10; q++) {\n"
      "    u64 p0 = (u64)x[0] * 0xD2511F53u, p1 = (u64)x[2] * 0xCD9E8D57u;\n"
      "    uint32_t y0 = (uint32_t)(p1 >> 32) ^ x[1] ^ k0, y1 = (uint32_t)p1;\n"
      "    uint32_t y2 = (uint32_t)(p0 >> 32) ^ x[3] ^ k1, y3 = (uint32_t)p0;\n"
      "    x[0] = y0;\n    x[1] = y1;\n    x[2] = y2;\n    x[3] = y3;\n"
      "    k0 += 0x9E3779B9u;\n    k1 += 0xBB67AE85u;\n  }\n}\n");
  else
    tr_buf_puts(k,
      "  static const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};\n"
      "  uint32_t ks[3];\n  int b, q;\n"
      "  ks[0] = (uint32_t)key;\n  ks[1] = (uint32_t)(key >> 32);\n"
      "  ks[2] = 0x1BD11BDAu ^ ks[0] ^ ks[1];\n"
      "  x[0] += ks[0];\n  x[1] += ks[1];\n"
      "  for (b = 0; b < 5; b++) {\n"
      "    for (q = 0; q < 4; q++) {\n"
      "      int d = rot[(b % 2) * 4 + q];\n"
      "      x[0] += x[1];\n      x[1] = (x[1] << d) | (x[1] >> (32 - d));\n      x[1] ^= x[0];\n    }\n"
      "    x[0] += ks[(b + 1) % 3];\n    x[1] += ks[(b + 2) % 3] + (uint32_t)(b + 1);\n  }\n}\n");
  tr_buf_printf(k, "static int kK(u8 **rs, const u8 *a0, i64 n) {\n"
                   "  u64 st[%lld], key;\n  i64 i;\n  (void)n;\n"
                   "  for (i = 0; i < %lld; i++) st[i] = raw_get(a0, 8, i);\n  key = st[0];\n",
                ns, ns);
  if (!three) {
    /* Counter (st[1], st[2]), or (st[1], st[0]) for a two-word state; the
     * 32-bit words of counter j are values 4j..4j+3 (64-bit: 2j, 2j+1). */
    long long nv4 = bits == 64 ? (2 * n + 3) / 4 : (n + 3) / 4;
    tr_buf_printf(k,
      "  {\n    u64 lo = st[1], hi = st[%d], j;\n"
      "    for (j = 0; j < %lldull; j++) {\n"
      "      u64 l = lo + j, h = hi + (l < lo ? 1 : 0);\n"
      "      uint32_t x[4];\n      int q;\n"
      "      x[0] = (uint32_t)l;\n      x[1] = (uint32_t)(l >> 32);\n"
      "      x[2] = (uint32_t)h;\n      x[3] = (uint32_t)(h >> 32);\n"
      "      eK(x, key);\n",
      ns >= 3 ? 2 : 0, nv4);
    if (bits == 64)
      tr_buf_printf(k, "      for (q = 0; q < 2; q++)\n"
                       "        if ((i64)(2 * j) + q < %lldLL)\n"
                       "          ST_%s(rs[1], (i64)(2 * j) + q, CN_%s((u64)x[2 * q] | ((u64)x[2 * q + 1] << 32)));\n",
                    n, dt, dt);
    else
      tr_buf_printf(k, "      for (q = 0; q < 4; q++)\n"
                       "        if ((i64)(4 * j) + q < %lldLL) ST_%s(rs[1], (i64)(4 * j) + q, CN_%s((u64)x[q]));\n",
                    n, dt, dt);
    tr_buf_printf(k, "    }\n    st[1] = lo + %lldull;\n", nv4);
    if (ns >= 3) tr_buf_printf(k, "    st[2] = hi + (st[1] < lo ? 1 : 0);\n");
    tr_buf_puts(k, "  }\n");
  } else if (bits == 64) {
    /* One block per element: counter st[1] + linear index. */
    tr_buf_printf(k,
      "  for (i = 0; i < %lldLL; i++) {\n    u64 c = st[1] + (u64)i;\n    uint32_t x[2];\n"
      "    x[0] = (uint32_t)c;\n    x[1] = (uint32_t)(c >> 32);\n    eK(x, key);\n"
      "    ST_%s(rs[1], i, CN_%s((u64)x[0] | ((u64)x[1] << 32)));\n  }\n  st[1] += %lldull;\n",
      n, dt, dt, n);
  } else {
    /* 32 bits and narrower: the shape split in half along its first even
     * dim (else its largest); block h gives elements 2h and 2h+1 along it
     * (eval_rng.c). */
    int r = ds->rank, sd = 0;
    if (r > 0) {
      sd = -1;
      for (int d = 0; d < r && sd < 0; d++)
        if (ds->dims[d] % 2 == 0) sd = d;
      if (sd < 0) {
        sd = 0;
        for (int d = 1; d < r; d++)
          if (ds->dims[d] > ds->dims[sd]) sd = d;
      }
    }
    int64_t hdims[64], hst[64];
    long long nhalf = 1;
    for (int d = 0; d < r; d++) hdims[d] = d == sd ? (ds->dims[d] + 1) / 2 : ds->dims[d];
    for (int d = r - 1; d >= 0; d--) {
      hst[d] = nhalf;
      nhalf *= hdims[d];
    }
    if (r > 0) {
      emit_i64s(k, "dims", ds->dims, r);
      emit_i64s(k, "hst", hst, r);
    }
    tr_buf_printf(k, "  for (i = 0; i < %lldLL; i++) {\n    i64 rem = i, lin = 0;\n    int which = 0, d;\n"
                     "    uint32_t x[2];\n    u64 c;\n", n);
    if (r > 0)
      tr_buf_printf(k, "    for (d = %d; d >= 0; d--) {\n      i64 q = rem %% dims[d];\n      rem /= dims[d];\n"
                       "      if (d == %d) {\n        which = (int)(q %% 2);\n        q /= 2;\n      }\n"
                       "      lin += q * hst[d];\n    }\n", r - 1, sd);
    else
      tr_buf_puts(k, "    (void)rem;\n    (void)d;\n");
    tr_buf_printf(k, "    c = st[1] + (u64)lin;\n    x[0] = (uint32_t)c;\n    x[1] = (uint32_t)(c >> 32);\n"
                     "    eK(x, key);\n    ST_%s(rs[1], i, CN_%s((u64)x[which]));\n  }\n"
                     "  st[1] += %lldull;\n", dt, dt, r ? nhalf : 1);
  }
  tr_buf_printf(k, "  for (i = 0; i < %lldLL; i++) raw_put(rs[0], 8, i, st[i]);\n  return 0;\n}\n", ns);
  return TR_OK;
}
