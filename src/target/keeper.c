/* keeper.c - the small process between trench and an adapter, so that no
 * process an adapter starts outlives it. A process group is not enough: a
 * helper that calls setsid() (or a daemon that double-forks) leaves the
 * group, and when its parent dies it is re-parented to init, out of
 * trench's reach.
 *
 * The keeper is a child subreaper (prctl PR_SET_CHILD_SUBREAPER): every
 * orphan in the adapter's tree is re-parented to it, whatever session or
 * group it moved to. It forks and execs the adapter, then waits. When the
 * adapter ends, or trench asks (SIGTERM), or trench dies (the keeper's
 * parent-death signal is SIGTERM), it kills what remains of the tree, reaps
 * every zombie, and ends the way the adapter ended (same exit status, same
 * signal), so trench's verdicts read as before. When trench died (kill -9
 * cannot be handled), the keeper also removes trench's private folder. A
 * keeper killed outright (SIGKILL) takes the adapter with it (the
 * adapter's parent-death signal).
 *
 * The keeper is forked from a process that may have threads, and it never
 * execs: it may only make async-signal-safe calls (no malloc, no stdio),
 * so /proc is read with open, getdents64 and read. */
#include "target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t kp_stop; /* trench asked, or it died */

static void kp_on_term(int sig) { (void)sig; kp_stop = 1; }
static void kp_on_child(int sig) { (void)sig; }

static void kp_nap_ms(long ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

/* The parent pid in /proc/PID/stat ("PID (COMM) STATE PPID ..."; COMM may
 * hold blanks and parentheses, so the last ')' is searched); -1 when it
 * cannot be read. */
static long kp_ppid_of(const char *pid) {
  char path[64] = "/proc/", buf[512];
  size_t n = strlen(path), k = strlen(pid);
  if (n + k + 6 > sizeof path) return -1;
  memcpy(path + n, pid, k);
  memcpy(path + n + k, "/stat", 6);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t got = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (got <= 0) return -1;
  buf[got] = 0;
  char *p = strrchr(buf, ')');
  if (!p || p[1] != ' ' || !p[2] || p[3] != ' ') return -1;
  long v = 0;
  for (p += 4; *p >= '0' && *p <= '9'; p++) v = v * 10 + (*p - '0');
  return v;
}

/* SIGKILLs every process whose parent is the keeper; returns how many. */
static int kp_kill_children(pid_t self) {
  int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[8192];
  int n = 0;
  for (;;) {
    ssize_t got = getdents64(fd, buf, sizeof buf);
    if (got <= 0) break;
    for (ssize_t off = 0; off < got;) {
      struct dirent64 *e = (struct dirent64 *)(buf + off);
      off += e->d_reclen;
      if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
      long pid = 0;
      const char *c = e->d_name;
      for (; *c >= '0' && *c <= '9'; c++) pid = pid * 10 + (*c - '0');
      if (*c || pid == self) continue;
      if (kp_ppid_of(e->d_name) == (long)self && kill((pid_t)pid, SIGKILL) == 0) n++;
    }
  }
  close(fd);
  return n;
}

/* Kills the adapter's group and every descendant, reaping them all. Each
 * killed parent hands its children to the keeper, so rounds repeat until
 * the keeper has no child left (ECHILD). Bounded (about 5 s) in case /proc
 * cannot be read and a child outlives its group. */
static void kp_kill_all(pid_t self, pid_t adapter) {
  for (int round = 0; round < 5000; round++) {
    /* The adapter's group, even once the adapter is reaped: a group id is
     * not reused while the group has members. */
    kill(-adapter, SIGKILL);
    kp_kill_children(self);
    pid_t w;
    int reaped = 0;
    while ((w = waitpid(-1, NULL, WNOHANG)) > 0) reaped++;
    if (w < 0 && errno == ECHILD) return;
    if (!reaped) kp_nap_ms(1);
  }
}

/* Ends the keeper as the adapter ended (wait status st); SIGKILL when the
 * keeper was asked to stop. A signal death raises the same signal, with
 * core dumps off (the adapter's core, if any, was already written). */
static _Noreturn void kp_exit_like(int st, int asked) {
  if (asked || !(WIFEXITED(st) || WIFSIGNALED(st))) kill(getpid(), SIGKILL);
  if (WIFEXITED(st)) _exit(WEXITSTATUS(st));
  int sig = WTERMSIG(st);
  struct rlimit none = {0, 0};
  setrlimit(RLIMIT_CORE, &none);
  signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  sigprocmask(SIG_UNBLOCK, &one, NULL);
  kill(getpid(), sig);
  _exit(128 + sig); /* a signal whose default is to go on */
}

/* Removes trench's private folder with an rm child (walking a folder is
 * not async-signal-safe). */
static void kp_remove(char *dir) {
  pid_t c = fork();
  if (c == 0) {
    char *argv[] = {"rm", "-rf", "--", dir, NULL};
    char *envp[] = {NULL};
    execve("/bin/rm", argv, envp);
    _exit(127);
  }
  while (c > 0 && waitpid(c, NULL, 0) < 0 && errno == EINTR) {}
}

void tr_keeper_run(char **argv, int errfd, pid_t trench, char *tmp) {
  pid_t self = getpid();
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  sigset_t block, none;
  sigemptyset(&none);
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGCHLD);
  sigprocmask(SIG_SETMASK, &block, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = kp_on_term;
  sigaction(SIGTERM, &sa, NULL);
  sa.sa_handler = kp_on_child;
  sigaction(SIGCHLD, &sa, NULL);
  signal(SIGINT, SIG_IGN); /* trench ends the keeper itself (SIGTERM) */
  signal(SIGHUP, SIG_IGN);
  prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
  if (getppid() != trench) _exit(127); /* trench died before the line above */

  pid_t a = fork();
  if (a == 0) {
    /* The adapter: its own group (so one kill reaches the helpers it
     * keeps in it), default signals, and death with the keeper. */
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    signal(SIGTERM, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (getppid() != self) _exit(127);
    execv(argv[0], argv);
    int e = errno;
    if (write(errfd, &e, sizeof e) < 0) {}
    _exit(127);
  }
  if (a < 0) {
    int e = errno;
    if (write(errfd, &e, sizeof e) < 0) {}
    _exit(127);
  }
  setpgid(a, a); /* also here, so no kill can come before the child's own call */
  /* The keeper keeps no descriptor: trench must see EOF on the adapter's
   * stdout when the adapter is gone, and the keeper must not hold files
   * or pipes trench opened for other purposes. */
  if (close_range(0, ~0U, 0) != 0)
    for (int fd = 0; fd < 1024; fd++) close(fd);

  int st = 0, ended = 0;
  for (;;) {
    pid_t w;
    int ws;
    while ((w = waitpid(-1, &ws, WNOHANG)) > 0)
      if (w == a) {
        st = ws;
        ended = 1;
      }
    if (ended || kp_stop) break;
    if (w < 0 && errno == ECHILD) break; /* cannot happen: a is a child */
    sigsuspend(&none);
  }
  kp_kill_all(self, a);
  if (getppid() != trench && tmp) kp_remove(tmp); /* trench is gone */
  kp_exit_like(st, !ended);
}
