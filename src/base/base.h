/* base.h - status codes, invariant checks, arenas, growable strings and
 * located diagnostics: the small vocabulary every other layer speaks. */
#ifndef TR_BASE_H
#define TR_BASE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
  TR_OK = 0,
  TR_ERR_SYNTAX,      /* malformed text (HLO, .npy header, ...) */
  TR_ERR_INVALID,     /* well-formed but semantically wrong (verifier) */
  TR_ERR_IO,          /* file could not be read or written */
  TR_ERR_UNSUPPORTED, /* valid input that trench does not handle */
  TR_ERR_USAGE        /* bad command-line use */
} tr_status;

const char *tr_status_name(tr_status s);

/* Internal invariants only; bad input must never reach these. */
#define TR_ASSERT(c) \
  ((c) ? (void)0 : tr_assert_fail(#c, __FILE__, __LINE__))
_Noreturn void tr_assert_fail(const char *what, const char *file, int line);

#define TR_NELEMS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* malloc/realloc that abort on exhaustion (not on bad input: callers bound
 * sizes taken from input before allocating). */
void *tr_xmalloc(size_t n);
void *tr_xcalloc(size_t n, size_t m);
void *tr_xrealloc(void *p, size_t n);
char *tr_xstrdup(const char *s);

/* ---- arena: bump allocation, freed all at once ---- */
typedef struct tr_arena tr_arena;
tr_arena *tr_arena_new(void);
void tr_arena_free(tr_arena *a);
void *tr_arena_alloc(tr_arena *a, size_t n);  /* zeroed, 16-byte aligned */
char *tr_arena_strndup(tr_arena *a, const char *s, size_t n);
char *tr_arena_strdup(tr_arena *a, const char *s);
void *tr_arena_memdup(tr_arena *a, const void *p, size_t n);
size_t tr_arena_used(const tr_arena *a);
/* Out of memory while a structure is built (Lua's way): after
 * tr_arena_catch(a, jb), an allocation of a that fails, or one of
 * tr_arena_heap(a, ...), is a longjmp(*jb, 1) instead of an abort, so the
 * code that builds stays free of NULL checks. The owner that set jb (the
 * parser, the verifier) then frees what it built and reports a located
 * "out of memory" error. NULL restores the abort. */
void tr_arena_catch(tr_arena *a, jmp_buf *jb);
/* realloc(p, n) for heap memory the caller frees, failing as a's own
 * allocations do (a may be NULL: then it aborts on failure). */
void *tr_arena_heap(tr_arena *a, void *p, size_t n);
/* For tests: make a's allocations fail (as if malloc returned NULL) once
 * it has handed out more than limit bytes; 0: no limit. */
void tr_arena_set_limit(tr_arena *a, size_t limit);

/* ---- growable string ---- */
typedef struct {
  char *p;    /* NUL-terminated contents (NULL while empty) */
  size_t n;   /* length without the NUL */
  size_t cap; /* allocated bytes */
} tr_buf;

void tr_buf_putc(tr_buf *b, char c);
void tr_buf_puts(tr_buf *b, const char *s);
void tr_buf_putn(tr_buf *b, const char *s, size_t n);
void tr_buf_printf(tr_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void tr_buf_vprintf(tr_buf *b, const char *fmt, va_list ap);
const char *tr_buf_str(const tr_buf *b); /* "" when empty */
void tr_buf_free(tr_buf *b);

/* ---- diagnostics ---- */
/* A source text being read: diagnostics turn byte offsets into
 * file:line:col plus the offending line and a caret. */
typedef struct {
  const char *file; /* name shown in messages */
  const char *text; /* whole contents */
  size_t len;       /* bytes in text */
} tr_src;

typedef struct {
  char **msgs; /* formatted messages, oldest first */
  int nmsgs;   /* number of messages */
  int cap;     /* allocated slots */
} tr_diag;

void tr_diag_errorf(tr_diag *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "file:line:col: error: msg" + source line + caret. */
void tr_diag_at(tr_diag *d, const tr_src *src, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void tr_diag_vat(tr_diag *d, const tr_src *src, size_t off, const char *fmt,
                 va_list ap);
void tr_src_linecol(const tr_src *src, size_t off, int *line, int *col);
void tr_diag_print(const tr_diag *d, FILE *f);
const char *tr_diag_first(const tr_diag *d); /* NULL when none */
void tr_diag_clear(tr_diag *d);

/* Reads a whole file (NUL-terminated). Returns TR_ERR_IO with a message.
 * Only regular files are read (a device such as /dev/zero, a FIFO or a
 * folder is refused before any byte is read, and opening never blocks), and
 * at most max bytes: a larger file is refused with a message naming the
 * limit. tr_read_file uses TR_READ_MAX. */
#define TR_READ_MAX ((size_t)1 << 30) /* 1 GiB */
tr_status tr_read_file(const char *path, char **out, size_t *len, tr_diag *d);
tr_status tr_read_file_max(const char *path, size_t max, char **out, size_t *len, tr_diag *d);
/* Reads an open stream (stdin) to its end, refusing it once it passes max
 * bytes (an endless pipe ends there). name is shown in messages. */
tr_status tr_read_stream(FILE *f, const char *name, size_t max, char **out, size_t *len,
                         tr_diag *d);

/* ---- string hash map ----
 * String keys to pointers, open addressing. Keys are borrowed: each must
 * stay alive and unchanged while the map holds it. A zeroed tr_strmap is
 * empty. */
typedef struct {
  const char **keys; /* NULL = empty slot */
  void **vals;
  size_t cap, n;     /* slots (a power of two) and entries */
  tr_arena *fail;    /* growth fails as this arena's allocations do
                        (tr_arena_catch); NULL: abort. Kept by free */
} tr_strmap;

/* FNV-1a of s: the map's hash, and a stable seed from a name. */
uint64_t tr_hash_str(const char *s);
/* Sets k's value (replacing an earlier one). */
void tr_strmap_put(tr_strmap *t, const char *k, void *v);
/* k's value, or NULL. */
void *tr_strmap_get(const tr_strmap *t, const char *k);
/* Empties the map, keeping its slots. */
void tr_strmap_clear(tr_strmap *t);
void tr_strmap_free(tr_strmap *t);

#endif
