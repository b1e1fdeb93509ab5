/* jit.c - the JIT behind the builtin target: the system C compiler builds
 * the emitter's translation unit into a shared object and dlopen loads it,
 * or libtcc compiles it in memory (backend tcc, when built with TCC=1); a
 * forked child runs each kernel, forked by the caller or by a runner (a
 * zygote, at the end of this file). The only process-wide mutable state
 * is the compile cache below (loaded objects by text hash) and the shared
 * code arena libtcc's units live in, both guarded by one mutex; a forked
 * child never touches them (it only calls the entry it was handed), so a
 * fork while another thread holds the lock is harmless. */
#include "jit.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef TRENCH_HAVE_TCC
#include <libtcc.h>
#endif

extern char **environ;

/* Bumped whenever the ABI between emitter and JIT changes, so stale disk
 * entries are never loaded. */
#define JIT_ABI "trench-jit-1"
/* Loaded objects kept at most; released unused ones beyond it are closed
 * so a long fuzz campaign does not map thousands of objects. */
#define JIT_CACHE_MAX 256
/* libtcc states kept at most: each holds its sections and symbol tables
 * (hundreds of KB), and a fuzz campaign compiles a new unit a test, so
 * 256 of them were most of a campaign worker's memory growth. A unit is
 * reused across one test's input seeds and a triage's runs; recompiling
 * one that fell out costs milliseconds. */
#define JIT_TCC_CACHE_MAX 16
/* Objects kept on disk; past it the least recently used quarter goes. */
#define JIT_DISK_MAX 2048

struct tr_jit_code {
  char hash[33];  /* cache key */
  void *dl;       /* dlopen handle (backend cc) */
  void *tcc;      /* TCCState owning the relocated code (backend tcc) */
  unsigned char *mem; /* where tcc relocated the code: a block of the
                         shared code arena, or a private mapping */
  size_t mem_len;
  pid_t mem_pid;  /* the arena's owner when mem is in it, else 0 */
  int refs;       /* holders (tr_jit_release); guarded by cache_lock */
  uint64_t used;  /* last use tick, for eviction */
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static tr_jit_code *cache[JIT_CACHE_MAX];
static int ncache;
static uint64_t cache_tick;

void tr_jit_opts_init(tr_jit_opts *o) { memset(o, 0, sizeof *o); }

bool tr_jit_have_tcc(void) {
#ifdef TRENCH_HAVE_TCC
  return true;
#else
  return false;
#endif
}

static bool is_tcc(const tr_jit_opts *o) { return o && o->backend == TR_JIT_TCC; }

static void arena_free(tr_jit_code *c);

/* Unloads c's code. */
static void code_close(tr_jit_code *c) {
#ifdef TRENCH_HAVE_TCC
  if (c->tcc) tcc_delete(c->tcc);
#endif
  if (c->dl) dlclose(c->dl);
  if (c->mem) arena_free(c);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* poll's timeout for what is left of timeout_s since t0: -1 without a
 * timeout, -2 once it has passed. */
static int poll_left(double t0, double timeout_s) {
  if (timeout_s <= 0) return -1;
  double ms = timeout_s * 1e3 - (now_ms() - t0);
  if (ms <= 0) return -2;
  return ms > 1e9 ? 1000000000 : (int)ms + 1;
}

static const char *cc_of(const tr_jit_opts *o) {
  if (o && o->cc) return o->cc;
  const char *e = getenv("TRENCH_CC");
  return e && *e ? e : "cc";
}

static const char *cflags_of(const tr_jit_opts *o) {
  if (o && o->cflags) return o->cflags;
  const char *e = getenv("TRENCH_CFLAGS");
  return e && *e ? e : "-O2";
}

/* Two independent 64-bit FNV-1a streams: collisions would load the wrong
 * kernel, so 128 bits. */
static void fnv2(uint64_t h[2], const char *s) {
  for (; *s; s++) {
    h[0] = (h[0] ^ (unsigned char)*s) * 0x100000001b3ull;
    h[1] = (h[1] ^ (unsigned char)*s) * 0x100000001b3ull;
    h[1] ^= h[1] >> 29;
  }
}

void tr_jit_hash_text(const tr_jit_opts *o, const char *src, char hex[33]) {
  uint64_t h[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  fnv2(h, JIT_ABI "\n");
  /* The same text from the two backends is two entries. */
  fnv2(h, is_tcc(o) ? "libtcc" : cc_of(o));
  fnv2(h, "\n");
  fnv2(h, is_tcc(o) ? "" : cflags_of(o));
  fnv2(h, "\n");
  fnv2(h, src);
  snprintf(hex, 33, "%016llx%016llx", (unsigned long long)h[0], (unsigned long long)h[1]);
}

/* ---- files ---- */

static tr_status write_all(const char *path, const char *s, size_t n, tr_diag *d) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    tr_diag_errorf(d, "jit: cannot write %s: %s", path, strerror(errno));
    return TR_ERR_IO;
  }
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      tr_diag_errorf(d, "jit: cannot write %s: %s", path, strerror(errno));
      close(fd);
      return TR_ERR_IO;
    }
    s += w;
    n -= (size_t)w;
  }
  close(fd);
  return TR_OK;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f) {
  (void)st; (void)flag; (void)f;
  remove(path);
  return 0;
}

static void rm_tree(const char *path) { nftw(path, rm_entry, 8, FTW_DEPTH | FTW_PHYS); }

/* mkdir -p, best effort. */
static bool make_dirs(const char *path) {
  char buf[4096];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof buf) return false;
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] == '/' || buf[i] == 0) {
      char c = buf[i];
      buf[i] = 0;
      if (mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
      buf[i] = c;
    }
  }
  return true;
}

/* The disk cache folder, or false when there is none. */
static bool cache_folder(const tr_jit_opts *o, tr_buf *out) {
  if (o && o->no_cache) return false;
  if (o && o->cache_dir) {
    if (!*o->cache_dir) return false;
    tr_buf_printf(out, "%s", o->cache_dir);
  } else {
    const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (x && *x) tr_buf_printf(out, "%s/trench", x);
    else if (home && *home) tr_buf_printf(out, "%s/.cache/trench", home);
    else return false;
  }
  tr_buf_puts(out, "/jit");
  return make_dirs(out->p);
}

typedef struct {
  char *path;   /* heap */
  time_t used;  /* mtime: refreshed on every disk hit */
} disk_entry;

static int by_age(const void *a, const void *b) {
  time_t x = ((const disk_entry *)a)->used, y = ((const disk_entry *)b)->used;
  return (x > y) - (x < y);
}

/* Keeps the disk cache under JIT_DISK_MAX objects, best effort: a fuzz
 * campaign compiles thousands of distinct modules. */
static void trim_disk(const char *dir) {
  DIR *dp = opendir(dir);
  if (!dp) return;
  disk_entry *v = NULL;
  int n = 0, cap = 0;
  struct dirent *de;
  while ((de = readdir(dp)) != NULL) {
    size_t len = strlen(de->d_name);
    if (len < 4 || strcmp(de->d_name + len - 3, ".so") != 0) continue;
    tr_buf p = {0};
    tr_buf_printf(&p, "%s/%s", dir, de->d_name);
    struct stat st;
    if (stat(p.p, &st) != 0) {
      tr_buf_free(&p);
      continue;
    }
    if (n == cap) {
      cap = cap ? 2 * cap : 256;
      v = tr_xrealloc(v, sizeof *v * (size_t)cap);
    }
    v[n].path = p.p;
    v[n++].used = st.st_mtime;
  }
  closedir(dp);
  if (n > JIT_DISK_MAX) {
    qsort(v, (size_t)n, sizeof *v, by_age);
    for (int i = 0; i < n / 4; i++) remove(v[i].path);
  }
  for (int i = 0; i < n; i++) tr_free(v[i].path);
  tr_free(v);
}

/* Last bytes of a file, for compiler messages. */
static void tail_into(const char *path, tr_buf *out, size_t max) {
  char *text = NULL;
  size_t len = 0;
  tr_diag ign = {0};
  if (tr_read_file(path, &text, &len, &ign) == TR_OK) {
    const char *s = len > max ? text + len - max : text;
    tr_buf_puts(out, s);
  }
  tr_diag_clear(&ign);
  tr_free(text);
}

/* Runs CC FLAGS -shared -fPIC -o so c -lm with stderr into err. Returns
 * the exit status (-1: could not start). */
static int run_cc(const tr_jit_opts *o, const char *c, const char *so, const char *err) {
  char *flags = tr_xstrdup(cflags_of(o));
  char *argv[64];
  int n = 0;
  argv[n++] = (char *)cc_of(o);
  for (char *w = strtok(flags, " \t"); w && n < 48; w = strtok(NULL, " \t")) argv[n++] = w;
  /* No FMA contraction: products and sums round separately, as in the
   * reference. */
  argv[n++] = (char *)"-ffp-contract=off";
  argv[n++] = (char *)"-w";
  argv[n++] = (char *)"-shared";
  argv[n++] = (char *)"-fPIC";
  argv[n++] = (char *)"-o";
  argv[n++] = (char *)so;
  argv[n++] = (char *)c;
  argv[n++] = (char *)"-lm";
  argv[n] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  tr_free(flags);
  if (rc != 0) return -1;
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  return 128;
}

/* ---- the cache ---- */

static tr_jit_code *cache_find(const char *hash) {
  for (int i = 0; i < ncache; i++)
    if (strcmp(cache[i]->hash, hash) == 0) return cache[i];
  return NULL;
}

/* Adds c (refs already 1), closing the least recently used unheld entry
 * when full. Without room c stays out of the cache and is closed on
 * release. */
static void cache_add(tr_jit_code *c) {
  int ntcc = 0;
  for (int i = 0; i < ncache; i++) ntcc += cache[i]->tcc != NULL;
  bool tcc_full = c->tcc && ntcc >= JIT_TCC_CACHE_MAX;
  if (ncache == JIT_CACHE_MAX || tcc_full) {
    int victim = -1;
    for (int i = 0; i < ncache; i++)
      if (cache[i]->refs == 0 && (!tcc_full || cache[i]->tcc) &&
          (victim < 0 || cache[i]->used < cache[victim]->used))
        victim = i;
    if (victim < 0) return;
    code_close(cache[victim]);
    tr_free(cache[victim]);
    cache[victim] = cache[--ncache];
  }
  cache[ncache++] = c;
}

static tr_jit_code *load(const char *path, const char *hash, tr_diag *d) {
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    const char *e = dlerror();
    tr_diag_errorf(d, "jit: dlopen %s: %s", path, e ? e : "failed");
    return NULL;
  }
  tr_jit_code *c = tr_xcalloc(1, sizeof *c);
  tr_heap_keep(c); /* the cache's and its holders', not a heap frame's */
  memcpy(c->hash, hash, 33);
  c->dl = dl;
  c->refs = 1;
  c->used = ++cache_tick;
  return c;
}

/* ---- the shared code arena ----
 * Code that libtcc compiles after a runner started (tr_jit_runner_new) is
 * relocated into one MAP_SHARED mapping made before the runner's fork, so
 * the runner, and every child it forks, sees it at the same address
 * without compiling it again. Blocks are whole pages (libtcc mprotects
 * page ranges) and go back to the system when their unit is closed. The
 * arena belongs to the process that mapped it: a forked process that
 * inherits it never allocates in it or frees from it (the owner may
 * reuse a block), and drops the cached units that live there. Guarded by
 * cache_lock. */
#define ARENA_BYTES ((size_t)256 << 20) /* address space only (NORESERVE) */
#define ARENA_MAX_BLOCKS 64

static unsigned char *arena;
static pid_t arena_pid;
static struct { size_t off, len; } blocks[ARENA_MAX_BLOCKS]; /* by offset */
static int nblocks;

static size_t page_round(size_t n) {
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  return (n + pg - 1) / pg * pg;
}

/* Forgets an arena inherited through fork (see above). */
static void arena_check_owner(void) {
  if (!arena || arena_pid == getpid()) return;
  for (int i = 0; i < ncache;) {
    tr_jit_code *c = cache[i];
    if (c->mem && c->mem_pid && c->mem_pid != getpid()) {
      cache[i] = cache[--ncache];
      if (c->refs == 0) {
        c->mem = NULL; /* the owner's block */
        code_close(c);
        tr_free(c);
      }
      continue;
    }
    i++;
  }
  arena = NULL; /* the mapping stays: a held unit may still run from it */
  nblocks = 0;
}

#ifdef TRENCH_HAVE_TCC /* only libtcc's code goes there */
static bool arena_make(void) {
  arena_check_owner();
  if (arena) return true;
  void *p = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE | PROT_EXEC,
                 MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  arena = p;
  arena_pid = getpid();
  nblocks = 0;
  return true;
}

/* A block of len bytes (a page multiple) for c, first fit; false when the
 * arena is absent or full. */
static bool arena_alloc(tr_jit_code *c, size_t len) {
  arena_check_owner();
  if (!arena || nblocks == ARENA_MAX_BLOCKS) return false;
  size_t at = 0;
  int i = 0;
  for (; i < nblocks; i++) {
    if (blocks[i].off - at >= len) break;
    at = blocks[i].off + blocks[i].len;
  }
  if (i == nblocks && ARENA_BYTES - at < len) return false;
  memmove(&blocks[i + 1], &blocks[i], sizeof blocks[0] * (size_t)(nblocks - i));
  blocks[i].off = at;
  blocks[i].len = len;
  nblocks++;
  c->mem = arena + at;
  c->mem_len = len;
  c->mem_pid = arena_pid;
  return true;
}

#endif

static void arena_free(tr_jit_code *c) {
  if (!c->mem_pid) {
    munmap(c->mem, c->mem_len); /* a private mapping */
  } else if (c->mem_pid == getpid() && arena && c->mem_pid == arena_pid) {
    size_t off = (size_t)(c->mem - arena);
    for (int i = 0; i < nblocks; i++)
      if (blocks[i].off == off) {
        memmove(&blocks[i], &blocks[i + 1], sizeof blocks[0] * (size_t)(nblocks - i - 1));
        nblocks--;
        break;
      }
    /* Shared memory stays allocated until removed. */
    madvise(c->mem, c->mem_len, MADV_REMOVE);
  }
  c->mem = NULL;
}

/* Whether code in c runs in a child of the runner: it lives in this
 * process's arena, mapped before the runner's fork. */
static bool code_in_arena(const tr_jit_code *c) {
  return c && c->mem && c->mem_pid == getpid() && arena && arena_pid == c->mem_pid;
}

/* ---- libtcc ---- */

#ifdef TRENCH_HAVE_TCC
/* Keeps tcc's messages (each "<string>:LINE: error: ..."), the last ones
 * when there are many. */
typedef struct {
  char s[8192];
  size_t n;
  bool implicit; /* a function was called undeclared */
} tcc_msgs;

/* A fixed buffer: libtcc calls this from inside a compile, where running
 * out of memory must not jump out of libtcc (a heap frame's unwind). */
static void tcc_message(void *opaque, const char *msg) {
  tcc_msgs *b = opaque;
  int k = snprintf(b->s + b->n, sizeof b->s - b->n, "%s\n", msg);
  if (k > 0) b->n += (size_t)k < sizeof b->s - b->n ? (size_t)k : sizeof b->s - b->n - 1;
  if (strstr(msg, "implicit declaration")) b->implicit = true;
}

static void tcc_quiet(void *opaque, const char *msg) { (void)opaque; (void)msg; }

/* Compiles src in memory. libtcc keeps global state, so callers hold
 * cache_lock (compiles never overlap). Undefined functions (libm, libc)
 * resolve against the host process, which links libm. */
static tr_status compile_tcc(const char *src, const char *hash, tr_jit_code **out, double *ms,
                             tr_diag *d) {
  double t0 = now_ms();
  /* Allocated first: between tcc_new and the code's holder nothing may
   * run out of memory, or libtcc's state would be lost in an unwind. */
  tr_jit_code *c = tr_xcalloc(1, sizeof *c);
  TCCState *t = tcc_new();
  if (!t) {
    tr_free(c);
    tr_diag_errorf(d, "jit: tcc_new failed");
    return TR_ERR_IO;
  }
  tcc_msgs msg;
  msg.n = 0;
  msg.s[0] = 0;
  msg.implicit = false;
  tcc_set_error_func(t, &msg, tcc_message);
  tcc_set_options(t, "-Wimplicit-function-declaration"); /* off by default in libtcc */
  tcc_set_output_type(t, TCC_OUTPUT_MEMORY);
  tr_status s = TR_OK;
  /* Warnings stay on for one reason: the prelude declares the library
   * functions itself (no system headers), and an undeclared one would be
   * implicitly int, a wrong result instead of an error. */
  if (tcc_compile_string(t, src) != 0 || msg.implicit) s = TR_ERR_INVALID;
  /* Relocated into memory of our own (what TCC_RELOCATE_AUTO does with a
   * malloc'd block): the shared arena when a runner may run it, else a
   * private mapping. */
  int need = s == TR_OK ? tcc_relocate(t, NULL) : -1;
  if (need < 0) s = TR_ERR_INVALID;
  if (s == TR_OK) {
    size_t len = page_round((size_t)need);
    if (!arena_alloc(c, len)) {
      void *p = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
      if (p == MAP_FAILED) {
        tcc_delete(t);
        tr_free(c);
        tr_diag_errorf(d, "jit: cannot map %zu bytes for the code: %s", len, strerror(errno));
        return TR_ERR_IO;
      }
      c->mem = p;
      c->mem_len = len;
      c->mem_pid = 0;
    }
    if (tcc_relocate(t, c->mem) < 0) s = TR_ERR_INVALID;
  }
  *ms = now_ms() - t0;
  if (s != TR_OK) {
    tcc_delete(t);
    if (c->mem) arena_free(c);
    tr_free(c);
    const char *m = msg.s;
    size_t n = strlen(m);
    tr_diag_errorf(d, "jit: libtcc failed: %s", n > 1500 ? m + n - 1500 : m);
    return s;
  }
  /* Messages must not reach a buffer that is gone. */
  tcc_set_error_func(t, NULL, tcc_quiet);
  tr_heap_keep(c); /* the cache's and its holders', not a heap frame's */
  memcpy(c->hash, hash, 33);
  c->tcc = t;
  c->refs = 1;
  c->used = ++cache_tick;
  *out = c;
  return TR_OK;
}
#else
static tr_status compile_tcc(const char *src, const char *hash, tr_jit_code **out, double *ms,
                             tr_diag *d) {
  (void)src; (void)hash; (void)out; (void)ms;
  tr_diag_errorf(d, "jit: no libtcc in this build");
  return TR_ERR_UNSUPPORTED;
}
#endif

/* The compile, with cache_lock held by the caller. */
/* made: where the path of the scratch folder goes while it exists (the
 * caller's memory, outside the frame), so that the caller removes it
 * when running out of memory unwinds this before the folder is gone. */
static tr_status compile_locked(const tr_jit_opts *o, const char *src, tr_jit_code **out,
                                tr_jit_stats *st, tr_diag *d, char made[4096]) {
  char hash[33];
  tr_jit_hash_text(o, src, hash);
  bool use_mem = !(o && o->no_cache);
  tr_status s = TR_OK;
#ifndef TRENCH_HAVE_TCC
  if (is_tcc(o)) {
    tr_diag_errorf(d, "jit: this build has no libtcc (build with make TCC=1; Debian libtcc-dev "
                   "and tcc); use the cc backend");
    return TR_ERR_UNSUPPORTED;
  }
#endif
  arena_check_owner();
  if (use_mem) {
    tr_jit_code *c = cache_find(hash);
    if (c) {
      c->refs++;
      c->used = ++cache_tick;
      st->memory_hit = true;
      *out = c;
      return TR_OK;
    }
  }
  if (is_tcc(o)) {
    tr_jit_code *c = NULL;
    s = compile_tcc(src, hash, &c, &st->compile_ms, d);
    if (s == TR_OK) {
      if (use_mem) cache_add(c);
      *out = c;
    }
    return s;
  }
  tr_buf dir = {0}, cpath = {0}, sopath = {0}, errpath = {0}, final = {0}, tmpfinal = {0};
  bool have_disk = cache_folder(o, &dir);
  if (have_disk) {
    tr_buf_printf(&final, "%s/%s.so", dir.p, hash);
    if (access(final.p, R_OK) == 0) {
      tr_diag ld = {0};
      tr_jit_code *c = load(final.p, hash, &ld);
      if (c) {
        tr_diag_clear(&ld);
        utimes(final.p, NULL); /* recently used: trimmed last */
        st->disk_hit = true;
        if (use_mem) cache_add(c);
        *out = c;
        goto done;
      }
      /* A damaged entry: rebuild it. */
      tr_diag_clear(&ld);
      remove(final.p);
    }
  }
  {
    const char *tmp = o && o->tmp_dir ? o->tmp_dir : getenv("TMPDIR");
    tr_buf tmpl = {0};
    tr_buf_printf(&tmpl, "%s/trench-jit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tmpl.p)) {
      tr_diag_errorf(d, "jit: cannot make a folder %s: %s", tmpl.p, strerror(errno));
      tr_buf_free(&tmpl);
      s = TR_ERR_IO;
      goto done;
    }
    if (strlen(tmpl.p) < 4096) memcpy(made, tmpl.p, strlen(tmpl.p) + 1);
    tr_buf_printf(&cpath, "%s/k.c", tmpl.p);
    tr_buf_printf(&sopath, "%s/k.so", tmpl.p);
    tr_buf_printf(&errpath, "%s/cc.err", tmpl.p);
    s = write_all(cpath.p, src, strlen(src), d);
    if (s == TR_OK) {
      double t0 = now_ms();
      int rc = run_cc(o, cpath.p, sopath.p, errpath.p);
      st->compile_ms = now_ms() - t0;
      if (rc == -1) {
        tr_diag_errorf(d, "jit: cannot run the C compiler '%s'", cc_of(o));
        s = TR_ERR_IO;
      } else if (rc != 0) {
        tr_buf msg = {0};
        tail_into(errpath.p, &msg, 1500);
        tr_diag_errorf(d, "jit: the C compiler failed (exit %d): %s", rc, tr_buf_str(&msg));
        tr_buf_free(&msg);
        s = TR_ERR_INVALID;
      }
    }
    const char *loadpath = sopath.p;
    if (s == TR_OK && have_disk) {
      /* Publish atomically: concurrent processes may race for the same
       * entry, and a reader must never see half a file. */
      tr_buf_printf(&tmpfinal, "%s/%s.so.%ld.tmp", dir.p, hash, (long)getpid());
      char *bytes = NULL;
      size_t len = 0;
      tr_diag ign = {0};
      if (tr_read_file(sopath.p, &bytes, &len, &ign) == TR_OK &&
          write_all(tmpfinal.p, bytes, len, &ign) == TR_OK && rename(tmpfinal.p, final.p) == 0) {
        loadpath = final.p;
        trim_disk(dir.p);
      } else {
        remove(tmpfinal.p);
      }
      tr_diag_clear(&ign);
      tr_free(bytes);
    }
    if (s == TR_OK) {
      tr_jit_code *c = load(loadpath, hash, d);
      if (!c) s = TR_ERR_IO;
      else {
        if (use_mem) cache_add(c);
        *out = c;
      }
    }
    rm_tree(tmpl.p);
    made[0] = 0;
    tr_buf_free(&tmpl);
  }
done:
  tr_buf_free(&dir);
  tr_buf_free(&cpath);
  tr_buf_free(&sopath);
  tr_buf_free(&errpath);
  tr_buf_free(&final);
  tr_buf_free(&tmpfinal);
  return s;
}

typedef struct {
  const tr_jit_opts *o;
  const char *src;
  tr_jit_code **out;
  tr_jit_stats *st;
  tr_diag *d;
  tr_status s;
  char made[4096]; /* the scratch folder while it exists */
} compile_job;

static void compile_job_fn(void *p) {
  compile_job *j = p;
  j->s = compile_locked(j->o, j->src, j->out, j->st, j->d, j->made);
}

tr_status tr_jit_compile(const tr_jit_opts *o, const char *src, tr_jit_code **out,
                         tr_jit_stats *st, tr_diag *d) {
  tr_jit_stats dummy;
  if (!st) st = &dummy;
  memset(st, 0, sizeof *st);
  *out = NULL;
  /* The lock is held across the compile, so two threads asking for the
   * same text compile it once; the compile runs in its own heap frame so
   * that running out of memory in it lets go of the lock before the
   * caller's frame unwinds. */
  compile_job j = {o, src, out, st, d, TR_OK, {0}};
  size_t bytes = 0;
  pthread_mutex_lock(&cache_lock);
  bool ok = tr_heap_run(compile_job_fn, &j, &bytes);
  pthread_mutex_unlock(&cache_lock);
  if (!ok) {
    if (j.made[0]) rm_tree(j.made); /* unwound between mkdtemp and rm_tree */
    tr_jit_release(*out);
    *out = NULL;
    tr_heap_raise(bytes);
  }
  return j.s;
}

tr_jit_entry tr_jit_symbol(tr_jit_code *c, const char *name) {
  if (!c) return NULL;
  void *p = NULL;
#ifdef TRENCH_HAVE_TCC
  if (c->tcc) {
    /* libtcc is not thread-safe: under the same lock as its compiles. */
    pthread_mutex_lock(&cache_lock);
    p = tcc_get_symbol(c->tcc, name);
    pthread_mutex_unlock(&cache_lock);
  }
#endif
  if (c->dl) p = dlsym(c->dl, name);
  tr_jit_entry f;
  /* POSIX guarantees object and function pointers convert via dlsym. */
  memcpy(&f, &p, sizeof f);
  return f;
}

tr_jit_code *tr_jit_retain(tr_jit_code *c) {
  if (!c) return NULL;
  pthread_mutex_lock(&cache_lock);
  c->refs++;
  pthread_mutex_unlock(&cache_lock);
  return c;
}

void tr_jit_release(tr_jit_code *c) {
  if (!c) return;
  pthread_mutex_lock(&cache_lock);
  c->refs--;
  bool cached = false;
  for (int i = 0; i < ncache; i++) cached |= cache[i] == c;
  if (!cached && c->refs == 0) {
    code_close(c);
    tr_free(c);
  }
  pthread_mutex_unlock(&cache_lock);
}

/* ---- the forked worker ---- */

#define SHM_ALIGN 64

tr_status tr_jit_run_forked(tr_jit_entry fn, unsigned char *const *in, unsigned char **out,
                            const size_t *out_bytes, int nout, double timeout_s, tr_jit_run *r,
                            tr_diag *d) {
  memset(r, 0, sizeof *r);
  /* Layout: a header (the kernel's return value, its time in the child),
   * then each output at a 64-byte boundary. */
  size_t off[TR_EMIT_MAX_LEAVES], total = SHM_ALIGN;
  if (nout > TR_EMIT_MAX_LEAVES) {
    tr_diag_errorf(d, "jit: %d outputs (at most %d)", nout, TR_EMIT_MAX_LEAVES);
    return TR_ERR_UNSUPPORTED;
  }
  for (int i = 0; i < nout; i++) {
    off[i] = total;
    total += (out_bytes[i] + SHM_ALIGN - 1) / SHM_ALIGN * SHM_ALIGN;
  }
  unsigned char *shm = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shm == MAP_FAILED) {
    tr_diag_errorf(d, "jit: cannot map %zu bytes of shared memory: %s", total, strerror(errno));
    return TR_ERR_IO;
  }
  volatile int *hdr = (volatile int *)shm;
  hdr[0] = -12345; /* not written: the child died before returning */
  unsigned char *cout[TR_EMIT_MAX_LEAVES];
  for (int i = 0; i < nout; i++) cout[i] = shm + off[i];
  double t0 = now_ms();
  /* The child holds the write end of a pipe: its end, however it
   * happens, wakes the parent's poll at once, no polling naps. */
  int pfd[2];
  if (pipe2(pfd, O_CLOEXEC) != 0) {
    tr_diag_errorf(d, "jit: pipe: %s", strerror(errno));
    munmap(shm, total);
    return TR_ERR_IO;
  }
  fflush(NULL); /* buffered output must not be written twice */
  pid_t pid = fork();
  if (pid < 0) {
    tr_diag_errorf(d, "jit: fork: %s", strerror(errno));
    close(pfd[0]);
    close(pfd[1]);
    munmap(shm, total);
    return TR_ERR_IO;
  }
  if (pid == 0) {
    close(pfd[0]);
    struct rlimit nocore = {0, 0};
    setrlimit(RLIMIT_CORE, &nocore);
    /* The kernel's faults are its verdict: default actions, not the
     * handlers a sanitizer or the host installed. */
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
    for (int i = 0; i < (int)(sizeof fatal / sizeof fatal[0]); i++) signal(fatal[i], SIG_DFL);
    double k0 = now_ms();
    int rc = fn((unsigned char **)in, cout);
    *(volatile double *)(shm + 8) = now_ms() - k0;
    hdr[0] = rc;
    _exit(rc == 0 ? 0 : 3);
  }
  close(pfd[1]);
  int st = 0;
  bool done = false, hung = false;
  for (;;) {
    int left = poll_left(t0, timeout_s);
    if (left == -2) {
      hung = true;
      break;
    }
    struct pollfd pf = {pfd[0], POLLIN, 0};
    int pr = poll(&pf, 1, left);
    if (pr < 0 && errno == EINTR) continue;
    if (pr > 0) break; /* the write end closed: the child is gone */
    if (pr == 0) {
      hung = true;
      break;
    }
    break;
  }
  close(pfd[0]);
  if (hung) kill(pid, SIGKILL);
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) break;
  }
  done = !hung;
  r->run_ms = now_ms() - t0;
  if (hung) {
    r->outcome = TR_JIT_RUN_HANG;
    snprintf(r->msg, sizeof r->msg, "kernel still running after %.3g s; killed", timeout_s);
  } else if (!done) {
    r->outcome = TR_JIT_RUN_CRASH;
    snprintf(r->msg, sizeof r->msg, "lost the worker process");
  } else if (WIFSIGNALED(st)) {
    r->outcome = TR_JIT_RUN_CRASH;
    r->signal = WTERMSIG(st);
    snprintf(r->msg, sizeof r->msg, "kernel killed by signal %d (%s)", r->signal,
             strsignal(r->signal));
  } else if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && hdr[0] == 0) {
    r->outcome = TR_JIT_RUN_OK;
    r->kernel_ms = *(volatile double *)(shm + 8);
    for (int i = 0; i < nout; i++)
      if (out_bytes[i]) memcpy(out[i], cout[i], out_bytes[i]);
  } else if (WIFEXITED(st) && WEXITSTATUS(st) == 3 && hdr[0] != -12345) {
    r->outcome = TR_JIT_RUN_ERROR;
    r->code = hdr[0];
    r->kernel_ms = *(volatile double *)(shm + 8);
    snprintf(r->msg, sizeof r->msg, "kernel gave up (code %d: %s)", r->code,
             r->code == 1 ? "out of memory" : r->code == 2 ? "while loop trip limit" : "error");
  } else {
    r->outcome = TR_JIT_RUN_CRASH;
    r->code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    snprintf(r->msg, sizeof r->msg, "kernel process exited with status %d", r->code);
  }
  munmap(shm, total);
  return TR_OK;
}

/* ---- the runner (a zygote) ----
 * A fork of a campaign worker that holds its tensors copies page tables
 * of every page it maps and makes both sides fault on their next writes;
 * that was a third of a fuzz campaign's CPU. The runner is forked once,
 * while its owner is small, and forks the child of every run itself, so
 * each kernel still runs in a fresh process (a crash or hang kills that
 * child only) at the cost of a fork of a small process. It runs code of
 * the shared arena only; inputs and outputs travel through a shared data
 * region mapped before its fork. The runner and the children it forks
 * make async-signal-safe calls only (the owner may have had threads). */

/* The data region: this header, then each input and each output at a
 * 64-byte boundary. */
typedef struct {
  tr_jit_entry fn;
  int nin, nout;
  int rc;           /* the kernel's return value; -12345: not returned */
  double kernel_ms; /* its time, in the child */
  size_t end;       /* bytes in use: the child unmaps the rest */
  size_t in_off[TR_EMIT_MAX_LEAVES], out_off[TR_EMIT_MAX_LEAVES];
} run_hdr;

#define RUNNER_DATA ((size_t)64 << 20) /* address space only (NORESERVE) */
/* Data pages kept between runs; beyond it they are removed after a run
 * so resident memory stays flat. */
#define RUNNER_KEEP ((size_t)4 << 20)

/* The runner's replies: STARTED with the child's pid (-1: fork failed),
 * then DONE with how it ended. */
typedef struct {
  int kind; /* 1 started, 2 done */
  int pid;
  int exited, status; /* exited: status is the exit code, else the signal */
} run_msg;

struct tr_jit_runner {
  pid_t pid, owner;
  int fd; /* a socketpair's end: commands out, replies in (send with
            * MSG_NOSIGNAL: a dead runner is EPIPE, not SIGPIPE) */
  unsigned char *data;
  bool dead;
  pthread_mutex_t lock; /* one run at a time; others take the plain fork */
};

static bool send_full(int fd, const void *p, size_t n) {
  const char *s = p;
  while (n > 0) {
    ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    s += w;
    n -= (size_t)w;
  }
  return true;
}

static bool read_full(int fd, void *p, size_t n) {
  char *s = p;
  while (n > 0) {
    ssize_t r = read(fd, s, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    s += r;
    n -= (size_t)r;
  }
  return true;
}

#ifdef TRENCH_HAVE_TCC
static void runner_child(unsigned char *data) {
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* no orphan when the runner dies */
  run_hdr *h = (run_hdr *)data;
  size_t keep = page_round(h->end);
  /* Writes past the last output fault as they did in a mapping of just
   * the outputs. */
  if (keep < RUNNER_DATA) munmap(data + keep, RUNNER_DATA - keep);
  unsigned char *in[TR_EMIT_MAX_LEAVES], *out[TR_EMIT_MAX_LEAVES];
  for (int i = 0; i < h->nin; i++) in[i] = data + h->in_off[i];
  for (int i = 0; i < h->nout; i++) out[i] = data + h->out_off[i];
  double k0 = now_ms();
  int rc = h->fn(in, out);
  h->kernel_ms = now_ms() - k0;
  h->rc = rc;
  _exit(rc == 0 ? 0 : 3);
}

static void runner_main(int fd, unsigned char *data, pid_t owner) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != owner) _exit(0);
  /* Other descriptors of the owner (other runners' sockets among them)
   * would stay open as long as this runner lives. */
  if (fd > 3) close_range(3, (unsigned)fd - 1, 0);
  close_range((unsigned)fd + 1, ~0u, 0);
  struct rlimit nocore = {0, 0};
  setrlimit(RLIMIT_CORE, &nocore);
  /* The kernel's faults are its verdict: default actions, not the
   * handlers a sanitizer or the host installed (the children inherit). */
  static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
  for (int i = 0; i < (int)(sizeof fatal / sizeof fatal[0]); i++) signal(fatal[i], SIG_DFL);
  pid_t prev = 0;
  for (;;) {
    char c;
    ssize_t n = read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    /* The last child stayed a zombie until now, so the owner's kill on a
     * timeout could never reach a reused pid. */
    if (prev > 0) while (waitpid(prev, NULL, 0) < 0 && errno == EINTR) {}
    prev = 0;
    pid_t pid = fork();
    if (pid == 0) {
      close(fd);
      runner_child(data);
    }
    run_msg m = {1, (int)pid, 0, 0};
    if (!send_full(fd, &m, sizeof m)) break;
    if (pid < 0) continue;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR) {}
    prev = pid;
    m.kind = 2;
    m.exited = si.si_code == CLD_EXITED;
    m.status = si.si_status;
    if (!send_full(fd, &m, sizeof m)) break;
  }
  if (prev > 0) waitpid(prev, NULL, 0);
  _exit(0);
}
#endif

tr_jit_runner *tr_jit_runner_new(void) {
#ifndef TRENCH_HAVE_TCC
  return NULL;
#else
  /* Its mappings reserve address space (320 MB): under a limit on it
   * (ulimit -v) that room is the heap's, so runs fork plainly. */
  struct rlimit as;
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) return NULL;
  pthread_mutex_lock(&cache_lock);
  bool ok = arena_make();
  pthread_mutex_unlock(&cache_lock);
  if (!ok) return NULL;
  void *data = mmap(NULL, RUNNER_DATA, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE,
                    -1, 0);
  if (data == MAP_FAILED) return NULL;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    munmap(data, RUNNER_DATA);
    return NULL;
  }
  pid_t owner = getpid();
  fflush(NULL); /* buffered output must not be written twice */
  pid_t pid = fork();
  if (pid == 0) {
    close(sv[0]);
    runner_main(sv[1], data, owner);
  }
  close(sv[1]);
  if (pid < 0) {
    close(sv[0]);
    munmap(data, RUNNER_DATA);
    return NULL;
  }
  tr_jit_runner *rn = tr_xcalloc(1, sizeof *rn);
  rn->pid = pid;
  rn->owner = owner;
  rn->fd = sv[0];
  rn->data = data;
  pthread_mutex_init(&rn->lock, NULL);
  return rn;
#endif
}

static void runner_stop(tr_jit_runner *rn) {
  if (rn->dead) return;
  rn->dead = true;
  close(rn->fd);
  /* Not left to the end of its input: another process forked from the
   * owner may hold the owner's end of the socket. Between runs it holds
   * nothing. */
  kill(rn->pid, SIGKILL);
  while (waitpid(rn->pid, NULL, 0) < 0 && errno == EINTR) {}
}

void tr_jit_runner_free(tr_jit_runner *rn) {
  if (!rn) return;
  /* A forked copy of the owner leaves the runner to the owner. */
  if (rn->owner == getpid()) runner_stop(rn);
  else if (!rn->dead) close(rn->fd); /* a dead one's number may be reused */
  munmap(rn->data, RUNNER_DATA);
  pthread_mutex_destroy(&rn->lock);
  tr_free(rn);
}

#define ALIGN64(n) (((n) + 63) / 64 * 64)

tr_status tr_jit_runner_run(tr_jit_runner *rn, tr_jit_code *code, tr_jit_entry fn,
                            unsigned char *const *in, const size_t *in_bytes, int nin,
                            unsigned char **out, const size_t *out_bytes, int nout,
                            double timeout_s, tr_jit_run *r, tr_diag *d) {
  bool usable = rn && !rn->dead && rn->owner == getpid() && nin <= TR_EMIT_MAX_LEAVES &&
                nout <= TR_EMIT_MAX_LEAVES;
  if (usable) {
    pthread_mutex_lock(&cache_lock);
    usable = code_in_arena(code);
    pthread_mutex_unlock(&cache_lock);
  }
  size_t end = ALIGN64(sizeof(run_hdr));
  run_hdr *h = usable ? (run_hdr *)rn->data : NULL;
  if (usable) {
    for (int i = 0; i < nin && end <= RUNNER_DATA; i++) end += ALIGN64(in_bytes[i]);
    for (int i = 0; i < nout && end <= RUNNER_DATA; i++) end += ALIGN64(out_bytes[i]);
    usable = end <= RUNNER_DATA;
  }
  if (!usable || pthread_mutex_trylock(&rn->lock) != 0)
    return tr_jit_run_forked(fn, in, out, out_bytes, nout, timeout_s, r, d);
  if (rn->dead) { /* stopped by another thread meanwhile */
    pthread_mutex_unlock(&rn->lock);
    return tr_jit_run_forked(fn, in, out, out_bytes, nout, timeout_s, r, d);
  }
  memset(r, 0, sizeof *r);
  size_t at = ALIGN64(sizeof(run_hdr));
  h->fn = fn;
  h->nin = nin;
  h->nout = nout;
  for (int i = 0; i < nin; i++) {
    h->in_off[i] = at;
    if (in_bytes[i]) memcpy(rn->data + at, in[i], in_bytes[i]);
    at += ALIGN64(in_bytes[i]);
  }
  size_t out0 = at;
  for (int i = 0; i < nout; i++) {
    h->out_off[i] = at;
    at += ALIGN64(out_bytes[i]);
  }
  /* Outputs start zeroed, as in a fresh mapping: a kernel that skips an
   * element must not show the last run's value. */
  memset(rn->data + out0, 0, at - out0);
  h->end = at;
  h->rc = -12345;
  h->kernel_ms = 0;
  double t0 = now_ms();
  run_msg m;
  char go = 'r';
  if (!send_full(rn->fd, &go, 1) || !read_full(rn->fd, &m, sizeof m) || m.kind != 1 ||
      m.pid <= 0) {
    /* The runner is gone (or could not fork): plain forks from now on. */
    runner_stop(rn);
    pthread_mutex_unlock(&rn->lock);
    return tr_jit_run_forked(fn, in, out, out_bytes, nout, timeout_s, r, d);
  }
  bool hung = false;
  for (;;) {
    int left = poll_left(t0, timeout_s);
    if (left == -2) {
      hung = true;
      break;
    }
    struct pollfd pf = {rn->fd, POLLIN, 0};
    int pr = poll(&pf, 1, left);
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) hung = true;
    break;
  }
  if (hung) kill((pid_t)m.pid, SIGKILL); /* a zombie until the next command */
  bool done = read_full(rn->fd, &m, sizeof m) && m.kind == 2;
  r->run_ms = now_ms() - t0;
  if (!done) {
    /* The runner itself died (its child dies with it): not the kernel's
     * doing, so the run is done again the plain way. */
    runner_stop(rn);
    pthread_mutex_unlock(&rn->lock);
    return tr_jit_run_forked(fn, in, out, out_bytes, nout, timeout_s, r, d);
  }
  if (hung) {
    r->outcome = TR_JIT_RUN_HANG;
    snprintf(r->msg, sizeof r->msg, "kernel still running after %.3g s; killed", timeout_s);
  } else if (!m.exited) {
    r->outcome = TR_JIT_RUN_CRASH;
    r->signal = m.status;
    snprintf(r->msg, sizeof r->msg, "kernel killed by signal %d (%s)", r->signal,
             strsignal(r->signal));
  } else if (m.status == 0 && h->rc == 0) {
    r->outcome = TR_JIT_RUN_OK;
    r->kernel_ms = h->kernel_ms;
    for (int i = 0; i < nout; i++)
      if (out_bytes[i]) memcpy(out[i], rn->data + h->out_off[i], out_bytes[i]);
  } else if (m.status == 3 && h->rc != -12345) {
    r->outcome = TR_JIT_RUN_ERROR;
    r->code = h->rc;
    r->kernel_ms = h->kernel_ms;
    snprintf(r->msg, sizeof r->msg, "kernel gave up (code %d: %s)", r->code,
             r->code == 1 ? "out of memory" : r->code == 2 ? "while loop trip limit" : "error");
  } else {
    r->outcome = TR_JIT_RUN_CRASH;
    r->code = m.status;
    snprintf(r->msg, sizeof r->msg, "kernel process exited with status %d", r->code);
  }
  if (at > RUNNER_KEEP) madvise(rn->data + RUNNER_KEEP, page_round(at) - RUNNER_KEEP, MADV_REMOVE);
  pthread_mutex_unlock(&rn->lock);
  return TR_OK;
}
