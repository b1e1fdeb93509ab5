/* lex.h - tokens of XLA's HLO text format (private to the parser). The
 * lexer follows XLA's: whitespace and comments are insignificant, an
 * identifier glued to ':' is a parameter name and one glued to '=' an
 * attribute name, and numbers, DxD sizes, padding specs and dim_labels are
 * told apart by their spelling. */
#ifndef TR_LEX_H
#define TR_LEX_H

#include "../base/base.h"

typedef enum {
  TK_EOF, TK_ERROR,
  TK_NAME,      /* %name, or name: (colon flag set) */
  TK_IDENT,     /* bare word: opcodes, keywords, bare names, types */
  TK_ATTR,      /* word glued to '=' (the '=' is consumed) */
  TK_INT,       /* integer; magnitude in u, sign in neg */
  TK_FLOAT,     /* decimal, hex float, -inf, nan, nan(0x..) */
  TK_STRING,    /* "..." or '...', unescaped text in str */
  TK_DIMLABELS, /* b01f_01io->b01f */
  TK_DXD,       /* 3x3 */
  TK_PAD,       /* 0_0x1_2_1 */
  TK_EQ, TK_COMMA, TK_COLON, TK_STAR, TK_QMARK, TK_HASH, TK_PLUS, TK_TILDE,
  TK_LBRACK, TK_RBRACK, TK_LBRACE, TK_RBRACE, TK_LPAREN, TK_RPAREN,
  TK_ARROW, TK_LEQ, TK_ELLIPSIS
} tk_kind;

typedef struct {
  tk_kind kind;   /* what it is */
  size_t off;     /* byte offset of its first character */
  size_t len;     /* bytes it spans */
  size_t wlen;    /* for NAME/ATTR/IDENT: length of the word itself */
  size_t woff;    /* for NAME: offset of the word (after '%') */
  bool colon;     /* NAME written as 'word:' */
  bool neg;       /* INT/FLOAT: leading '-' */
  uint64_t u;     /* INT magnitude; FLOAT NaN payload */
  bool payload;   /* FLOAT: nan(0x..) payload given */
  double f;       /* FLOAT value */
  char *str;      /* STRING contents (malloc'd, owned by the lexer) */
  const char *err;/* TK_ERROR: what went wrong */
} token;

typedef struct {
  const tr_src *src; /* text being read */
  size_t pos;        /* next unread byte */
  char *strbuf;      /* storage of the last string token */
  char *scratch;     /* where the next string token is built */
  size_t strcap, scratchcap; /* their sizes */
  tr_arena *fail;    /* allocations fail as this arena's do (tr_arena_catch);
                        NULL: abort */
} lexer;

void lex_init(lexer *lx, const tr_src *src);
void lex_free(lexer *lx);
/* Reads the next token. Errors become TK_ERROR tokens with a reason. */
token lex_next(lexer *lx);
/* Skips whitespace and comments; returns false on an unterminated
 * comment (pos is left at its start). */
bool lex_skip_space(lexer *lx);
/* Scans a verbatim attribute value starting at pos: up to a ',' or a line
 * end at bracket depth 0, or an unbalanced closer. Strings and comments are
 * respected. Returns false (with *err) when brackets or strings do not
 * close. */
bool lex_raw_value(lexer *lx, size_t *start, size_t *end, const char **err);
bool lex_is_dimlabels(const char *s, size_t n, size_t *len);

#endif
