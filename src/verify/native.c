/* native.c - runs a C kernel natively for trench verify's concrete
 * confirmation and for random differential testing: clang builds it into
 * a shared object, a forked child maps every buffer against an
 * inaccessible guard page (after its end, or before its start), loads the
 * object, calls kernel(...) and dies of a signal on an out-of-bounds
 * access; outputs come back through shared memory. */
#include "vk.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

char **vk_env(const char *dir) {
  int n = 0;
  while (environ[n]) n++;
  char **env = tr_xcalloc((size_t)n + 2, sizeof *env);
  int k = 0;
  for (int i = 0; i < n; i++)
    if (strncmp(environ[i], "TMPDIR=", 7) != 0) env[k++] = tr_xstrdup(environ[i]);
  size_t len = strlen(dir) + 8;
  env[k] = tr_xmalloc(len);
  snprintf(env[k], len, "TMPDIR=%s", dir);
  return env;
}

void vk_env_free(char **env) {
  for (int i = 0; env && env[i]; i++) tr_free(env[i]);
  tr_free(env);
}

tr_status vk_native_build(const char *src, const char *so_path, const char *cflags, tr_diag *d) {
  char *argv[48];
  int n = 0;
  argv[n++] = "clang-14"; argv[n++] = "-x"; argv[n++] = "c"; argv[n++] = "-std=c11";
  argv[n++] = "-O1"; argv[n++] = "-fPIC"; argv[n++] = "-shared"; argv[n++] = "-ffp-contract=off";
  char *flags = cflags ? strdup(cflags) : NULL;
  if (flags)
    for (char *t = strtok(flags, " "); t && n < 40; t = strtok(NULL, " ")) argv[n++] = t;
  argv[n++] = (char *)src; argv[n++] = "-o"; argv[n++] = (char *)so_path; argv[n++] = "-lm";
  argv[n] = NULL;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", so_path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = 0;
  else snprintf(dir, sizeof dir, ".");
  char **env = vk_env(dir);
  pid_t p = fork();
  if (p < 0) { tr_free(flags); vk_env_free(env); tr_diag_errorf(d, "native: fork failed"); return TR_ERR_IO; }
  if (p == 0) {
    if (!freopen("/dev/null", "w", stderr)) _exit(126);
    execvpe(argv[0], argv, env);
    _exit(127);
  }
  int st;
  while (waitpid(p, &st, 0) < 0 && errno == EINTR) {}
  tr_free(flags);
  vk_env_free(env);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    tr_diag_errorf(d, "native: clang-14 could not build %s", src);
    return TR_ERR_INVALID;
  }
  return TR_OK;
}

typedef void (*kfn)(void);

static void call_kernel(void *sym, void **a, int n) {
  /* dlsym gives an object pointer; POSIX guarantees the conversion */
  void (*f)(void);
  memcpy(&f, &sym, sizeof f);
  switch (n) {
  case 1: ((void (*)(void *))f)(a[0]); break;
  case 2: ((void (*)(void *, void *))f)(a[0], a[1]); break;
  case 3: ((void (*)(void *, void *, void *))f)(a[0], a[1], a[2]); break;
  case 4: ((void (*)(void *, void *, void *, void *))f)(a[0], a[1], a[2], a[3]); break;
  case 5: ((void (*)(void *, void *, void *, void *, void *))f)(a[0], a[1], a[2], a[3], a[4]); break;
  case 6: ((void (*)(void *, void *, void *, void *, void *, void *))f)(a[0], a[1], a[2], a[3], a[4], a[5]); break;
  case 7: ((void (*)(void *, void *, void *, void *, void *, void *, void *))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6]); break;
  default: ((void (*)(void *, void *, void *, void *, void *, void *, void *, void *))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]); break;
  }
}

int vk_native_run(const char *so_path, tr_tensor **bufs, int n, int guard, double timeout_s, tr_diag *d) {
  if (n < 1 || n > 8) { tr_diag_errorf(d, "native: kernels take 1 to 8 buffers (%d)", n); return -1; }
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  /* shared copies the child writes into */
  void *sh[8];
  for (int i = 0; i < n; i++) {
    sh[i] = mmap(NULL, bufs[i]->nbytes + 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh[i] == MAP_FAILED) { tr_diag_errorf(d, "native: mmap failed"); return -1; }
    memcpy(sh[i], bufs[i]->data, bufs[i]->nbytes);
  }
  fflush(NULL);
  pid_t p = fork();
  if (p < 0) { tr_diag_errorf(d, "native: fork failed"); return -1; }
  if (p == 0) {
    /* die of the signal itself: a sanitizer's handler would turn an
     * out-of-bounds access into an ordinary exit */
    signal(SIGSEGV, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
    alarm((unsigned)(timeout_s + 1));
    void *args[8];
    for (int i = 0; i < n; i++) {
      size_t nb = bufs[i]->nbytes, span = (nb + pg - 1) / pg * pg;
      if (span == 0) span = pg;
      unsigned char *m = mmap(NULL, span + 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) _exit(120);
      mprotect(m, pg, PROT_NONE);
      mprotect(m + pg + span, pg, PROT_NONE);
      unsigned char *b = guard >= 0 ? m + pg + span - nb : m + pg;
      memcpy(b, sh[i], nb);
      args[i] = b;
    }
    void *h = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
    if (!h) _exit(121);
    void *f = dlsym(h, "kernel");
    if (!f) _exit(122);
    call_kernel(f, args, n);
    for (int i = 0; i < n; i++) memcpy(sh[i], args[i], bufs[i]->nbytes);
    _exit(0);
  }
  int st;
  while (waitpid(p, &st, 0) < 0)
    if (errno != EINTR) { tr_diag_errorf(d, "native: wait failed"); return -1; }
  int rc;
  if (WIFSIGNALED(st)) rc = WTERMSIG(st);
  else if (WEXITSTATUS(st) == 0) rc = 0;
  else {
    tr_diag_errorf(d, "native: the kernel could not be loaded (child exit %d)", WEXITSTATUS(st));
    rc = -1;
  }
  for (int i = 0; i < n; i++) {
    if (rc == 0) memcpy(bufs[i]->data, sh[i], bufs[i]->nbytes);
    munmap(sh[i], bufs[i]->nbytes + 1);
  }
  return rc;
}
