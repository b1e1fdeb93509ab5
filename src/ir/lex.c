/* lex.c - the HLO text lexer. */
#include "lex.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void lex_init(lexer *lx, const tr_src *src) {
  memset(lx, 0, sizeof *lx);
  lx->src = src;
}

void lex_free(lexer *lx) {
  tr_free(lx->strbuf);
  tr_free(lx->scratch);
  lx->strbuf = lx->scratch = NULL;
  lx->strcap = lx->scratchcap = 0;
}

/* Appends c to the string being built in lx->scratch (n bytes so far).
 * The buffer belongs to the lexer, so a failed allocation (a jump to the
 * parser, tr_arena_catch) leaks nothing: lex_free frees it. */
static void scratch_put(lexer *lx, size_t *n, char c) {
  if (*n + 2 > lx->scratchcap) {
    size_t cap = lx->scratchcap ? lx->scratchcap * 2 : 64;
    lx->scratch = tr_arena_heap(lx->fail, lx->scratch, cap);
    lx->scratchcap = cap;
  }
  lx->scratch[(*n)++] = c;
  lx->scratch[*n] = 0;
}

/* strtod of the n bytes at s (a number token: no NUL inside). */
static double text_to_double(lexer *lx, size_t s, size_t n, bool *ok) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) scratch_put(lx, &k, lx->src->text[s + i]);
  char *end;
  errno = 0;
  double f = strtod(lx->scratch, &end);
  *ok = *end == 0 && !(errno == ERANGE && isinf(f));
  return f;
}

static int at(const lexer *lx, size_t i) {
  return i < lx->src->len ? (unsigned char)lx->src->text[i] : -1;
}

/* Whether the text at i starts with w (bounded: the text has no NUL). */
static bool has_prefix(const lexer *lx, size_t i, const char *w) {
  size_t n = strlen(w);
  return i + n <= lx->src->len && memcmp(lx->src->text + i, w, n) == 0;
}

static bool is_word_start(int c) { return c >= 0 && (isalpha(c) || c == '_'); }
static bool is_word(int c) {
  return c >= 0 && (isalnum(c) || c == '_' || c == '.' || c == '-');
}

bool lex_skip_space(lexer *lx) {
  for (;;) {
    int c = at(lx, lx->pos);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      lx->pos++;
    } else if (c == '/' && at(lx, lx->pos + 1) == '*') {
      size_t i = lx->pos + 2;
      while (i < lx->src->len && !(at(lx, i) == '*' && at(lx, i + 1) == '/')) i++;
      if (i >= lx->src->len) return false;
      lx->pos = i + 2;
    } else if (c == '/' && at(lx, lx->pos + 1) == '/') {
      while (lx->pos < lx->src->len && at(lx, lx->pos) != '\n') lx->pos++;
    } else {
      return true;
    }
  }
}

/* [0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,} */
bool lex_is_dimlabels(const char *s, size_t n, size_t *len) {
  size_t i = 0, k;
  for (k = 0; i < n && (isdigit((unsigned char)s[i]) || s[i] == 'b' || s[i] == 'f' || s[i] == '?'); i++) k++;
  if (k < 2 || i >= n || s[i] != '_') return false;
  i++;
  for (k = 0; i < n && (isdigit((unsigned char)s[i]) || s[i] == 'i' || s[i] == 'o' || s[i] == '?'); i++) k++;
  if (k < 2 || i + 1 >= n || s[i] != '-' || s[i + 1] != '>') return false;
  i += 2;
  for (k = 0; i < n && (isdigit((unsigned char)s[i]) || s[i] == 'b' || s[i] == 'f' || s[i] == '?'); i++) k++;
  if (k < 2) return false;
  if (i < n && is_word((unsigned char)s[i])) return false;
  *len = i;
  return true;
}

static size_t digits(const lexer *lx, size_t i) {
  while (at(lx, i) >= 0 && isdigit(at(lx, i))) i++;
  return i;
}

/* Length of a decimal float at i (with optional '-'), 0 if none. */
static size_t match_float(const lexer *lx, size_t i) {
  size_t s = i;
  if (at(lx, i) == '-') i++;
  size_t d0 = i;
  i = digits(lx, i);
  bool intpart = i > d0, frac = false, dot = false;
  if (at(lx, i) == '.') {
    dot = true;
    size_t f0 = ++i;
    i = digits(lx, i);
    frac = i > f0;
  }
  if (!intpart && !frac) return 0;
  if (at(lx, i) == 'e' || at(lx, i) == 'E') {
    size_t j = i + 1;
    if (at(lx, j) == '+' || at(lx, j) == '-') j++;
    size_t e0 = j;
    j = digits(lx, j);
    if (j > e0) return j - s;
  }
  return dot ? i - s : 0;
}

/* N(xN)+ */
static size_t match_dxd(const lexer *lx, size_t i) {
  size_t s = i, j = digits(lx, i);
  if (j == i) return 0;
  int n = 0;
  while (at(lx, j) == 'x') {
    size_t k = digits(lx, j + 1);
    if (k == j + 1) break;
    j = k;
    n++;
  }
  return n ? j - s : 0;
}

/* -?N_-?N(_-?N)? joined by 'x' */
static size_t match_pad(const lexer *lx, size_t i) {
  size_t s = i;
  for (;;) {
    int parts = 0;
    for (;;) {
      size_t j = i;
      if (at(lx, j) == '-') j++;
      size_t k = digits(lx, j);
      if (k == j) return 0;
      i = k;
      parts++;
      if (parts < 3 && at(lx, i) == '_') {
        i++;
        continue;
      }
      break;
    }
    if (parts < 2) return 0;
    if (at(lx, i) == 'x' && (isdigit(at(lx, i + 1)) || at(lx, i + 1) == '-')) {
      i++;
      continue;
    }
    return i - s;
  }
}

static bool parse_hex_payload(lexer *lx, token *t) {
  /* nan(0x...) */
  size_t i = lx->pos;
  if (at(lx, i) != '(' || at(lx, i + 1) != '0' || (at(lx, i + 2) != 'x' && at(lx, i + 2) != 'X'))
    return true;
  i += 3;
  uint64_t v = 0;
  size_t d0 = i;
  while (at(lx, i) >= 0 && isxdigit(at(lx, i))) {
    int c = at(lx, i);
    if (v >> 60) return false;
    v = v * 16 + (uint64_t)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
    i++;
  }
  if (i == d0 || at(lx, i) != ')') return false;
  lx->pos = i + 1;
  t->u = v;
  t->payload = true;
  return true;
}

static token err_tok(size_t off, const char *msg) {
  token t = {0};
  t.kind = TK_ERROR;
  t.off = off;
  t.len = 1;
  t.err = msg;
  return t;
}

static token lex_number(lexer *lx, token t) {
  size_t s = lx->pos;
  size_t n;
  if (at(lx, s) == '-' && at(lx, s + 1) == '>') {
    lx->pos += 2;
    t.kind = TK_ARROW;
    t.len = 2;
    return t;
  }
  if (at(lx, s) == '-' && has_prefix(lx, s, "-inf") && !is_word(at(lx, s + 4))) {
    lx->pos += 4;
    t.kind = TK_FLOAT;
    t.neg = true;
    t.f = -INFINITY;
    t.len = 4;
    return t;
  }
  if (at(lx, s) == '-' && has_prefix(lx, s, "-nan") && !is_word(at(lx, s + 4))) {
    lx->pos += 4;
    t.kind = TK_FLOAT;
    t.neg = true;
    t.f = -NAN;
    if (!parse_hex_payload(lx, &t)) return err_tok(s, "malformed NaN payload, expected nan(0x<hex>)");
    t.len = lx->pos - s;
    return t;
  }
  /* C99 hex floats (0x1.8p3), an extension over XLA. The binary exponent
   * is required: without it "0x1" is XLA's size list (rhs_reversal=0x1). */
  size_t h = s + (at(lx, s) == '-');
  if (at(lx, h) == '0' && (at(lx, h + 1) == 'x' || at(lx, h + 1) == 'X')) {
    size_t i = h + 2, d0 = i;
    while (at(lx, i) >= 0 && isxdigit(at(lx, i))) i++;
    if (at(lx, i) == '.') {
      i++;
      while (at(lx, i) >= 0 && isxdigit(at(lx, i))) i++;
    }
    size_t e = i + 1;
    if (at(lx, e) == '+' || at(lx, e) == '-') e++;
    if (i > d0 && (at(lx, i) == 'p' || at(lx, i) == 'P') && at(lx, e) >= 0 && isdigit(at(lx, e))) {
      e = digits(lx, e);
      bool good;
      t.kind = TK_FLOAT;
      t.f = text_to_double(lx, s, e - s, &good);
      if (!good) return err_tok(s, "malformed or out-of-range hex float");
      t.neg = at(lx, s) == '-';
      t.len = e - s;
      lx->pos = e;
      return t;
    }
  }
  if ((n = match_float(lx, s)) > 0) {
    bool good;
    t.kind = TK_FLOAT;
    t.f = text_to_double(lx, s, n, &good);
    t.neg = at(lx, s) == '-';
    t.len = n;
    lx->pos = s + n;
    return t;
  }
  if (lex_is_dimlabels(lx->src->text + s, lx->src->len - s, &n)) {
    t.kind = TK_DIMLABELS;
    t.len = n;
    lx->pos = s + n;
    return t;
  }
  if ((n = match_dxd(lx, s)) > 0) {
    t.kind = TK_DXD;
    t.len = n;
    lx->pos = s + n;
    return t;
  }
  if ((n = match_pad(lx, s)) > 0) {
    t.kind = TK_PAD;
    t.len = n;
    lx->pos = s + n;
    return t;
  }
  size_t i = s;
  if (at(lx, i) == '-') i++;
  size_t e = digits(lx, i);
  if (e == i) return err_tok(s, "unexpected character '-'");
  uint64_t v = 0;
  for (size_t k = i; k < e; k++) {
    unsigned d = (unsigned)(at(lx, k) - '0');
    if (v > (UINT64_MAX - d) / 10) return err_tok(s, "integer out of range");
    v = v * 10 + d;
  }
  t.neg = i > s;
  if (t.neg && v > (uint64_t)1 << 63) return err_tok(s, "integer out of range");
  t.kind = TK_INT;
  t.u = v;
  t.len = e - s;
  lx->pos = e;
  return t;
}

static token lex_string(lexer *lx, token t) {
  char q = (char)at(lx, lx->pos);
  size_t i = lx->pos + 1;
  size_t n = 0; /* bytes in lx->scratch */
  for (;;) {
    int c = at(lx, i);
    if (c < 0) {
      return err_tok(t.off, "unterminated string");
    }
    if (c == q) break;
    if (c == '\\') {
      int e = at(lx, i + 1);
      i += 2;
      switch (e) {
      case 'n': scratch_put(lx, &n, '\n'); break;
      case 't': scratch_put(lx, &n, '\t'); break;
      case 'r': scratch_put(lx, &n, '\r'); break;
      case '\\': scratch_put(lx, &n, '\\'); break;
      case '"': scratch_put(lx, &n, '"'); break;
      case '\'': scratch_put(lx, &n, '\''); break;
      case 'x': {
        unsigned v = 0;
        int k = 0;
        while (k < 2 && at(lx, i) >= 0 && isxdigit(at(lx, i))) {
          int h = at(lx, i++);
          v = v * 16 + (unsigned)(isdigit(h) ? h - '0' : tolower(h) - 'a' + 10);
          k++;
        }
        if (!k) {
              return err_tok(i - 2, "malformed \\x escape in string");
        }
        scratch_put(lx, &n, (char)v);
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          unsigned v = (unsigned)(e - '0');
          for (int k = 0; k < 2 && at(lx, i) >= '0' && at(lx, i) <= '7'; k++)
            v = v * 8 + (unsigned)(at(lx, i++) - '0');
          scratch_put(lx, &n, (char)v);
        } else if (e < 0) {
              return err_tok(t.off, "unterminated string");
        } else {
          scratch_put(lx, &n, (char)e); /* unknown escape: keep the character */
        }
      }
      continue;
    }
    scratch_put(lx, &n, (char)c);
    i++;
  }
  if (!n) { scratch_put(lx, &n, 0); n = 0; } /* "" needs a buffer too */
  if (memchr(lx->scratch, 0, n)) return err_tok(t.off, "strings may not contain a NUL character");
  /* The new string becomes the token's; the old one's buffer is reused. */
  char *sp = lx->strbuf;
  size_t sc = lx->strcap;
  lx->strbuf = lx->scratch;
  lx->strcap = lx->scratchcap;
  lx->scratch = sp;
  lx->scratchcap = sc;
  t.kind = TK_STRING;
  t.str = lx->strbuf;
  t.len = i + 1 - lx->pos;
  lx->pos = i + 1;
  return t;
}

token lex_next(lexer *lx) {
  token t = {0};
  if (!lex_skip_space(lx)) return err_tok(lx->pos, "unterminated /* comment");
  t.off = lx->pos;
  int c = at(lx, lx->pos);
  if (c < 0) {
    t.kind = TK_EOF;
    return t;
  }
  if (c == 0) return err_tok(lx->pos, "NUL byte in text");
  if (is_word_start(c)) {
    size_t i = lx->pos;
    while (is_word(at(lx, i))) i++;
    size_t dl;
    if (lex_is_dimlabels(lx->src->text + lx->pos, lx->src->len - lx->pos, &dl)) {
      t.kind = TK_DIMLABELS;
      t.len = dl;
      lx->pos += dl;
      return t;
    }
    /* A word may end with '-' only when it is followed by '>' (an arrow). */
    if (at(lx, i - 1) == '-' && at(lx, i) == '>') i--;
    t.woff = lx->pos;
    t.wlen = i - lx->pos;
    if (t.wlen == 3 && has_prefix(lx, lx->pos, "nan")) {
      lx->pos = i;
      t.kind = TK_FLOAT;
      t.f = NAN;
      if (!parse_hex_payload(lx, &t)) return err_tok(t.off, "malformed NaN payload, expected nan(0x<hex>)");
      t.len = lx->pos - t.off;
      return t;
    }
    if (at(lx, i) == ':') {
      t.kind = TK_NAME;
      t.colon = true;
      lx->pos = i + 1;
    } else if (at(lx, i) == '=' && at(lx, i + 1) != '=') {
      t.kind = TK_ATTR;
      lx->pos = i + 1;
    } else {
      t.kind = TK_IDENT;
      lx->pos = i;
    }
    t.len = lx->pos - t.off;
    return t;
  }
  if (c == '%') {
    size_t i = lx->pos + 1;
    if (!is_word_start(at(lx, i))) return err_tok(lx->pos, "expected a name after '%'");
    while (is_word(at(lx, i))) i++;
    if (at(lx, i - 1) == '-' && at(lx, i) == '>') i--;
    t.kind = TK_NAME;
    t.woff = lx->pos + 1;
    t.wlen = i - t.woff;
    t.len = i - lx->pos;
    lx->pos = i;
    return t;
  }
  if (isdigit(c) || c == '-') return lex_number(lx, t);
  if (c == '.' && isdigit(at(lx, lx->pos + 1))) return lex_number(lx, t);
  if (c == '"' || c == '\'') return lex_string(lx, t);
  if (c == '.' && at(lx, lx->pos + 1) == '.' && at(lx, lx->pos + 2) == '.') {
    t.kind = TK_ELLIPSIS;
    t.len = 3;
    lx->pos += 3;
    return t;
  }
  if (c == '<' && at(lx, lx->pos + 1) == '=') {
    t.kind = TK_LEQ;
    t.len = 2;
    lx->pos += 2;
    return t;
  }
  t.len = 1;
  switch (c) {
  case '=': t.kind = TK_EQ; break;
  case ',': t.kind = TK_COMMA; break;
  case ':': t.kind = TK_COLON; break;
  case '*': t.kind = TK_STAR; break;
  case '?': t.kind = TK_QMARK; break;
  case '#': t.kind = TK_HASH; break;
  case '+': t.kind = TK_PLUS; break;
  case '~': t.kind = TK_TILDE; break;
  case '[': t.kind = TK_LBRACK; break;
  case ']': t.kind = TK_RBRACK; break;
  case '{': t.kind = TK_LBRACE; break;
  case '}': t.kind = TK_RBRACE; break;
  case '(': t.kind = TK_LPAREN; break;
  case ')': t.kind = TK_RPAREN; break;
  default: return err_tok(lx->pos, "unexpected character");
  }
  lx->pos++;
  return t;
}

bool lex_raw_value(lexer *lx, size_t *start, size_t *end, const char **err) {
  if (!lex_skip_space(lx)) {
    *err = "unterminated /* comment";
    return false;
  }
  size_t i = lx->pos;
  *start = i;
  char stack[256];
  int depth = 0;
  size_t last = i; /* end of the last non-space byte */
  for (;;) {
    int c = at(lx, i);
    if (c < 0) break;
    if (depth == 0 && (c == ',' || c == '\n' || c == '\r')) break;
    if (c == '"' || c == '\'') {
      size_t j = i + 1;
      while (at(lx, j) >= 0 && at(lx, j) != c) j += at(lx, j) == '\\' ? 2 : 1;
      if (at(lx, j) < 0) {
        lx->pos = i;
        *err = "unterminated string";
        return false;
      }
      i = j + 1;
      last = i;
      continue;
    }
    if (c == '/' && at(lx, i + 1) == '*') {
      size_t j = i + 2;
      while (at(lx, j) >= 0 && !(at(lx, j) == '*' && at(lx, j + 1) == '/')) j++;
      if (at(lx, j) < 0) {
        lx->pos = i;
        *err = "unterminated /* comment";
        return false;
      }
      i = j + 2;
      last = i;
      continue;
    }
    if (c == '{' || c == '(' || c == '[') {
      if (depth == (int)sizeof stack) {
        lx->pos = i;
        *err = "brackets nested too deeply";
        return false;
      }
      stack[depth++] = c == '{' ? '}' : c == '(' ? ')' : ']';
    } else if (c == '}' || c == ')' || c == ']') {
      if (depth == 0) break;
      if (stack[depth - 1] != c) {
        lx->pos = i;
        *err = "mismatched bracket in attribute value";
        return false;
      }
      depth--;
    }
    i++;
    if (c != ' ' && c != '\t') last = i;
  }
  if (depth) {
    lx->pos = *start;
    *err = "unbalanced brackets in attribute value";
    return false;
  }
  *end = last;
  lx->pos = last;
  return true;
}
