/* parse.c - reads XLA's HLO text into a module: recursive descent over the
 * lexer's tokens, one function per construct. The first error stops the
 * parse; it is reported as file:line:col with the line and a caret, and the
 * half-built module is freed. */
#include "ir.h"
#include "lex.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- parser state ---- */
struct saved_names {
  tr_strmap names;
  struct saved_names *up;
};

typedef struct {
  lexer lx;              /* token source */
  token tok;             /* current token */
  const tr_src *src;     /* text and file name */
  tr_diag *d;            /* where errors go */
  const tr_parse_opts *opts; /* options (never NULL) */
  tr_module *m;          /* module being built */
  tr_comp *comp;         /* computation being built */
  tr_strmap names;       /* instruction names of comp */
  tr_strmap comps;       /* computation names */
  tr_strmap anames;      /* attribute names of anames_for, an instruction
                            with many (duplicates found in linear time) */
  const tr_instr *anames_for;
  struct saved_names *saved; /* names maps of the computations around an
                            inline one (arena-held, so a jump can free them) */
  bool failed;           /* an error was reported */
  int depth;             /* nesting of shapes, literals, nested instructions */
  size_t lc_off;         /* line/col cache: offset ... */
  int lc_line, lc_col;   /* ... and its position */
} parser;

static bool perr(parser *p, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool perr(parser *p, size_t off, const char *fmt, ...) {
  if (p->failed) return false;
  p->failed = true;
  va_list ap;
  va_start(ap, fmt);
  tr_diag_vat(p->d, p->src, off, fmt, ap);
  va_end(ap);
  return false;
}

static void linecol(parser *p, size_t off, int *line, int *col) {
  if (off < p->lc_off) {
    p->lc_off = 0;
    p->lc_line = p->lc_col = 1;
  }
  for (size_t i = p->lc_off; i < off && i < p->src->len; i++) {
    if (p->src->text[i] == '\n') {
      p->lc_line++;
      p->lc_col = 1;
    } else {
      p->lc_col++;
    }
  }
  p->lc_off = off;
  *line = p->lc_line;
  *col = p->lc_col;
}

static const char *tk_desc(tk_kind k) {
  switch (k) {
  case TK_EOF: return "end of file";
  case TK_ERROR: return "an error";
  case TK_NAME: return "a name";
  case TK_IDENT: return "a word";
  case TK_ATTR: return "an attribute";
  case TK_INT: return "an integer";
  case TK_FLOAT: return "a number";
  case TK_STRING: return "a string";
  case TK_DIMLABELS: return "dim labels";
  case TK_DXD: return "a size list";
  case TK_PAD: return "a padding spec";
  case TK_EQ: return "'='";
  case TK_COMMA: return "','";
  case TK_COLON: return "':'";
  case TK_STAR: return "'*'";
  case TK_QMARK: return "'?'";
  case TK_HASH: return "'#'";
  case TK_PLUS: return "'+'";
  case TK_TILDE: return "'~'";
  case TK_LBRACK: return "'['";
  case TK_RBRACK: return "']'";
  case TK_LBRACE: return "'{'";
  case TK_RBRACE: return "'}'";
  case TK_LPAREN: return "'('";
  case TK_RPAREN: return "')'";
  case TK_ARROW: return "'->'";
  case TK_LEQ: return "'<='";
  case TK_ELLIPSIS: return "'...'";
  }
  return "?";
}

/* "'text'" of the current token for messages (at most 40 bytes). */
static const char *tok_text(parser *p, char *buf, size_t n) {
  if (p->tok.kind == TK_EOF) return "end of file";
  size_t len = p->tok.len < 40 ? p->tok.len : 40;
  if (len + 3 > n) len = n - 3;
  buf[0] = '\'';
  memcpy(buf + 1, p->src->text + p->tok.off, len);
  buf[len + 1] = '\'';
  buf[len + 2] = 0;
  return buf;
}

static bool advance(parser *p) {
  if (p->failed) return false;
  p->tok = lex_next(&p->lx);
  if (p->tok.kind == TK_ERROR) return perr(p, p->tok.off, "%s", p->tok.err);
  return true;
}

static bool expected(parser *p, const char *what) {
  char b[48];
  return perr(p, p->tok.off, "expected %s, got %s", what, tok_text(p, b, sizeof b));
}

static bool expect(parser *p, tk_kind k, const char *what) {
  if (p->failed) return false;
  if (p->tok.kind != k) return expected(p, what ? what : tk_desc(k));
  return advance(p);
}

static bool is_word(parser *p, const char *w) {
  return (p->tok.kind == TK_IDENT) && p->tok.wlen == strlen(w) &&
         memcmp(p->src->text + p->tok.woff, w, p->tok.wlen) == 0;
}

static char *tok_word(parser *p) {
  return tr_arena_strndup(p->m->arena, p->src->text + p->tok.woff, p->tok.wlen);
}

static bool tok_is_dtype(parser *p, tr_dtype *dt) {
  tr_dtype tmp;
  return p->tok.kind == TK_IDENT &&
         tr_dtype_lookup(p->src->text + p->tok.woff, p->tok.wlen, dt ? dt : &tmp);
}

/* The next non-space character after the current token. */
static int peek_char(parser *p) {
  size_t save = p->lx.pos;
  bool ok = lex_skip_space(&p->lx);
  int c = ok && p->lx.pos < p->src->len ? (unsigned char)p->src->text[p->lx.pos] : -1;
  p->lx.pos = save;
  return c;
}

/* Kind of the token after the current one (current must not be a string). */
static tk_kind peek_kind(parser *p) {
  size_t save = p->lx.pos;
  token t = lex_next(&p->lx);
  p->lx.pos = save;
  return t.kind;
}

/* ---- small growable int64 arrays in the arena ---- */
typedef struct {
  int64_t *v; /* values */
  int n, cap; /* used and allocated */
} ivec;

static void ivec_push(tr_arena *a, ivec *x, int64_t v) {
  if (x->n == x->cap) {
    int nc = x->cap ? x->cap * 2 : 8;
    int64_t *nv = tr_arena_alloc(a, sizeof(int64_t) * (size_t)nc);
    if (x->n) memcpy(nv, x->v, sizeof(int64_t) * (size_t)x->n);
    x->v = nv;
    x->cap = nc;
  }
  x->v[x->n++] = v;
}

static bool parse_int(parser *p, int64_t *out) {
  *out = 0;
  if (p->tok.kind != TK_INT) return expected(p, "an integer");
  if ((!p->tok.neg && p->tok.u > INT64_MAX))
    return perr(p, p->tok.off, "integer out of range");
  *out = p->tok.neg ? (int64_t)(0 - p->tok.u) : (int64_t)p->tok.u;
  return advance(p);
}

/* {1,2,3} */
static bool parse_int_list(parser *p, ivec *out) {
  if (!expect(p, TK_LBRACE, "'{' to start a list of integers")) return false;
  while (p->tok.kind != TK_RBRACE) {
    int64_t v;
    if (!parse_int(p, &v)) return false;
    ivec_push(p->m->arena, out, v);
    if (p->tok.kind == TK_COMMA) {
      if (!advance(p)) return false;
    } else if (p->tok.kind != TK_RBRACE) {
      return expected(p, "',' or '}' in a list of integers");
    }
  }
  return advance(p);
}

/* ---- shapes ---- */
#define MAX_RANK 64
#define MAX_ELEMS ((int64_t)1 << 50)
#define MAX_DEPTH 64

static tr_shape *parse_shape(parser *p);

/* Whether a shape starts here: an element type, a tuple's '(' or a
 * buffer shape's 'b(' (no opcode is called b). */
static bool starts_shape(parser *p) {
  return tok_is_dtype(p, NULL) || p->tok.kind == TK_LPAREN || (is_word(p, "b") && peek_kind(p) == TK_LPAREN);
}

static bool parse_layout(parser *p, tr_shape *s) {
  size_t lbrace = p->tok.off;
  if (!advance(p)) return false;
  ivec m2m = {0};
  while (p->tok.kind == TK_INT) {
    int64_t v;
    if (!parse_int(p, &v)) return false;
    ivec_push(p->m->arena, &m2m, v);
    if (p->tok.kind == TK_COMMA && !advance(p)) return false;
  }
  if (p->tok.kind == TK_COLON) {
    /* Tiles, memory space, element size...: kept verbatim up to the '}'. */
    size_t i = p->lx.pos, start = i;
    int depth = 0;
    for (;; i++) {
      if (i >= p->src->len) return perr(p, lbrace, "unterminated layout");
      char c = p->src->text[i];
      if (c == '(' || c == '{') depth++;
      else if ((c == ')' || c == '}') && depth > 0) depth--;
      else if (c == '}') break;
    }
    size_t e = i;
    while (e > start && (p->src->text[e - 1] == ' ' || p->src->text[e - 1] == '\n')) e--;
    s->layout_ext = tr_arena_strndup(p->m->arena, p->src->text + start, e - start);
    p->lx.pos = i;
    if (!advance(p)) return false;
  }
  if (p->tok.kind != TK_RBRACE) return expected(p, "'}' to close the layout");
  if (m2m.n != s->rank && !(m2m.n == 0 && (s->rank == 0 || s->layout_ext)))
    return perr(p, lbrace, "layout has %d dimensions but the shape has rank %d", m2m.n, s->rank);
  if (m2m.n) {
    bool seen[MAX_RANK] = {0};
    for (int i = 0; i < m2m.n; i++) {
      if (m2m.v[i] < 0 || m2m.v[i] >= s->rank || seen[m2m.v[i]])
        return perr(p, lbrace, "layout {...} is not a permutation of the %d dimensions", s->rank);
      seen[m2m.v[i]] = true;
    }
    s->layout = m2m.v;
  }
  s->has_layout = true;
  return advance(p);
}

static tr_shape *parse_shape(parser *p) {
  tr_arena *a = p->m->arena;
  tr_shape *s = tr_arena_alloc(a, sizeof *s);
  if (p->tok.kind == TK_LPAREN) {
    s->dtype = TR_DT_TUPLE;
    if (++p->depth > MAX_DEPTH) {
      perr(p, p->tok.off, "shapes nested too deeply");
      return NULL;
    }
    if (!advance(p)) return NULL;
    tr_shape **el = NULL;
    int n = 0, cap = 0;
    while (p->tok.kind != TK_RPAREN) {
      if (n == cap) {
        tr_shape **ne = tr_arena_alloc(a, sizeof(tr_shape *) * (size_t)(cap = cap ? 2 * cap : 8));
        if (n) memcpy(ne, el, sizeof(tr_shape *) * (size_t)n);
        el = ne;
      }
      if (!(el[n++] = parse_shape(p))) return NULL;
      if (p->tok.kind == TK_COMMA) {
        if (!advance(p)) return NULL;
      } else if (p->tok.kind != TK_RPAREN) {
        expected(p, "',' or ')' in a tuple shape");
        return NULL;
      }
    }
    s->nelems = n;
    s->elems = el;
    p->depth--;
    return advance(p) ? s : NULL;
  }
  if (is_word(p, "b") && peek_kind(p) == TK_LPAREN) {
    /* XLA's buffer shape around an array: b(f32[2,4]). */
    if (!advance(p) || !advance(p)) return NULL;
    tr_shape *in = parse_shape(p);
    if (!in) return NULL;
    if (in->dtype == TR_DT_TUPLE || in->buffer) {
      expected(p, "an array shape inside b(...)");
      return NULL;
    }
    if (!expect(p, TK_RPAREN, "')' to close the buffer shape")) return NULL;
    in->buffer = true;
    return in;
  }
  if (!tok_is_dtype(p, &s->dtype)) {
    expected(p, "a shape such as f32[2,3]");
    return NULL;
  }
  if (!advance(p) || !expect(p, TK_LBRACK, "'[' after the element type")) return NULL;
  int64_t dims[MAX_RANK];
  uint8_t dyn[MAX_RANK];
  bool anydyn = false;
  int rank = 0;
  int64_t count = 1;
  while (p->tok.kind != TK_RBRACK) {
    if (rank == MAX_RANK) {
      perr(p, p->tok.off, "shape has more than %d dimensions", MAX_RANK);
      return NULL;
    }
    dyn[rank] = 0;
    if (p->tok.kind == TK_QMARK) {
      dims[rank] = -1;
      dyn[rank] = 1;
      anydyn = true;
      if (!advance(p)) return NULL;
    } else {
      if (p->tok.kind == TK_LEQ) {
        dyn[rank] = 1;
        anydyn = true;
        if (!advance(p)) return NULL;
      }
      size_t off = p->tok.off;
      if (p->tok.kind != TK_INT || p->tok.neg) {
        expected(p, "a dimension size");
        return NULL;
      }
      if (!parse_int(p, &dims[rank])) return NULL;
      if (dims[rank] > MAX_ELEMS || (dims[rank] && count > MAX_ELEMS / dims[rank])) {
        perr(p, off, "shape is too large");
        return NULL;
      }
      count *= dims[rank];
    }
    rank++;
    if (p->tok.kind == TK_COMMA) {
      if (!advance(p)) return NULL;
    } else if (p->tok.kind != TK_RBRACK) {
      expected(p, "',' or ']' in the dimensions");
      return NULL;
    }
  }
  s->rank = rank;
  if (rank) s->dims = tr_arena_memdup(a, dims, sizeof(int64_t) * (size_t)rank);
  if (anydyn) s->dynamic = tr_arena_memdup(a, dyn, (size_t)rank);
  if (!advance(p)) return NULL;
  if (p->tok.kind == TK_LBRACE) {
    tk_kind k = peek_kind(p);
    if (k == TK_INT || k == TK_COLON || k == TK_RBRACE) {
      if (!parse_layout(p, s)) return NULL;
    }
  }
  return s;
}

/* ---- literals ---- */
static bool store_int(parser *p, size_t off, tr_dtype dt, bool neg, uint64_t mag,
                      unsigned char *slot) {
  const tr_dtype_info *f = &tr_dtypes[dt];
  uint64_t bits;
  if (f->kind == TR_DK_PRED) {
    if (neg || mag > 1) return perr(p, off, "value out of range for pred (expected true, false, 0 or 1)");
    *slot = (unsigned char)mag;
    return true;
  }
  if (f->kind == TR_DK_UINT) {
    if ((neg && mag) || mag > tr_int_max(dt))
      return perr(p, off, "value out of range for %s", f->name);
    bits = mag;
  } else {
    uint64_t lim = neg ? (uint64_t)0 - (uint64_t)tr_int_min(dt) : tr_int_max(dt);
    if (mag > lim) return perr(p, off, "value out of range for %s", f->name);
    bits = neg ? 0 - mag : mag;
  }
  switch (tr_dtype_size(dt)) {
  case 1: *slot = (unsigned char)bits; break;
  case 2: { uint16_t v = (uint16_t)bits; memcpy(slot, &v, 2); break; }
  case 4: { uint32_t v = (uint32_t)bits; memcpy(slot, &v, 4); break; }
  default: memcpy(slot, &bits, 8); break;
  }
  return true;
}

static void store_bits(unsigned char *slot, int size, uint64_t bits) {
  switch (size) {
  case 1: *slot = (unsigned char)bits; break;
  case 2: { uint16_t v = (uint16_t)bits; memcpy(slot, &v, 2); break; }
  case 4: { uint32_t v = (uint32_t)bits; memcpy(slot, &v, 4); break; }
  default: memcpy(slot, &bits, 8); break;
  }
}

/* One float element of type dt (for complex: one part). */
static bool parse_float_elem(parser *p, tr_dtype dt, unsigned char *slot) {
  size_t off = p->tok.off;
  double v;
  bool is_nan = false, payload = false;
  uint64_t pl = 0;
  if (p->tok.kind == TK_INT) {
    v = p->tok.neg ? -(double)p->tok.u : (double)p->tok.u;
  } else if (p->tok.kind == TK_FLOAT) {
    v = p->tok.f;
    is_nan = isnan(v);
    payload = p->tok.payload;
    pl = p->tok.u;
  } else if (is_word(p, "inf")) {
    v = INFINITY;
  } else {
    return expected(p, "a floating-point value");
  }
  const char *nm = tr_dtypes[dt].name;
  if (is_nan && !tr_float_has_nan(dt)) return perr(p, off, "%s has no NaN", nm);
  if (isinf(v) && !tr_float_has_inf(dt)) return perr(p, off, "%s has no infinity", nm);
  uint64_t bits;
  if (payload) {
    const tr_dtype_info *f = &tr_dtypes[dt];
    if (!tr_float_has_payload(dt)) return perr(p, off, "NaN payloads are not supported for %s", nm);
    uint64_t mmask = ((uint64_t)1 << f->mbits) - 1;
    if (pl == 0 || pl > mmask) return perr(p, off, "NaN payload out of range for %s", nm);
    uint64_t emax = ((uint64_t)1 << f->ebits) - 1;
    bits = (emax << f->mbits) | pl;
    if (signbit(v)) bits |= (uint64_t)1 << (f->bits - 1);
  } else {
    bits = tr_float_from_double(dt, v);
    double back = tr_float_to_double(dt, bits);
    if (!isnan(v) && !isinf(v) && (isinf(back) || isnan(back)))
      return perr(p, off, "value out of range for %s", nm);
  }
  int size = tr_dtype_size(dt);
  if (dt == TR_DT_C64) size = 4;
  if (dt == TR_DT_C128) size = 8;
  store_bits(slot, size, bits);
  return advance(p);
}

static bool parse_elem(parser *p, tr_dtype dt, unsigned char *slot) {
  const tr_dtype_info *f = &tr_dtypes[dt];
  switch (f->kind) {
  case TR_DK_PRED:
    if (is_word(p, "true") || is_word(p, "false")) {
      *slot = is_word(p, "true");
      return advance(p);
    }
    /* fall through */
  case TR_DK_SINT:
  case TR_DK_UINT:
    if (p->tok.kind != TK_INT)
      return expected(p, f->kind == TR_DK_PRED ? "true or false" : "an integer value");
    if (!store_int(p, p->tok.off, dt, p->tok.neg, p->tok.u, slot)) return false;
    return advance(p);
  case TR_DK_FLOAT:
    return parse_float_elem(p, dt, slot);
  case TR_DK_COMPLEX: {
    tr_dtype part = dt == TR_DT_C64 ? TR_DT_F32 : TR_DT_F64;
    int half = dt == TR_DT_C64 ? 4 : 8;
    if (!expect(p, TK_LPAREN, "'(' to start a complex value")) return false;
    if (!parse_float_elem(p, part, slot)) return false;
    if (!expect(p, TK_COMMA, "',' between real and imaginary parts")) return false;
    if (!parse_float_elem(p, part, slot + half)) return false;
    return expect(p, TK_RPAREN, "')' to close a complex value");
  }
  default:
    return perr(p, p->tok.off, "%s values cannot be written as literals", f->name);
  }
}

static bool parse_dense(parser *p, const tr_shape *s, int level, unsigned char *data,
                        int64_t *idx, int esize) {
  for (int64_t i = 0; i < s->dims[level]; i++) {
    if (p->tok.kind == TK_RBRACE)
      return perr(p, p->tok.off, "expected %lld values in dimension %d of the literal, got %lld",
                  (long long)s->dims[level], level, (long long)i);
    if (level == s->rank - 1) {
      if (!parse_elem(p, s->dtype, data + (size_t)(*idx) * (size_t)esize)) return false;
      (*idx)++;
    } else {
      if (p->tok.kind != TK_LBRACE) return expected(p, "'{' to start a row of the literal");
      if (!advance(p) || !parse_dense(p, s, level + 1, data, idx, esize)) return false;
    }
    if (p->tok.kind == TK_COMMA && !advance(p)) return false;
  }
  if (p->tok.kind != TK_RBRACE)
    return perr(p, p->tok.off, "too many values in dimension %d of the literal (expected %lld)",
                level, (long long)s->dims[level]);
  return advance(p);
}

static tr_literal *parse_literal(parser *p, tr_shape *s) {
  tr_arena *a = p->m->arena;
  tr_literal *lit = tr_arena_alloc(a, sizeof *lit);
  lit->shape = s;
  if (p->tok.kind == TK_LBRACE && peek_kind(p) == TK_ELLIPSIS) {
    if (s->dtype != TR_DT_TUPLE && s->rank == 0) {
      perr(p, p->tok.off, "a scalar constant cannot be elided");
      return NULL;
    }
    if (!advance(p) || !advance(p) || !expect(p, TK_RBRACE, "'}' after '...'")) return NULL;
    lit->elided = true;
    return lit;
  }
  if (s->dtype == TR_DT_TUPLE) {
    /* Tuple literals follow the (already depth-checked) tuple shape. */
    if (!expect(p, TK_LPAREN, "'(' to start a tuple literal")) return NULL;
    lit->nelems = s->nelems;
    lit->elems = tr_arena_alloc(a, sizeof(tr_literal *) * (size_t)(s->nelems + 1));
    for (int i = 0; i < s->nelems; i++) {
      if (!(lit->elems[i] = parse_literal(p, s->elems[i]))) return NULL;
      if (p->tok.kind == TK_COMMA && !advance(p)) return NULL;
    }
    return expect(p, TK_RPAREN, "')' to close the tuple literal") ? lit : NULL;
  }
  if (!tr_dtype_is_array(s->dtype) || tr_shape_count(s) < 0) {
    perr(p, p->tok.off, "a constant of this shape cannot have a literal");
    return NULL;
  }
  int64_t count = tr_shape_count(s);
  int esize = tr_dtype_size(s->dtype);
  if (s->rank > 0 && p->tok.kind != TK_LBRACE && p->tok.kind != TK_EOF) {
    /* A single value for an array: XLA's parser keeps it as element 0 and
     * leaves the rest zero (it records, then drops, an error). */
    if (count == 0) return expected(p, "'{' to start the literal"), NULL;
    lit->single = true;
    if (!parse_elem(p, s->dtype, lit->one)) return NULL;
    /* Dense data for the passes that read it, up to a limit; past it the
     * value alone (evaluation expands it within its own memory limits). */
    if ((uint64_t)count * (uint64_t)esize <= ((uint64_t)64 << 20)) {
      lit->data = tr_arena_alloc(a, (size_t)count * (size_t)esize + 1);
      memcpy(lit->data, lit->one, (size_t)esize);
    }
    return lit;
  }
  /* Every value takes at least one byte of text, so a shape larger than
   * the rest of the file is rejected before anything is allocated. */
  if ((size_t)count > p->src->len - p->tok.off) {
    perr(p, p->tok.off, "literal has fewer values than its shape needs (%lld)", (long long)count);
    return NULL;
  }
  unsigned char *data = tr_arena_alloc(a, (size_t)count * (size_t)esize + 1);
  lit->data = data;
  if (s->rank == 0) return parse_elem(p, s->dtype, data) ? lit : NULL;
  if (!expect(p, TK_LBRACE, "'{' to start the literal")) return NULL;
  int64_t idx = 0;
  return parse_dense(p, s, 0, data, &idx, esize) ? lit : NULL;
}

/* Deterministic values for an elided constant: documented in docs/HLO.md.
 * The filled constant is an ordinary one from then on (elided cleared):
 * the printer writes its values, so a target handed the printed module
 * (trench check) computes on the same values as the reference. */
static void fill_elided(tr_arena *a, tr_literal *lit, uint64_t seed) {
  if (lit->shape->dtype == TR_DT_TUPLE) return;
  const tr_shape *s = lit->shape;
  int64_t count = tr_shape_count(s);
  if (count < 0) return;
  int esize = tr_dtype_size(s->dtype);
  unsigned char *data = tr_arena_alloc(a, (size_t)count * (size_t)esize + 1);
  for (int64_t i = 0; i < count; i++) {
    uint64_t z = seed + (uint64_t)i * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    unsigned char *slot = data + (size_t)i * (size_t)esize;
    const tr_dtype_info *f = &tr_dtypes[s->dtype];
    if (f->kind == TR_DK_FLOAT) {
      double v = (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0; /* [-1,1) */
      store_bits(slot, esize, tr_float_from_double(s->dtype, v));
    } else if (f->kind == TR_DK_PRED) {
      *slot = (unsigned char)(z & 1);
    } else if (f->kind == TR_DK_SINT || f->kind == TR_DK_UINT) {
      uint64_t v = z % 8; /* small non-negative values fit every int type */
      store_bits(slot, esize, v);
    } else if (f->kind == TR_DK_COMPLEX) {
      double v = (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0;
      if (s->dtype == TR_DT_C64) store_bits(slot, 4, tr_float_from_double(TR_DT_F32, v));
      else store_bits(slot, 8, tr_float_from_double(TR_DT_F64, v));
    }
  }
  lit->data = data;
  lit->elided = false;
}

/* ---- attributes ---- */
static bool parse_dxd(parser *p, ivec *out) {
  tr_arena *a = p->m->arena;
  if (p->tok.kind == TK_INT) {
    int64_t v;
    if (!parse_int(p, &v)) return false;
    ivec_push(a, out, v);
    return true;
  }
  if (p->tok.kind != TK_DXD) return expected(p, "sizes such as 3x3");
  const char *s = p->src->text + p->tok.off, *e = s + p->tok.len;
  while (s < e) {
    int64_t v = 0;
    while (s < e && *s != 'x') {
      if (v > (INT64_MAX - 9) / 10) return perr(p, p->tok.off, "size out of range");
      v = v * 10 + (*s++ - '0');
    }
    ivec_push(a, out, v);
    if (s < e) s++;
  }
  return advance(p);
}

/* lo_hi[_interior] joined by x; returns the dims in *out (3 per dim). */
static bool parse_pad_spec(parser *p, ivec *out, bool *interior) {
  tr_arena *a = p->m->arena;
  if (p->tok.kind != TK_PAD) return expected(p, "a padding spec such as 0_0x1_2_1");
  const char *s = p->src->text + p->tok.off, *e = s + p->tok.len;
  while (s < e) {
    int64_t part[3] = {0, 0, 0};
    int k = 0;
    while (s < e && *s != 'x') {
      bool neg = *s == '-';
      if (neg) s++;
      int64_t v = 0;
      while (s < e && *s >= '0' && *s <= '9') {
        if (v > (INT64_MAX - 9) / 10) return perr(p, p->tok.off, "padding out of range");
        v = v * 10 + (*s++ - '0');
      }
      part[k++] = neg ? -v : v;
      if (s < e && *s == '_') s++;
    }
    if (k == 3) *interior = true;
    for (int i = 0; i < 3; i++) ivec_push(a, out, part[i]);
    if (s < e) s++;
  }
  return advance(p);
}

/* window={size=3x3 stride=...}; off locates the attribute for errors. */
static bool parse_window(parser *p, tr_attr *at, size_t off) {
  tr_arena *a = p->m->arena;
  if (!expect(p, TK_LBRACE, "'{' to start the window")) return false;
  ivec f[6] = {{0}};
  static const char *const names[] = {"size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal"};
  bool seen[6] = {0};
  int rank = -1;
  while (p->tok.kind != TK_RBRACE) {
    if (p->tok.kind != TK_ATTR) return expected(p, "a window field such as size=3x3");
    int k = -1;
    for (int i = 0; i < 6; i++)
      if (strlen(names[i]) == p->tok.wlen && memcmp(names[i], p->src->text + p->tok.woff, p->tok.wlen) == 0) k = i;
    size_t foff = p->tok.off;
    if (k < 0)
      return perr(p, foff, "unknown window field (expected size, stride, pad, lhs_dilate, rhs_dilate or rhs_reversal)");
    if (seen[k]) return perr(p, foff, "window field '%s' given twice", names[k]);
    seen[k] = true;
    if (!advance(p)) return false;
    int n;
    if (k == 2) {
      bool interior = false;
      if (!parse_pad_spec(p, &f[2], &interior)) return false;
      if (interior) return perr(p, foff, "window padding takes low_high per dimension");
      n = f[2].n / 3;
    } else {
      if (!parse_dxd(p, &f[k])) return false;
      n = f[k].n;
    }
    if (rank >= 0 && n != rank)
      return perr(p, foff, "window field '%s' has %d dimensions, expected %d", names[k], n, rank);
    rank = n;
  }
  if (!advance(p)) return false;
  if (rank < 0) rank = 0;
  if (!seen[0] && rank > 0) return perr(p, off, "window needs a size");
  tr_window_dim *w = tr_arena_alloc(a, sizeof(tr_window_dim) * (size_t)(rank + 1));
  for (int i = 0; i < rank; i++) {
    w[i].size = f[0].v[i];
    w[i].stride = seen[1] ? f[1].v[i] : 1;
    w[i].pad_lo = seen[2] ? f[2].v[3 * i] : 0;
    w[i].pad_hi = seen[2] ? f[2].v[3 * i + 1] : 0;
    w[i].lhs_dilate = seen[3] ? f[3].v[i] : 1;
    w[i].rhs_dilate = seen[4] ? f[4].v[i] : 1;
    w[i].reversal = seen[5] ? f[5].v[i] != 0 : false;
  }
  at->u.win = w;
  at->n = rank;
  return true;
}

/* b01f_01io->b01f */
static bool parse_dimlabels(parser *p, tr_attr *at) {
  if (p->tok.kind != TK_DIMLABELS) return expected(p, "dim labels such as b01f_01io->b01f");
  tr_arena *a = p->m->arena;
  const char *s = p->src->text + p->tok.off;
  size_t n = p->tok.len;
  /* The lexer matched [..]_[..]->[..], so both separators are present. */
  const char *us = memchr(s, '_', n), *ar = (const char *)memchr(s, '>', n) - 1;
  size_t l1 = (size_t)(us - s), l2 = (size_t)(ar - us - 1), l3 = n - (size_t)(ar + 2 - s);
  if (l1 != l2 || l1 != l3 || l1 < 2)
    return perr(p, p->tok.off, "dim labels must give the same number of dimensions on every side");
  int ns = (int)l1 - 2;
  tr_convdims *c = tr_arena_alloc(a, sizeof *c);
  c->nspatial = ns;
  c->in_spatial = tr_arena_alloc(a, sizeof(int64_t) * (size_t)(ns + 1));
  c->k_spatial = tr_arena_alloc(a, sizeof(int64_t) * (size_t)(ns + 1));
  c->out_spatial = tr_arena_alloc(a, sizeof(int64_t) * (size_t)(ns + 1));
  const char *part[3] = {s, us + 1, ar + 2};
  const char majors[3][2] = {{'b', 'f'}, {'i', 'o'}, {'b', 'f'}};
  int64_t *sp[3] = {c->in_spatial, c->k_spatial, c->out_spatial};
  int64_t *m0[3] = {&c->in_batch, &c->k_in, &c->out_batch};
  int64_t *m1[3] = {&c->in_feature, &c->k_out, &c->out_feature};
  for (int k = 0; k < 3; k++) {
    int seen0 = 0, seen1 = 0;
    uint64_t spseen = 0;
    for (size_t i = 0; i < l1; i++) {
      char ch = part[k][i];
      if (ch == majors[k][0]) {
        *m0[k] = (int64_t)i;
        seen0++;
      } else if (ch == majors[k][1]) {
        *m1[k] = (int64_t)i;
        seen1++;
      } else if (ch >= '0' && ch <= '9' && ch - '0' < ns && !(spseen & (1u << (ch - '0')))) {
        sp[k][ch - '0'] = (int64_t)i;
        spseen |= 1u << (ch - '0');
      } else {
        return perr(p, p->tok.off + (size_t)(part[k] - s) + i,
                    "bad dim label '%c' (each of %c, %c and 0..%d exactly once)", ch,
                    majors[k][0], majors[k][1], ns - 1);
      }
    }
    if (seen0 != 1 || seen1 != 1)
      return perr(p, p->tok.off, "dim labels need exactly one %c and one %c in each part",
                  majors[k][0], majors[k][1]);
  }
  at->u.conv = c;
  at->n = ns;
  return advance(p);
}

static bool parse_instruction(parser *p, tr_comp *c);
static bool bind_params(parser *p, tr_comp *c, size_t start);

/* The instructions of a computation body, from its '{' (the current
 * token) through its '}'. */
static bool parse_body(parser *p, tr_comp *c, size_t lbrace) {
  while (p->tok.kind != TK_RBRACE) {
    if (p->tok.kind == TK_EOF)
      return perr(p, p->tok.off, "expected '}' to close computation '%s'", c->name);
    if (!parse_instruction(p, c)) return false;
  }
  if (c->ninstrs == 0) return perr(p, lbrace, "computation '%s' has no instructions", c->name);
  if (!c->root) c->root = c->instrs[c->ninstrs - 1];
  return advance(p);
}

/* An inline body where a computation name goes ('to_apply={ ... }', which
 * XLA's parser takes): a computation of its own, named after the one
 * being built, and placed before it in the module so that the printed
 * text defines it before its use. */
static tr_comp *parse_inline_comp(parser *p) {
  tr_comp *outer = p->comp;
  size_t lbrace = p->tok.off;
  char name[256];
  for (int k = 0;; k++) {
    snprintf(name, sizeof name, "%.200s.inline%s%.0d", outer ? outer->name : "module", k ? "." : "", k);
    if (!tr_strmap_get(&p->comps, name)) break;
  }
  if (p->depth >= MAX_DEPTH) {
    perr(p, lbrace, "inline computations nested too deeply");
    return NULL;
  }
  struct saved_names *saved = tr_arena_alloc(p->m->arena, sizeof *saved);
  saved->names = p->names;
  saved->up = p->saved;
  p->saved = saved;
  memset(&p->names, 0, sizeof p->names);
  p->names.fail = p->m->arena;
  tr_comp *c = tr_comp_new(p->m, name);
  linecol(p, lbrace, &c->line, &c->col);
  p->comp = c;
  p->depth++;
  bool ok = advance(p) && parse_body(p, c, lbrace) && bind_params(p, c, lbrace);
  p->depth--;
  tr_strmap_free(&p->names);
  p->names = saved->names;
  p->saved = saved->up;
  p->comp = outer;
  if (!ok) return NULL;
  tr_strmap_put(&p->comps, c->name, c);
  /* Move it in front of the computation that uses it. */
  tr_module *m = p->m;
  int at = m->ncomps - 1;
  while (at > 0 && m->comps[at - 1] != outer) {
    m->comps[at] = m->comps[at - 1];
    at--;
  }
  if (at > 0) {
    m->comps[at] = m->comps[at - 1];
    at--;
  }
  m->comps[at] = c;
  return c;
}

static tr_comp *lookup_comp(parser *p) {
  if (p->tok.kind == TK_LBRACE) return parse_inline_comp(p);
  if ((p->tok.kind != TK_NAME || p->tok.colon) && p->tok.kind != TK_IDENT) {
    expected(p, "a computation name");
    return NULL;
  }
  char *nm = tok_word(p);
  tr_comp *c = tr_strmap_get(&p->comps, nm);
  if (!c) {
    perr(p, p->tok.off, "unknown computation '%s' (computations must be defined before they are called)", nm);
    return NULL;
  }
  return advance(p) ? c : NULL;
}

static tr_instr *lookup_instr(parser *p) {
  if ((p->tok.kind != TK_NAME || p->tok.colon) && p->tok.kind != TK_IDENT) {
    expected(p, "an instruction name");
    return NULL;
  }
  char *nm = tok_word(p);
  tr_instr *in = tr_strmap_get(&p->names, nm);
  if (!in) {
    perr(p, p->tok.off, "unknown instruction '%s' in computation '%s' (operands must be defined before use)",
         nm, p->comp->name);
    return NULL;
  }
  return advance(p) ? in : NULL;
}

static bool check_ident(parser *p, tr_attr_key k) {
  const char *allowed = tr_attrs[k].allowed;
  if (p->tok.kind != TK_IDENT) {
    char buf[96];
    snprintf(buf, sizeof buf, "a value for %s", tr_attrs[k].name);
    return expected(p, buf);
  }
  if (!allowed) return true;
  const char *w = p->src->text + p->tok.woff, *q = allowed;
  size_t n = p->tok.wlen;
  while (*q) {
    const char *e = strchr(q, '|');
    if (!e) e = q + strlen(q);
    if ((size_t)(e - q) == n && memcmp(q, w, n) == 0) return true;
    q = *e ? e + 1 : e;
  }
  return perr(p, p->tok.off, "bad value for %s: '%.*s' (expected one of %s)", tr_attrs[k].name,
              (int)n, w, allowed);
}

/* The value of a modelled attribute; off is where its name was written. */
static bool parse_typed_attr(parser *p, tr_attr *at, size_t off) {
  tr_arena *a = p->m->arena;
  switch (at->kind) {
  case TR_AK_INT: return parse_int(p, &at->u.i);
  case TR_AK_BOOL:
    if (!is_word(p, "true") && !is_word(p, "false")) return expected(p, "true or false");
    at->u.b = is_word(p, "true");
    return advance(p);
  case TR_AK_INTS: {
    ivec v = {0};
    if (!parse_int_list(p, &v)) return false;
    at->u.ints = v.v;
    at->n = v.n;
    return true;
  }
  case TR_AK_INTSS: {
    if (!expect(p, TK_LBRACE, "'{' to start a list of lists")) return false;
    ivec rows[1024];
    int n = 0;
    while (p->tok.kind != TK_RBRACE) {
      if (n == TR_NELEMS(rows)) return perr(p, p->tok.off, "list too long");
      rows[n] = (ivec){0};
      if (!parse_int_list(p, &rows[n])) return false;
      n++;
      if (p->tok.kind == TK_COMMA && !advance(p)) return false;
    }
    at->n = n;
    at->u.intss.v = tr_arena_alloc(a, sizeof(int64_t *) * (size_t)(n + 1));
    at->u.intss.lens = tr_arena_alloc(a, sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
      at->u.intss.v[i] = rows[i].v;
      at->u.intss.lens[i] = rows[i].n;
    }
    return advance(p);
  }
  case TR_AK_STR:
    if (p->tok.kind != TK_STRING) return expected(p, "a string");
    at->u.s = tr_arena_strdup(a, p->tok.str);
    return advance(p);
  case TR_AK_IDENT:
    if (!check_ident(p, at->key)) return false;
    at->u.s = tok_word(p);
    return advance(p);
  case TR_AK_COMP: return (at->u.comp = lookup_comp(p)) != NULL;
  case TR_AK_COMPS:
  case TR_AK_INSTRS: {
    if (!expect(p, TK_LBRACE, "'{' to start a list of names")) return false;
    void *items[4096];
    int n = 0;
    while (p->tok.kind != TK_RBRACE) {
      if (n == TR_NELEMS(items)) return perr(p, p->tok.off, "list too long");
      void *x = at->kind == TR_AK_COMPS ? (void *)lookup_comp(p) : (void *)lookup_instr(p);
      if (!x) return false;
      items[n++] = x;
      if (p->tok.kind == TK_COMMA) {
        if (!advance(p)) return false;
      } else if (p->tok.kind != TK_RBRACE) {
        return expected(p, "',' or '}' in a list of names");
      }
    }
    at->n = n;
    void *arr = tr_arena_memdup(a, items, sizeof(void *) * (size_t)(n ? n : 1));
    if (at->kind == TR_AK_COMPS) at->u.comps = arr;
    else at->u.instrs = arr;
    return advance(p);
  }
  case TR_AK_SLICE: {
    if (!expect(p, TK_LBRACE, "'{' to start the slice")) return false;
    tr_slice_dim dims[MAX_RANK];
    int n = 0;
    while (p->tok.kind != TK_RBRACE) {
      if (n == MAX_RANK) return perr(p, p->tok.off, "slice has too many dimensions");
      if (!expect(p, TK_LBRACK, "'[' to start a slice range such as [0:4:2]")) return false;
      dims[n].stride = 1;
      if (!parse_int(p, &dims[n].start) || !expect(p, TK_COLON, "':' in a slice range") ||
          !parse_int(p, &dims[n].limit))
        return false;
      if (p->tok.kind == TK_COLON && (!advance(p) || !parse_int(p, &dims[n].stride))) return false;
      if (!expect(p, TK_RBRACK, "']' to close the slice range")) return false;
      n++;
      if (p->tok.kind == TK_COMMA && !advance(p)) return false;
    }
    at->n = n;
    at->u.slice = tr_arena_memdup(a, dims, sizeof(tr_slice_dim) * (size_t)(n ? n : 1));
    return advance(p);
  }
  case TR_AK_PADDING: {
    ivec v = {0};
    bool interior = false;
    /* A rank-0 pad prints as "padding=" with nothing after it (XLA's
     * printer joins zero dims); take that as an empty spec. */
    const char *t = p->src->text;
    bool empty = p->tok.kind == TK_COMMA || p->tok.kind == TK_RBRACE || p->tok.kind == TK_EOF ||
                 (p->tok.kind != TK_PAD && memchr(t + off, '\n', p->tok.off - off) != NULL);
    if (!empty && !parse_pad_spec(p, &v, &interior)) return false;
    int n = v.n / 3;
    tr_pad_dim *pd = tr_arena_alloc(a, sizeof(tr_pad_dim) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) pd[i] = (tr_pad_dim){v.v[3 * i], v.v[3 * i + 1], v.v[3 * i + 2]};
    at->n = n;
    at->u.pad = pd;
    return true;
  }
  case TR_AK_WINDOW: return parse_window(p, at, off);
  case TR_AK_DIMLABELS: return parse_dimlabels(p, at);
  case TR_AK_RAW: break;
  }
  return false;
}

static bool parse_attr(parser *p, tr_instr *in) {
  if (p->tok.kind != TK_ATTR) return expected(p, "an attribute such as dimensions={0}");
  size_t off = p->tok.off;
  char *name = tok_word(p);
  bool dup = false;
  if (in->nattrs < 16) {
    for (int i = 0; i < in->nattrs && !dup; i++) dup = strcmp(in->attrs[i].name, name) == 0;
  } else {
    if (p->anames_for != in) { /* a fresh table: clearing a big one would cost its size */
      tr_strmap_free(&p->anames);
      for (int i = 0; i < in->nattrs; i++) tr_strmap_put(&p->anames, in->attrs[i].name, &in->attrs[i]);
      p->anames_for = in;
    }
    dup = tr_strmap_get(&p->anames, name) != NULL;
  }
  if (dup) return perr(p, off, "duplicate attribute '%s'", name);
  tr_attr_key k;
  tr_attr_kind kind = TR_AK_RAW;
  /* A start carries the attributes of its synchronous op. */
  tr_op mop = in->op, base;
  bool start;
  if (tr_async_pair_op(in, &base, &start) && start) mop = base;
  if (tr_attr_lookup(name, strlen(name), &k)) {
    tr_attr_kind tk = tr_attrs[k].kind;
    if (tk == TR_AK_COMP || tk == TR_AK_COMPS || tk == TR_AK_INSTRS || tr_op_models_attr(mop, k, NULL))
      kind = tk;
  }
  if (kind == TR_AK_RAW) {
    tr_attr *at = tr_instr_add_attr(p->m, in, TR_ATTR_RAW, TR_AK_RAW, name);
    if (p->anames_for == in) tr_strmap_put(&p->anames, at->name, at);
    size_t s, e;
    const char *err;
    if (!lex_raw_value(&p->lx, &s, &e, &err)) return perr(p, p->lx.pos, "%s", err);
    if (e == s) return perr(p, s, "expected a value for attribute '%s'", name);
    at->u.s = tr_arena_strndup(p->m->arena, p->src->text + s, e - s);
    return advance(p);
  }
  tr_attr *at = tr_instr_add_attr(p->m, in, k, kind, name);
  if (p->anames_for == in) tr_strmap_put(&p->anames, at->name, at);
  if (!advance(p)) return false;
  return parse_typed_attr(p, at, off);
}

/* ---- instructions ---- */
static bool add_name(parser *p, tr_instr *in, size_t off) {
  if (tr_strmap_get(&p->names, in->name))
    return perr(p, off, "duplicate instruction name '%s' in computation '%s'", in->name, p->comp->name);
  tr_strmap_put(&p->names, in->name, in);
  return true;
}

/* %t#1#0: get-tuple-element instructions made on first use and reused. */
static tr_instr *compact_gte(parser *p, tr_instr *t, int64_t idx, size_t off) {
  if (t->shape->dtype != TR_DT_TUPLE || idx < 0 || idx >= t->shape->nelems) {
    tr_buf b = {0};
    tr_shape_print(&b, t->shape, false);
    perr(p, off, "'%s#%lld': not a tuple element ('%s' has shape %s)", t->name, (long long)idx,
         t->name, tr_buf_str(&b));
    tr_buf_free(&b);
    return NULL;
  }
  char nm[512];
  snprintf(nm, sizeof nm, "%s_%lld", t->name, (long long)idx);
  tr_instr *g = tr_strmap_get(&p->names, nm);
  if (g && g->op == TR_OP_GET_TUPLE_ELEMENT && g->operands[0] == t) return g;
  for (int k = 2; g; k++) {
    snprintf(nm, sizeof nm, "%s_%lld.%d", t->name, (long long)idx, k);
    g = tr_strmap_get(&p->names, nm);
    if (g && g->op == TR_OP_GET_TUPLE_ELEMENT && g->operands[0] == t) return g;
  }
  g = tr_instr_new(p->m, TR_OP_GET_TUPLE_ELEMENT, nm, t->shape->elems[idx]);
  tr_comp_append(p->comp, g);
  tr_instr_set_operands(g, &t, 1);
  tr_attr *at = tr_instr_add_attr(p->m, g, TR_ATTR_INDEX, TR_AK_INT, NULL);
  at->u.i = idx;
  linecol(p, off, &g->line, &g->col);
  tr_strmap_put(&p->names, g->name, g);
  return g;
}

static tr_instr *parse_rhs(parser *p, tr_shape *shape, const char *name, size_t name_off,
                          bool nested);

static bool parse_operands(parser *p, tr_instr *in, tr_instr ***ops, int *nops) {
  *ops = NULL;
  *nops = 0;
  int cap = 8, n = 0;
  tr_instr **v = tr_arena_alloc(p->m->arena, sizeof(tr_instr *) * (size_t)cap);
  while (p->tok.kind != TK_RPAREN) {
    tr_shape *os = NULL;
    size_t off = p->tok.off;
    if (starts_shape(p)) {
      if (!(os = parse_shape(p))) return false;
      in->operand_shapes = true;
    }
    tr_instr *x;
    if (p->tok.kind == TK_IDENT && peek_char(p) == '(') {
      /* Nested anonymous instruction: add(f32[4] multiply(a, b), c). */
      char nm[256];
      int k = 0;
      do snprintf(nm, sizeof nm, "%.*s.anon%s%.0d", (int)p->tok.wlen, p->src->text + p->tok.woff,
                   k ? "." : "", k);
      while (tr_strmap_get(&p->names, nm) && ++k);
      if (++p->depth > MAX_DEPTH) return perr(p, p->tok.off, "instructions nested too deeply");
      if (!(x = parse_rhs(p, os, tr_arena_strdup(p->m->arena, nm), p->tok.off, true))) return false;
      p->depth--;
      os = NULL;
    } else {
      off = p->tok.off;
      if (!(x = lookup_instr(p))) return false;
      while (p->tok.kind == TK_HASH) {
        size_t hoff = p->tok.off;
        int64_t idx;
        if (!advance(p) || !parse_int(p, &idx)) return false;
        if (!(x = compact_gte(p, x, idx, hoff))) return false;
      }
    }
    if (os && !tr_shape_equal(os, x->shape)) {
      tr_buf b1 = {0}, b2 = {0};
      tr_shape_print(&b1, os, false);
      tr_shape_print(&b2, x->shape, false);
      perr(p, off, "operand written as %s but '%s' has shape %s", tr_buf_str(&b1), x->name, tr_buf_str(&b2));
      tr_buf_free(&b1);
      tr_buf_free(&b2);
      return false;
    }
    if (n == cap) {
      tr_instr **nv = tr_arena_alloc(p->m->arena, sizeof(tr_instr *) * (size_t)cap * 2);
      memcpy(nv, v, sizeof(tr_instr *) * (size_t)n);
      v = nv;
      cap *= 2;
    }
    v[n++] = x;
    if (p->tok.kind == TK_COMMA) {
      if (!advance(p)) return false;
    } else if (p->tok.kind != TK_RPAREN) {
      return expected(p, "',' or ')' after an operand");
    }
  }
  *ops = v;
  *nops = n;
  return true;
}

/* opcode(operands), attrs... for an instruction whose name and optional
 * shape have been read. Nested (operand) instructions take no attributes:
 * a comma after them belongs to the enclosing operand list. */
static tr_instr *parse_rhs(parser *p, tr_shape *shape, const char *name, size_t name_off,
                           bool nested) {
  if (p->tok.kind != TK_IDENT) {
    expected(p, "an opcode");
    return NULL;
  }
  size_t op_off = p->tok.off;
  tr_op op;
  const char *w = p->src->text + p->tok.woff;
  size_t wl = p->tok.wlen;
  if (!tr_op_lookup(w, wl, &op)) {
    /* Async sugar: <op>-start / -update / -done around any opcode. */
    static const char *const sfx[] = {"-start", "-update", "-done"};
    bool ok = false;
    for (int i = 0; i < 3 && !ok; i++) {
      size_t sl = strlen(sfx[i]);
      tr_op inner;
      if (wl > sl && memcmp(w + wl - sl, sfx[i], sl) == 0 && tr_op_lookup(w, wl - sl, &inner)) ok = true;
    }
    if (!ok) {
      perr(p, op_off, "unknown opcode '%.*s'", (int)wl, w);
      return NULL;
    }
    op = TR_OP_ASYNC_SUGAR;
  }
  tr_instr *in = tr_instr_new(p->m, op, name, shape);
  in->opname = tok_word(p);
  linecol(p, name_off, &in->line, &in->col);
  if (!advance(p) || !expect(p, TK_LPAREN, "'(' after the opcode")) return NULL;
  if (op == TR_OP_PARAMETER) {
    if (!shape) {
      perr(p, op_off, "a parameter needs its shape written");
      return NULL;
    }
    if (p->tok.kind != TK_INT || p->tok.neg) {
      expected(p, "the parameter number");
      return NULL;
    }
    if (!parse_int(p, &in->param_index)) return NULL;
  } else if (op == TR_OP_CONSTANT) {
    if (!shape) {
      perr(p, op_off, "a constant needs its shape written");
      return NULL;
    }
    if (!(in->literal = parse_literal(p, shape))) return NULL;
  }
  if (op != TR_OP_PARAMETER && op != TR_OP_CONSTANT) {
    tr_instr **ops;
    int nops;
    /* Operands first go into the computation: compact GTEs and nested
     * instructions they create must come before this instruction. */
    if (!parse_operands(p, in, &ops, &nops)) return NULL;
    tr_comp_append(p->comp, in);
    tr_instr_set_operands(in, ops, nops);
  } else {
    tr_comp_append(p->comp, in);
  }
  if (!expect(p, TK_RPAREN, "')' after the operands")) return NULL;
  if (!add_name(p, in, name_off)) return NULL;
  while (!nested && p->tok.kind == TK_COMMA) {
    if (!advance(p) || !parse_attr(p, in)) return NULL;
  }
  if (op == TR_OP_CONSTANT && in->literal->elided && p->opts->fill_elided)
    fill_elided(p->m->arena, in->literal, tr_hash_str(in->name));
  if (!in->shape) {
    tr_buf why = {0};
    in->shape = tr_infer_shape(p->m->arena, in, &why);
    if (!in->shape) {
      perr(p, op_off, "cannot infer the shape of this %s (%s); write the result shape", in->opname,
           why.n ? tr_buf_str(&why) : "no rule");
      tr_buf_free(&why);
      return NULL;
    }
    tr_buf_free(&why);
  }
  return in;
}

/* Bare words XLA's lexer turns into other tokens, so never bare names. */
static bool reserved_word(parser *p) {
  static const char *const kw[] = {"true", "false", "inf", "HloModule", "ENTRY", "ROOT"};
  if (tok_is_dtype(p, NULL)) return true;
  for (int i = 0; i < TR_NELEMS(kw); i++)
    if (is_word(p, kw[i])) return true;
  return false;
}

static bool parse_instruction(parser *p, tr_comp *c) {
  bool root = false;
  if (is_word(p, "ROOT")) {
    root = true;
    if (!advance(p)) return false;
  }
  if (p->tok.kind == TK_ATTR)
    return perr(p, p->tok.off, "expected ' = ' after the instruction name (a name glued to '=' reads as an attribute)");
  if ((p->tok.kind != TK_NAME || p->tok.colon) && p->tok.kind != TK_IDENT)
    return expected(p, "an instruction name");
  if (p->tok.kind == TK_IDENT && reserved_word(p))
    return expected(p, "an instruction name (type names and keywords are reserved; write %name)");
  size_t name_off = p->tok.off;
  char *name = tok_word(p);
  if (!advance(p)) return false;
  if (!expect(p, TK_EQ, "'=' after the instruction name")) return false;
  tr_shape *shape = NULL;
  if (starts_shape(p)) {
    if (!(shape = parse_shape(p))) return false;
  }
  tr_instr *in = parse_rhs(p, shape, name, name_off, false);
  if (!in) return false;
  if (root) {
    if (c->root) return perr(p, name_off, "computation '%s' has two ROOT instructions", c->name);
    c->root = in;
  }
  return true;
}

static bool parse_computation(parser *p) {
  bool entry = false;
  size_t start = p->tok.off;
  if (is_word(p, "ENTRY")) {
    entry = true;
    if (!advance(p)) return false;
  }
  if ((p->tok.kind != TK_NAME || p->tok.colon) && p->tok.kind != TK_IDENT)
    return expected(p, "a computation name");
  size_t name_off = p->tok.off;
  char *name = tok_word(p);
  if (tr_strmap_get(&p->comps, name)) return perr(p, name_off, "duplicate computation name '%s'", name);
  if (!advance(p)) return false;
  tr_shape *sig = NULL;
  if (p->tok.kind == TK_LPAREN) {
    if (!advance(p)) return false;
    while (p->tok.kind != TK_RPAREN) {
      if (p->tok.kind != TK_NAME || !p->tok.colon)
        return expected(p, "a parameter such as 'x: f32[4]'");
      if (!advance(p) || !parse_shape(p)) return false;
      if (p->tok.kind == TK_COMMA) {
        if (!advance(p)) return false;
      } else if (p->tok.kind != TK_RPAREN) {
        return expected(p, "',' or ')' in the parameter list");
      }
    }
    if (!advance(p) || !expect(p, TK_ARROW, "'->' and the result shape")) return false;
    if (!(sig = parse_shape(p))) return false;
  }
  size_t lbrace = p->tok.off;
  if (!expect(p, TK_LBRACE, "'{' to start the computation body")) return false;
  tr_comp *c = tr_comp_new(p->m, name);
  linecol(p, name_off, &c->line, &c->col);
  c->is_entry = entry;
  p->comp = c;
  tr_strmap_clear(&p->names);
  if (!parse_body(p, c, lbrace)) return false;
  if (p->tok.kind == TK_COMMA && peek_kind(p) == TK_ATTR) {
    if (!advance(p)) return false;
    if (p->tok.wlen != 16 || memcmp(p->src->text + p->tok.woff, "execution_thread", 16) != 0)
      return expected(p, "execution_thread=\"...\"");
    if (!advance(p)) return false;
    if (p->tok.kind != TK_STRING) return expected(p, "a string");
    c->exec_thread = tr_arena_strdup(p->m->arena, p->tok.str);
    if (!advance(p)) return false;
  }
  if (sig && !tr_shape_equal(sig, c->root->shape)) {
    tr_buf b1 = {0}, b2 = {0};
    tr_shape_print(&b1, sig, false);
    tr_shape_print(&b2, c->root->shape, false);
    perr(p, name_off, "computation '%s' is declared to return %s but its root has shape %s", name,
         tr_buf_str(&b1), tr_buf_str(&b2));
    tr_buf_free(&b1);
    tr_buf_free(&b2);
    return false;
  }
  if (!bind_params(p, c, start)) return false;
  tr_strmap_put(&p->comps, c->name, c);
  return true;
}

/* Parameters by index; gaps are left NULL for the verifier to report. */
static bool bind_params(parser *p, tr_comp *c, size_t start) {
  const char *name = c->name;
  int64_t maxp = -1;
  for (int i = 0; i < c->ninstrs; i++)
    if (c->instrs[i]->op == TR_OP_PARAMETER && c->instrs[i]->param_index > maxp)
      maxp = c->instrs[i]->param_index;
  if (maxp >= c->ninstrs) {
    for (int i = 0; i < c->ninstrs; i++)
      if (c->instrs[i]->op == TR_OP_PARAMETER && c->instrs[i]->param_index == maxp)
        return perr(p, start, "parameter number %lld in '%s' leaves gaps (it has %d instructions)",
                    (long long)maxp, name, c->ninstrs);
  }
  c->nparams = (int)(maxp + 1);
  c->params = tr_arena_alloc(p->m->arena, sizeof(tr_instr *) * (size_t)(c->nparams + 1));
  for (int i = 0; i < c->ninstrs; i++) {
    tr_instr *in = c->instrs[i];
    if (in->op != TR_OP_PARAMETER) continue;
    if (c->params[in->param_index]) {
      tr_diag_errorf(p->d, "%s:%d:%d: error: parameter number %lld appears twice in computation '%s'",
                     p->src->file, in->line, in->col, (long long)in->param_index, name);
      p->failed = true;
      return false;
    }
    c->params[in->param_index] = in;
  }
  return true;
}

/* FileNames / FunctionNames / FileLocations / StackFrames tables, kept
 * verbatim. */
static bool parse_frames(parser *p) {
  size_t start = p->tok.off, end = start;
  for (;;) {
    if (is_word(p, "FileNames") || is_word(p, "FunctionNames") || is_word(p, "FileLocations") ||
        is_word(p, "StackFrames")) {
      end = p->tok.off + p->tok.len;
      if (!advance(p)) return false;
      continue;
    }
    if (p->tok.kind != TK_INT) break;
    if (!advance(p)) return false;
    if (p->tok.kind == TK_STRING) {
      end = p->tok.off + p->tok.len;
      if (!advance(p)) return false;
    } else if (p->tok.kind == TK_LBRACE) {
      size_t s, e;
      const char *err;
      p->lx.pos = p->tok.off;
      if (!lex_raw_value(&p->lx, &s, &e, &err)) return perr(p, p->lx.pos, "%s", err);
      end = e;
      if (!advance(p)) return false;
    } else {
      return expected(p, "a string or {...} in a stack-frame table");
    }
  }
  if (end > start) p->m->frames = tr_arena_strndup(p->m->arena, p->src->text + start, end - start);
  return true;
}

static bool parse_module(parser *p) {
  if (!advance(p)) return false;
  bool header = is_word(p, "HloModule");
  if (header) {
    if (!advance(p)) return false;
    /* 'HloModule name:' (a trailing colon) appears in old files; XLA's
     * lexer reads it as a name too. */
    if (p->tok.kind != TK_IDENT && p->tok.kind != TK_NAME) return expected(p, "the module name");
    p->m->name = tok_word(p);
    if (!advance(p)) return false;
    tr_header_attr ha[64];
    int n = 0;
    while (p->tok.kind == TK_COMMA) {
      if (!advance(p)) return false;
      if (p->tok.kind != TK_ATTR) return expected(p, "a module attribute such as is_scheduled=true");
      if (n == TR_NELEMS(ha)) return perr(p, p->tok.off, "too many module attributes");
      ha[n].name = tok_word(p);
      for (int i = 0; i < n; i++)
        if (strcmp(ha[i].name, ha[n].name) == 0)
          return perr(p, p->tok.off, "duplicate module attribute '%s'", ha[n].name);
      size_t s, e;
      const char *err;
      if (!lex_raw_value(&p->lx, &s, &e, &err)) return perr(p, p->lx.pos, "%s", err);
      if (e == s) return perr(p, s, "expected a value for module attribute '%s'", ha[n].name);
      ha[n].text = tr_arena_strndup(p->m->arena, p->src->text + s, e - s);
      n++;
      if (!advance(p)) return false;
    }
    p->m->nhattrs = n;
    p->m->hattrs = tr_arena_memdup(p->m->arena, ha, sizeof(tr_header_attr) * (size_t)(n ? n : 1));
    if (!parse_frames(p)) return false;
  }
  while (p->tok.kind != TK_EOF) {
    if (!parse_computation(p)) return false;
  }
  tr_module *m = p->m;
  if (m->ncomps == 0)
    return perr(p, p->tok.off, header ? "expected a computation" : "expected 'HloModule' or a computation");
  for (int i = 0; i < m->ncomps; i++) {
    if (!m->comps[i]->is_entry) continue;
    if (m->entry) {
      tr_comp *c = m->comps[i];
      tr_diag_errorf(p->d, "%s:%d:%d: error: second ENTRY computation '%s'", p->src->file, c->line,
                     c->col, c->name);
      p->failed = true;
      return false;
    }
    m->entry = m->comps[i];
  }
  if (!m->entry) {
    m->entry = m->comps[m->ncomps - 1];
    m->entry->is_entry = true;
  }
  if (!header) {
    size_t n = strlen(m->entry->name) + 8;
    char *nm = tr_arena_alloc(m->arena, n);
    snprintf(nm, n, "module_%s", m->entry->name);
    m->name = nm;
  }
  return true;
}

/* Parses the module with every allocation of it, its name maps and the
 * lexer set to jump back here when memory runs out (tr_arena_catch): the
 * parser needs no NULL checks, and running out is an error at the token
 * being read, never an abort. *oom tells. p is not changed after setjmp
 * (only what it points to), so it is still valid after the jump. */
static bool parse_caught(parser *p, bool *oom) {
  jmp_buf jb;
  if (setjmp(jb)) {
    *oom = true;
    return false;
  }
  tr_arena *a = p->m->arena;
  tr_arena_catch(a, &jb);
  p->lx.fail = p->names.fail = p->comps.fail = p->anames.fail = a;
  p->m->file = tr_arena_strdup(a, p->src->file);
  /* Names and strings are C strings: a NUL byte cannot be kept. */
  const char *nul = memchr(p->src->text, 0, p->src->len);
  bool ok = nul ? perr(p, (size_t)(nul - p->src->text), "NUL byte in text") : parse_module(p);
  tr_arena_catch(a, NULL);
  p->lx.fail = NULL;
  return ok;
}

tr_module *tr_parse(const char *file, const char *text, size_t len, const tr_parse_opts *opts,
                    tr_diag *d) {
  static const tr_parse_opts defaults = {false};
  tr_src src = {file ? file : "<text>", text, len};
  parser p;
  memset(&p, 0, sizeof p);
  p.src = &src;
  p.d = d;
  p.opts = opts ? opts : &defaults;
  p.lc_line = p.lc_col = 1;
  lex_init(&p.lx, &src);
  p.m = tr_module_new("module");
  if (p.opts->arena_limit) tr_arena_set_limit(p.m->arena, p.opts->arena_limit);
  bool oom = false;
  bool ok = parse_caught(&p, &oom);
  lex_free(&p.lx);
  for (struct saved_names *s = p.saved; s; s = s->up) tr_strmap_free(&s->names);
  tr_strmap_free(&p.names);
  tr_strmap_free(&p.anames);
  tr_strmap_free(&p.comps);
  if (!ok || p.failed) {
    size_t used = tr_arena_used(p.m->arena);
    tr_module_free(p.m); /* first: the message needs a little memory */
    if (oom)
      tr_diag_at(d, &src, p.tok.off < len ? p.tok.off : len,
                 "out of memory: the module built so far holds %zu bytes; the text has %zu", used, len);
    return NULL;
  }
  return p.m;
}

tr_module *tr_parse_file(const char *path, const tr_parse_opts *opts, tr_diag *d) {
  char *text;
  size_t len;
  if (tr_read_file(path, &text, &len, d) != TR_OK) return NULL;
  tr_module *m = tr_parse(path, text, len, opts, d);
  tr_free(text);
  return m;
}
