/* base.c - arena, string buffer, diagnostics and file reading. */
#include "base.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

const char *tr_status_name(tr_status s) {
  switch (s) {
  case TR_OK: return "ok";
  case TR_ERR_SYNTAX: return "syntax error";
  case TR_ERR_INVALID: return "invalid";
  case TR_ERR_IO: return "i/o error";
  case TR_ERR_UNSUPPORTED: return "unsupported";
  case TR_ERR_USAGE: return "usage error";
  }
  return "?";
}

void tr_assert_fail(const char *what, const char *file, int line) {
  fprintf(stderr, "%s:%d: internal error: assertion '%s' failed\n", file, line,
          what);
  abort();
}

/* ---- heap frames ----
 * Each thread keeps a table of the blocks allocated while it is inside a
 * frame: pointer -> (serial of the frame that made it, kind). A frame
 * unwinding frees the blocks whose serial is its own or newer (inner frames
 * that ended normally handed theirs to it); the table is emptied when the
 * outermost frame ends. Open addressing with linear probing and backward
 * shift deletion, in raw malloc memory (the table is not itself recorded). */
enum { HK_BLOCK = 0, HK_ARENA = 1 };

typedef struct heap_frame {
  jmp_buf jb;
  struct heap_frame *up;
  uint64_t serial; /* blocks with this serial or newer are the frame's */
} heap_frame;

typedef struct {
  heap_frame *top;     /* innermost frame; NULL: none */
  uint64_t serial;     /* last serial handed out */
  void **keys;         /* NULL = empty slot */
  uint64_t *vals;      /* serial << 1 | kind */
  size_t cap, n;
  uint64_t fail_at;    /* tests: allocations left before one fails; 0 off */
  size_t failed;       /* the request that failed (kept here, not in the
                          frame: tr_heap_run's locals are indeterminate
                          after the longjmp if changed since setjmp) */
  bool json_failed;    /* a JSON allocation outside frames failed since
                          the last tr_json_print */
} heap_state;

static _Thread_local heap_state hs;

static size_t heap_slot(const void *p) {
  uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
  return (size_t)(h >> 17) & (hs.cap - 1);
}

static size_t heap_find(const void *p) {
  if (!hs.cap) return SIZE_MAX;
  for (size_t i = heap_slot(p);; i = (i + 1) & (hs.cap - 1)) {
    if (!hs.keys[i]) return SIZE_MAX;
    if (hs.keys[i] == p) return i;
  }
}

static void heap_remove_at(size_t i) {
  size_t m = hs.cap - 1;
  hs.keys[i] = NULL;
  hs.n--;
  for (size_t j = (i + 1) & m; hs.keys[j]; j = (j + 1) & m) {
    size_t h = heap_slot(hs.keys[j]);
    /* Move j back into the hole unless its home lies cyclically in (i, j]. */
    if (i <= j ? (i < h && h <= j) : (i < h || h <= j)) continue;
    hs.keys[i] = hs.keys[j];
    hs.vals[i] = hs.vals[j];
    hs.keys[j] = NULL;
    i = j;
  }
}

static void heap_put(void *p, uint64_t v) {
  size_t i = heap_slot(p);
  while (hs.keys[i] && hs.keys[i] != p) i = (i + 1) & (hs.cap - 1);
  if (!hs.keys[i]) hs.n++;
  hs.keys[i] = p;
  hs.vals[i] = v;
}

static bool heap_grow(void) {
  size_t cap = hs.cap ? hs.cap * 2 : 256;
  void **keys = calloc(cap, sizeof(void *));
  uint64_t *vals = malloc(cap * sizeof(uint64_t));
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return false;
  }
  void **ok = hs.keys;
  uint64_t *ov = hs.vals;
  size_t oc = hs.cap;
  hs.keys = keys;
  hs.vals = vals;
  hs.cap = cap;
  hs.n = 0;
  for (size_t i = 0; i < oc; i++)
    if (ok[i]) heap_put(ok[i], ov[i]);
  free(ok);
  free(ov);
  return true;
}

_Noreturn void tr_heap_raise(size_t n) {
  heap_frame *f = hs.top;
  if (!f) tr_assert_fail("out of memory", __FILE__, __LINE__);
  hs.failed = n;
  longjmp(f->jb, 1);
}

/* Whether the next allocation in a frame is to fail (tests). */
static bool heap_injected(void) {
  return hs.top && hs.fail_at && --hs.fail_at == 0;
}

/* Records p (just allocated, of kind k) in the innermost frame; a table
 * that cannot grow fails the allocation. */
static bool heap_record(void *p, int k) {
  if (!hs.top) return true;
  if ((hs.n + 1) * 2 > hs.cap && !heap_grow()) return false;
  heap_put(p, hs.serial << 1 | (uint64_t)k);
  return true;
}

static void heap_forget(void *p) {
  if (!hs.n) return;
  size_t i = heap_find(p);
  if (i != SIZE_MAX) heap_remove_at(i);
}

bool tr_heap_active(void) { return hs.top != NULL; }

void tr_heap_fail_at(uint64_t nth) { hs.fail_at = nth; }

void tr_heap_keep(void *p) {
  if (p) heap_forget(p);
}

void tr_free(void *p) {
  if (!p) return;
  heap_forget(p);
  free(p);
}

static void *heap_alloc(void *old, size_t n, bool zero, bool must) {
  /* A block the frame holds moves with a realloc: its entry is taken out
   * before and put back under the new pointer after (or the old one when
   * realloc fails); one it does not hold (made outside the frame) stays
   * its owner's. */
  uint64_t v = 0;
  bool held = false;
  if (old) {
    size_t at = heap_find(old);
    if (at != SIZE_MAX) {
      v = hs.vals[at];
      heap_remove_at(at);
      held = true;
    }
  }
  void *p = NULL;
  if (!heap_injected()) {
    if (old) p = realloc(old, n ? n : 1);
    else p = zero ? calloc(n ? n : 1, 1) : malloc(n ? n : 1);
  }
  if (held) heap_put(p ? p : old, v); /* the slot freed above: no growth */
  if (p && !old && !heap_record(p, HK_BLOCK)) {
    free(p);
    p = NULL;
  }
  if (!p && must) tr_heap_raise(n);
  return p;
}

void *tr_xmalloc(size_t n) { return heap_alloc(NULL, n, false, true); }

void *tr_xcalloc(size_t n, size_t m) {
  if (m && n > SIZE_MAX / m) tr_heap_raise(SIZE_MAX);
  return heap_alloc(NULL, n * m, true, true);
}

void *tr_xrealloc(void *p, size_t n) { return heap_alloc(p, n, false, true); }

void *tr_try_malloc(size_t n) { return heap_alloc(NULL, n, false, false); }

void *tr_try_calloc(size_t n, size_t m) {
  if (m && n > SIZE_MAX / m) return NULL;
  return heap_alloc(NULL, n * m, true, false);
}

static void arena_free_chunks(tr_arena *a);

/* Frees every block of the frame with serial s or newer. */
static void heap_unwind(uint64_t s) {
  for (size_t i = 0; i < hs.cap;) {
    void *p = hs.keys[i];
    if (!p || (hs.vals[i] >> 1) < s) {
      i++;
      continue;
    }
    int k = (int)(hs.vals[i] & 1);
    heap_remove_at(i); /* re-examines slot i: an entry may have moved in */
    if (k == HK_ARENA) arena_free_chunks(p);
    free(p);
  }
}

static void heap_leave(heap_frame *f) {
  hs.top = f->up;
  if (!hs.top) {
    free(hs.keys);
    free(hs.vals);
    hs.keys = NULL;
    hs.vals = NULL;
    hs.cap = hs.n = 0;
  }
}

bool tr_heap_run(void (*fn)(void *), void *ctx, size_t *bytes) {
  heap_frame f;
  f.up = hs.top;
  f.serial = ++hs.serial;
  hs.top = &f;
  if (setjmp(f.jb)) {
    heap_unwind(f.serial);
    heap_leave(&f);
    if (bytes) *bytes = hs.failed;
    return false;
  }
  fn(ctx);
  heap_leave(&f);
  return true;
}

/* ---- cJSON's allocator ---- */
void *tr_json_malloc(size_t n) {
  void *p = heap_alloc(NULL, n, false, hs.top != NULL);
  if (!p) hs.json_failed = true;
  return p;
}

char *tr_json_print(const cJSON *item, bool pretty) {
  char *s = item ? (pretty ? cJSON_Print(item) : cJSON_PrintUnformatted(item)) : NULL;
  bool failed = hs.json_failed;
  hs.json_failed = false;
  if (s && failed) {
    tr_free(s);
    s = NULL;
  }
  return s;
}

static void json_hooks_once(void) {
  cJSON_Hooks h = {tr_json_malloc, tr_free};
  cJSON_InitHooks(&h);
}

void tr_json_hooks(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, json_hooks_once);
}

char *tr_xstrdup(const char *s) {
  size_t n = strlen(s);
  char *p = tr_xmalloc(n + 1);
  memcpy(p, s, n + 1);
  return p;
}

/* ---- arena ---- */
typedef struct chunk {
  struct chunk *next; /* previously filled chunk */
  size_t size, used;  /* capacity and bytes handed out */
  _Alignas(16) unsigned char data[];
} chunk;

struct tr_arena {
  chunk *head;  /* chunk being filled */
  size_t total; /* bytes handed out, for statistics */
  jmp_buf *oom; /* where a failed allocation jumps; NULL: abort */
  size_t limit; /* fail past this many bytes (tests); 0: none */
};

/* An arena made inside a frame is recorded as one: an unwind frees its
 * chunks with it. */
tr_arena *tr_arena_new(void) {
  tr_arena *a = heap_injected() ? NULL : calloc(1, sizeof(tr_arena));
  if (a && !heap_record(a, HK_ARENA)) {
    free(a);
    a = NULL;
  }
  if (!a) tr_heap_raise(sizeof(tr_arena));
  return a;
}

static void arena_free_chunks(tr_arena *a) {
  for (chunk *c = a->head, *n; c; c = n) {
    n = c->next;
    free(c);
  }
  a->head = NULL;
}

void tr_arena_free(tr_arena *a) {
  if (!a) return;
  arena_free_chunks(a);
  tr_free(a);
}

void tr_arena_catch(tr_arena *a, jmp_buf *jb) { a->oom = jb; }

void tr_arena_set_limit(tr_arena *a, size_t limit) { a->limit = limit; }

/* Inside a heap frame the frame wins over an arena's own catch: the frame
 * holds the arena's blocks too, and its owner's verdict says "out of
 * memory" where the catch's (a parser's, a verifier's) would read as bad
 * input (a compiler pass "leaving an invalid module"). */
static _Noreturn void arena_out_of_memory(tr_arena *a, size_t n) {
  if (!hs.top && a && a->oom) longjmp(*a->oom, 1);
  tr_heap_raise(n);
}

void *tr_arena_heap(tr_arena *a, void *p, size_t n) {
  if (a && a->limit && a->total + n > a->limit) arena_out_of_memory(a, n);
  if (a && a->oom) {
    void *q = heap_alloc(p, n, false, false);
    if (!q) arena_out_of_memory(a, n);
    return q;
  }
  return heap_alloc(p, n, false, true);
}

void *tr_arena_alloc(tr_arena *a, size_t n) {
  if (n > SIZE_MAX - 64) arena_out_of_memory(a, n);
  n = (n + 15) & ~(size_t)15;
  if (a->limit && a->total + n > a->limit) arena_out_of_memory(a, n);
  chunk *c = a->head;
  if (!c || c->size - c->used < n) {
    size_t sz = n > 16384 ? n : 16384;
    /* Small requests get a fresh chunk; a big one gets its own chunk placed
     * behind the current one so the current chunk's free space is kept. */
    chunk *nc = heap_injected() ? NULL : malloc(sizeof(chunk) + sz);
    if (!nc) arena_out_of_memory(a, sz);
    nc->size = sz;
    nc->used = 0;
    if (c && n > 4096) {
      nc->next = c->next;
      c->next = nc;
    } else {
      nc->next = c;
      a->head = nc;
    }
    c = nc;
  }
  void *p = c->data + c->used;
  c->used += n;
  a->total += n;
  memset(p, 0, n);
  return p;
}

char *tr_arena_strndup(tr_arena *a, const char *s, size_t n) {
  char *p = tr_arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *tr_arena_strdup(tr_arena *a, const char *s) {
  return tr_arena_strndup(a, s, strlen(s));
}

void *tr_arena_memdup(tr_arena *a, const void *p, size_t n) {
  void *q = tr_arena_alloc(a, n);
  if (n) memcpy(q, p, n);
  return q;
}

size_t tr_arena_used(const tr_arena *a) { return a->total; }

/* ---- buffer ---- */
static void buf_reserve(tr_buf *b, size_t extra) {
  if (b->n + extra + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap * 2 : 64;
  while (cap < b->n + extra + 1) cap *= 2;
  b->p = tr_xrealloc(b->p, cap);
  b->cap = cap;
}

void tr_buf_putn(tr_buf *b, const char *s, size_t n) {
  buf_reserve(b, n);
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}

void tr_buf_putc(tr_buf *b, char c) { tr_buf_putn(b, &c, 1); }
void tr_buf_puts(tr_buf *b, const char *s) { tr_buf_putn(b, s, strlen(s)); }

void tr_buf_vprintf(tr_buf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) return;
  buf_reserve(b, (size_t)n);
  vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
  b->n += (size_t)n;
}

void tr_buf_printf(tr_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tr_buf_vprintf(b, fmt, ap);
  va_end(ap);
}

const char *tr_buf_str(const tr_buf *b) { return b->p ? b->p : ""; }

void tr_buf_free(tr_buf *b) {
  tr_free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
}

/* ---- diagnostics ---- */
static void diag_push(tr_diag *d, char *msg) {
  if (d->nmsgs == d->cap) {
    d->cap = d->cap ? d->cap * 2 : 4;
    d->msgs = tr_xrealloc(d->msgs, (size_t)d->cap * sizeof(char *));
  }
  /* A diagnostic outlives the frame it was made in: its owner reads it
   * after an unwind. */
  tr_heap_keep(d->msgs);
  tr_heap_keep(msg);
  d->msgs[d->nmsgs++] = msg;
}

void tr_diag_errorf(tr_diag *d, const char *fmt, ...) {
  if (!d) return;
  tr_buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  tr_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  diag_push(d, b.p ? b.p : tr_xstrdup(""));
}

int tr_heap_msg(char *buf, size_t n, const char *where, const char *what, size_t bytes) {
  if (bytes == SIZE_MAX)
    return snprintf(buf, n, "%s: error: out of memory %s (a size past the address space)", where, what);
  return snprintf(buf, n, "%s: error: out of memory %s (%zu bytes)", where, what, bytes);
}

void tr_heap_diag(tr_diag *d, const char *where, const char *what, size_t bytes) {
  if (!d) return;
  int k = tr_heap_msg(NULL, 0, where, what, bytes);
  char *s = tr_xmalloc((size_t)(k > 0 ? k : 0) + 1);
  tr_heap_msg(s, (size_t)(k > 0 ? k : 0) + 1, where, what, bytes);
  diag_push(d, s);
}

bool tr_heap_diag_is(const char *msg) {
  return msg && strstr(msg, ": error: out of memory ") != NULL;
}

void tr_src_linecol(const tr_src *src, size_t off, int *line, int *col) {
  int l = 1, c = 1;
  if (off > src->len) off = src->len;
  for (size_t i = 0; i < off; i++) {
    if (src->text[i] == '\n') {
      l++;
      c = 1;
    } else {
      c++;
    }
  }
  *line = l;
  *col = c;
}

void tr_diag_vat(tr_diag *d, const tr_src *src, size_t off, const char *fmt,
                 va_list ap) {
  if (!d) return;
  int line, col;
  tr_src_linecol(src, off, &line, &col);
  tr_buf b = {0};
  tr_buf_printf(&b, "%s:%d:%d: error: ", src->file, line, col);
  tr_buf_vprintf(&b, fmt, ap);
  tr_buf_putc(&b, '\n');
  if (off > src->len) off = src->len;
  size_t ls = off;
  while (ls > 0 && src->text[ls - 1] != '\n') ls--;
  size_t le = off;
  while (le < src->len && src->text[le] != '\n' && src->text[le] != '\r') le++;
  /* Very long lines (dumps) are cut to a window around the column. */
  size_t from = ls, to = le;
  if (off - ls > 100) from = off - 60;
  if (to - from > 160) to = from + 160;
  tr_buf_puts(&b, "  ");
  if (from > ls) tr_buf_puts(&b, "...");
  for (size_t i = from; i < to; i++) {
    char ch = src->text[i];
    tr_buf_putc(&b, ch == '\t' ? ' ' : (ch >= 32 && ch < 127) ? ch : '?');
  }
  if (to < le) tr_buf_puts(&b, "...");
  tr_buf_puts(&b, "\n  ");
  if (from > ls) tr_buf_puts(&b, "   ");
  for (size_t i = from; i < off; i++) tr_buf_putc(&b, ' ');
  tr_buf_puts(&b, "^");
  diag_push(d, b.p);
}

void tr_diag_at(tr_diag *d, const tr_src *src, size_t off, const char *fmt,
                ...) {
  va_list ap;
  va_start(ap, fmt);
  tr_diag_vat(d, src, off, fmt, ap);
  va_end(ap);
}

void tr_diag_print(const tr_diag *d, FILE *f) {
  for (int i = 0; i < d->nmsgs; i++) fprintf(f, "%s\n", d->msgs[i]);
}

const char *tr_diag_first(const tr_diag *d) {
  return d->nmsgs ? d->msgs[0] : NULL;
}

void tr_diag_clear(tr_diag *d) {
  for (int i = 0; i < d->nmsgs; i++) tr_free(d->msgs[i]);
  tr_free(d->msgs);
  d->msgs = NULL;
  d->nmsgs = d->cap = 0;
}

static void read_too_big(tr_diag *d, const char *name, size_t max) {
  tr_diag_errorf(d, "%s: larger than the read limit of %zu bytes", name, max);
}

tr_status tr_read_stream(FILE *f, const char *name, size_t max, char **out, size_t *len,
                         tr_diag *d) {
  tr_buf b = {0};
  char tmp[65536];
  size_t n;
  while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) {
    if (b.n + n > max) {
      read_too_big(d, name, max);
      tr_buf_free(&b);
      return TR_ERR_IO;
    }
    tr_buf_putn(&b, tmp, n);
  }
  if (ferror(f)) {
    tr_diag_errorf(d, "%s: cannot read: %s", name, strerror(errno));
    tr_buf_free(&b);
    return TR_ERR_IO;
  }
  if (!b.p) b.p = tr_xcalloc(1, 1);
  *out = b.p;
  *len = b.n;
  return TR_OK;
}

tr_status tr_read_file(const char *path, char **out, size_t *len, tr_diag *d) {
  return tr_read_file_max(path, TR_READ_MAX, out, len, d);
}

tr_status tr_read_file_max(const char *path, size_t max, char **out, size_t *len, tr_diag *d) {
  /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
   * writer; fstat then tells what was opened, before anything is read. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    tr_diag_errorf(d, "%s: cannot open: %s", path, strerror(errno));
    return TR_ERR_IO;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    tr_diag_errorf(d, "%s: cannot open: %s", path, strerror(errno));
    close(fd);
    return TR_ERR_IO;
  }
  if (!S_ISREG(st.st_mode)) {
    tr_diag_errorf(d, "%s: not a regular file (%s); trench reads regular files, or '-' for stdin",
                   path, S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a FIFO"
                         : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "a socket");
    close(fd);
    return TR_ERR_IO;
  }
  if (st.st_size < 0 || (uint64_t)st.st_size > max) {
    read_too_big(d, path, max);
    close(fd);
    return TR_ERR_IO;
  }
  /* One allocation of the size fstat gives; a file that grows meanwhile
   * is read on up to the limit. */
  size_t cap = (size_t)st.st_size + 1, n = 0;
  char *buf = malloc(cap + 1);
  if (!buf) {
    tr_diag_errorf(d, "%s: out of memory for %zu bytes", path, cap);
    close(fd);
    return TR_ERR_IO;
  }
  for (;;) {
    if (n == cap) {
      if (cap > max) {
        read_too_big(d, path, max);
        tr_free(buf);
        close(fd);
        return TR_ERR_IO;
      }
      size_t nc = cap * 2 > max + 1 ? max + 1 : cap * 2;
      char *nb = realloc(buf, nc + 1);
      if (!nb) {
        tr_diag_errorf(d, "%s: out of memory for %zu bytes", path, nc);
        tr_free(buf);
        close(fd);
        return TR_ERR_IO;
      }
      buf = nb;
      cap = nc;
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      tr_diag_errorf(d, "%s: cannot read: %s", path, strerror(errno));
      tr_free(buf);
      close(fd);
      return TR_ERR_IO;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  close(fd);
  if (n > max) {
    read_too_big(d, path, max);
    tr_free(buf);
    return TR_ERR_IO;
  }
  buf[n] = 0;
  *out = buf;
  *len = n;
  return TR_OK;
}

/* ---- string hash map ---- */

uint64_t tr_hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static void strmap_grow(tr_strmap *t) {
  tr_strmap o = *t;
  size_t cap = o.cap ? o.cap * 2 : 64;
  /* Keys and values in one block (vals points into it), allocated before
   * t changes: a failure (a jump) leaves t as it was, with nothing leaked. */
  const char **keys = tr_arena_heap(t->fail, NULL, cap * 2 * sizeof(void *));
  memset(keys, 0, cap * 2 * sizeof(void *));
  void **vals = (void **)(keys + cap);
  t->cap = cap;
  t->n = 0;
  t->keys = keys;
  t->vals = vals;
  for (size_t i = 0; i < o.cap; i++)
    if (o.keys[i]) tr_strmap_put(t, o.keys[i], o.vals[i]);
  tr_free(o.keys); /* and o.vals with it */
}

void tr_strmap_put(tr_strmap *t, const char *k, void *v) {
  if ((t->n + 1) * 2 > t->cap) strmap_grow(t);
  size_t i = tr_hash_str(k) & (t->cap - 1);
  while (t->keys[i] && strcmp(t->keys[i], k) != 0) i = (i + 1) & (t->cap - 1);
  if (!t->keys[i]) t->n++;
  t->keys[i] = k;
  t->vals[i] = v;
}

void *tr_strmap_get(const tr_strmap *t, const char *k) {
  if (!t->cap) return NULL;
  size_t i = tr_hash_str(k) & (t->cap - 1);
  while (t->keys[i]) {
    if (strcmp(t->keys[i], k) == 0) return t->vals[i];
    i = (i + 1) & (t->cap - 1);
  }
  return NULL;
}

void tr_strmap_clear(tr_strmap *t) {
  if (t->cap) memset(t->keys, 0, t->cap * sizeof(char *));
  t->n = 0;
}

void tr_strmap_free(tr_strmap *t) {
  tr_arena *fail = t->fail;
  tr_free(t->keys); /* and t->vals with it */
  memset(t, 0, sizeof *t);
  t->fail = fail;
}
