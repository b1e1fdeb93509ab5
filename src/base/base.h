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

/* malloc/realloc that never return NULL (callers bound sizes taken from
 * input before allocating). On exhaustion inside a heap frame (below) they
 * unwind the frame; outside any frame they abort. Free their blocks with
 * tr_free. */
void *tr_xmalloc(size_t n);
void *tr_xcalloc(size_t n, size_t m);
void *tr_xrealloc(void *p, size_t n);
char *tr_xstrdup(const char *s);
/* malloc/calloc that return NULL on exhaustion (a big size that comes from
 * the input, checked by the caller), recorded in the frame like tr_x*. */
void *tr_try_malloc(size_t n);
void *tr_try_calloc(size_t n, size_t m);
/* tr_free(p) for any heap block (NULL is fine); a block a frame holds leaves
 * it. Every block that tr_x* or tr_try_* made must be freed through it. */
void tr_free(void *p);

/* ---- heap frames: out of memory in a whole operation ----
 * Lua's way for a call tree whose leaves allocate (evaluator kernels, the
 * compiler's passes, tr_buf growth) and have no context to report through:
 * tr_heap_run(fn, ctx, &bytes) runs fn(ctx) in a frame. Each tr_x* and
 * tr_try_* allocation this thread makes in it (and each arena it creates)
 * is recorded; when one fails, every block the frame still holds is freed
 * and tr_heap_run returns false with the failed request's size in *bytes,
 * so the owner reports a verdict and goes on, leaking nothing. Blocks that
 * are still live when fn returns belong to the caller again (an enclosing
 * frame, if any). fn must publish results only through ctx, and the
 * caller must not use pointers in ctx after a failure. The frame pointer is
 * thread-local (the one thing that is): the leaves have no context, and
 * each worker thread of a parallel kernel needs its own frame
 * (src/eval/par.c). Frames nest. */
bool tr_heap_run(void (*fn)(void *), void *ctx, size_t *bytes);
/* Whether this thread is inside a frame. */
bool tr_heap_active(void);
/* Out of memory for a request of n bytes made some other way (a pool, a
 * worker thread): unwinds the innermost frame, or aborts outside one. */
_Noreturn void tr_heap_raise(size_t n);
/* p (a recorded block) now belongs to something outside every frame (a
 * diagnostic of the caller's): a later unwind leaves it alone. */
void tr_heap_keep(void *p);
/* For tests (TRENCH_HEAP_FAIL): the nth allocation this thread makes
 * inside frames from now on fails, as if malloc returned NULL; 0: none. */
void tr_heap_fail_at(uint64_t nth);

/* ---- cJSON's allocator ----
 * cJSON has one process-wide pair of hooks; trench installs these once,
 * at startup (tr_json_hooks: main, and any library entry that builds
 * JSON; later calls do nothing). What they do depends only on the calling
 * thread's heap frame, never on a setting: inside a frame a node is a
 * recorded block (an unwind frees a tree half built, and a failed
 * allocation unwinds, so the tree never silently lacks a member); outside
 * one it is plain malloc, and a failure is NULL, which cJSON passes up
 * (cJSON_Create*, cJSON_Add*ToObject, cJSON_Print and cJSON_Parse return
 * NULL): every caller outside a frame checks what it gets. */
void *tr_json_malloc(size_t n);
void tr_json_hooks(void);
/* cJSON_Print (pretty) or cJSON_PrintUnformatted of item, or NULL when it
 * cannot be whole: the print ran out of memory, or a JSON allocation
 * outside any frame failed on this thread since the last tr_json_print
 * (a tree built then may lack a member). The one place a tree becomes
 * text, so one check there covers every cJSON_Add* before it. Free the
 * text with tr_free. */
struct cJSON;
char *tr_json_print(const struct cJSON *item, bool pretty);

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
/* The verdict of a heap frame that ran out of memory (tr_heap_run):
 * "<where>: error: out of memory <what> (N bytes)", one wording for every
 * owner (where: file or file:line:col; what: "evaluating %dot.3"). */
void tr_heap_diag(tr_diag *d, const char *where, const char *what, size_t bytes);
/* The same verdict into buf (snprintf's contract; allocates nothing: for
 * an owner that reports right after its frame unwound). */
int tr_heap_msg(char *buf, size_t n, const char *where, const char *what, size_t bytes);
/* Whether msg (a diagnostic, a verdict's message, a decline) holds such a
 * verdict: an owner that judges by another's result (triage reading a
 * check) must not read "ran out of memory" as "passed". */
bool tr_heap_diag_is(const char *msg);
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
