/* proc.c - the cmd:PROGRAM target: a persistent child process speaking the
 * process protocol (docs/PROTOCOL.md). One JSON request per line on its
 * stdin, one JSON reply per line on its stdout, tensors as .npy files in a
 * private folder. A child that dies, stalls or talks nonsense becomes a
 * verdict (crash / hang / protocol_error); it is killed and started again
 * on the next request, so a campaign goes on.
 *
 * SIGPIPE: the child's stdin is one end of a socketpair, not a pipe, so
 * every write is a send(..., MSG_NOSIGNAL) that fails with EPIPE instead
 * of raising SIGPIPE. This needs no process-wide signal disposition (a
 * library must not change one) and no per-thread mask juggling. */
#include "target.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROTOCOL_VERSION 1
#define ERR_TAIL (64 * 1024)          /* stderr bytes kept */
#define MAX_LINE (16 * 1024 * 1024)   /* a reply longer than this is garbage */
#define EXIT_GRACE_S 2.0              /* shutdown / EOF before SIGTERM */
#define KEEPER_GRACE_S 2.0            /* SIGTERM to the keeper before SIGKILL */
#define MAX_START_FAILS 2             /* failed restarts in a row before the
                                         target is given up */
#define REPLY_SLACK ((size_t)1 << 20) /* .npy header and slack over the
                                         output's data bytes */

typedef struct {
  char **argv;          /* program (resolved path) and arguments */
  int argc;
  tr_target_config cfg; /* timeouts */
  char *tmp;            /* private folder (mkdtemp), removed at close */
  pid_t pid;            /* running child, -1 when none */
  int fd_in, fd_out, fd_err; /* our ends; -1 when closed */
  tr_buf obuf;          /* stdout bytes not yet consumed as lines */
  char *err;            /* last ERR_TAIL bytes of the child's stderr */
  size_t nerr;          /* bytes in err */
  uint64_t err_total;   /* stderr bytes ever read from this child */
  long next_id;         /* request id */
  long nreq;            /* request folders made */
  int nstarts;          /* children started (restarts + 1) */
  char *exit_why;       /* how the last child ended ("exited with 3") */
  int start_fails;      /* starts in a row that failed (spawn or hello) */
  char *given_up;       /* after MAX_START_FAILS: why, and no more starts */
} proc;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int ms_left(double deadline) {
  double left = deadline - now_s();
  if (left <= 0) return 0;
  if (left > 1e6) return 1000000000;
  return (int)(left * 1000.0) + 1;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static char *xstrdup_or_null(const char *s) { return s ? tr_xstrdup(s) : NULL; }

/* ---- command line ---- */

/* Splits a command line on blanks; '...' and "..." group words (no
 * escapes inside single quotes; \" and \\ inside double quotes). */
static tr_status split_words(const char *s, char ***argv, int *argc,
                             tr_diag *d) {
  char **v = NULL;
  int n = 0, cap = 0;
  tr_buf w = {0};
  const char *p = s;
  for (;;) {
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) break;
    bool any = false;
    while (*p && *p != ' ' && *p != '\t') {
      if (*p == '\'' || *p == '"') {
        char q = *p++;
        while (*p && *p != q) {
          if (q == '"' && *p == '\\' && (p[1] == '"' || p[1] == '\\')) p++;
          tr_buf_putc(&w, *p++);
        }
        if (!*p) {
          tr_diag_errorf(d, "cmd: unterminated %c quote in '%s'", q, s);
          tr_buf_free(&w);
          for (int i = 0; i < n; i++) tr_free(v[i]);
          tr_free(v);
          return TR_ERR_USAGE;
        }
        p++;
        any = true;
      } else {
        tr_buf_putc(&w, *p++);
        any = true;
      }
    }
    if (any) {
      if (n + 2 > cap) {
        cap = cap ? cap * 2 : 8;
        v = tr_xrealloc(v, sizeof *v * (size_t)cap);
      }
      v[n++] = tr_xstrdup(tr_buf_str(&w));
      w.n = 0;
      if (w.p) w.p[0] = 0;
    }
  }
  tr_buf_free(&w);
  if (n == 0) {
    tr_free(v);
    tr_diag_errorf(d, "cmd: no program given (cmd:PROGRAM [ARGS...])");
    return TR_ERR_USAGE;
  }
  v[n] = NULL;
  *argv = v;
  *argc = n;
  return TR_OK;
}

/* Resolves argv[0] on $PATH in the parent, so the child only needs the
 * async-signal-safe execv between fork and exec. */
static char *resolve_program(const char *prog) {
  if (strchr(prog, '/')) return tr_xstrdup(prog);
  const char *path = getenv("PATH");
  if (!path) path = "/usr/local/bin:/usr/bin:/bin";
  tr_buf b = {0};
  for (const char *p = path;;) {
    const char *e = strchr(p, ':');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    b.n = 0;
    if (n == 0) tr_buf_puts(&b, ".");
    else tr_buf_putn(&b, p, n);
    tr_buf_printf(&b, "/%s", prog);
    struct stat st;
    if (stat(b.p, &st) == 0 && S_ISREG(st.st_mode) && access(b.p, X_OK) == 0) {
      char *r = tr_xstrdup(b.p);
      tr_buf_free(&b);
      return r;
    }
    if (!e) break;
    p = e + 1;
  }
  tr_buf_free(&b);
  return NULL;
}

/* ---- the child ---- */

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

static void describe_status(proc *p, int st) {
  tr_buf b = {0};
  if (WIFEXITED(st))
    tr_buf_printf(&b, "exited with status %d", WEXITSTATUS(st));
  else if (WIFSIGNALED(st))
    tr_buf_printf(&b, "killed by signal %d (%s)", WTERMSIG(st),
                  strsignal(WTERMSIG(st)));
  else
    tr_buf_printf(&b, "ended with wait status 0x%x", (unsigned)st);
  tr_free(p->exit_why);
  p->exit_why = tr_xstrdup(tr_buf_str(&b));
  tr_heap_keep(p->exit_why); /* p's, not a run's heap frame's */
  tr_buf_free(&b);
}

/* Appends to the stderr tail, dropping the oldest bytes past ERR_TAIL. */
static void err_append(proc *p, const char *s, size_t n) {
  p->err_total += n;
  for (size_t off = 0; off < n;) { /* in slices, so ERR_TAIL bounds each */
    size_t k = n - off < ERR_TAIL / 2 ? n - off : ERR_TAIL / 2;
    if (p->nerr + k > ERR_TAIL) {
      size_t drop = p->nerr + k - ERR_TAIL;
      memmove(p->err, p->err + drop, p->nerr - drop);
      p->nerr -= drop;
    }
    memcpy(p->err + p->nerr, s + off, k);
    p->nerr += k;
    off += k;
  }
}

/* Reads what stderr has now; closes it at EOF. */
static void drain_err(proc *p) {
  char buf[8192];
  while (p->fd_err >= 0) {
    ssize_t k = read(p->fd_err, buf, sizeof buf);
    if (k > 0) {
      err_append(p, buf, (size_t)k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    close_fd(&p->fd_err); /* EOF or a real error */
  }
}

/* Reaps the child (the keeper, keeper.c), waiting up to grace seconds for
 * it to exit; then asks the keeper to stop (SIGTERM: it kills the adapter
 * and everything the adapter started, and reaps them), and SIGKILLs it if
 * it has not within KEEPER_GRACE_S. Records how it ended. */
static void reap(proc *p, double grace) {
  if (p->pid < 0) return;
  bool gone = false; /* reaped by someone else (SIGCHLD ignored) */
  bool exited = false;
  for (int round = 0; round < 2 && !exited && !gone; round++) {
    double deadline = now_s() + (round == 0 ? grace : KEEPER_GRACE_S);
    if (round == 1) kill(p->pid, SIGTERM);
    for (;;) {
      siginfo_t si;
      memset(&si, 0, sizeof si);
      int w = waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT);
      if (w == 0 && si.si_pid == p->pid) { /* exited; still a zombie */
        exited = true;
        break;
      }
      if (w < 0 && errno != EINTR) {
        gone = true;
        break;
      }
      if (now_s() >= deadline) break;
      sleep_ms(5);
    }
  }
  int st = 0;
  pid_t r = -1;
  if (!gone) {
    if (!exited) kill(p->pid, SIGKILL); /* the adapter dies with it */
    while ((r = waitpid(p->pid, &st, 0)) < 0 && errno == EINTR) {}
  }
  if (r == p->pid) {
    describe_status(p, st);
  } else {
    tr_free(p->exit_why);
    p->exit_why = tr_xstrdup("ended (exit status unknown)");
    tr_heap_keep(p->exit_why);
  }
  p->pid = -1;
  if (p->cfg.guard) p->cfg.guard->pid = 0;
  close_fd(&p->fd_in);
  close_fd(&p->fd_out);
  drain_err(p);
  close_fd(&p->fd_err);
  p->obuf.n = 0;
}

static void set_nonblock(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* dup2 for the child; a descriptor already in place only loses CLOEXEC
 * (when trench itself runs with 0, 1 or 2 closed). */
static int move_fd(int from, int to) {
  if (from == to) return fcntl(to, F_SETFD, 0);
  return dup2(from, to);
}

/* Starts the child. Returns TR_ERR_IO when it cannot be started at all
 * (no such program, exec failure, out of descriptors). */
static tr_status spawn(proc *p, tr_diag *d) {
  int sv[2] = {-1, -1}, op[2] = {-1, -1}, ep[2] = {-1, -1}, xp[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 ||
      pipe2(op, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0 ||
      pipe2(xp, O_CLOEXEC) < 0) {
    tr_diag_errorf(d, "cmd: cannot create pipes: %s", strerror(errno));
    for (int i = 0; i < 2; i++) {
      if (sv[i] >= 0) close(sv[i]);
      if (op[i] >= 0) close(op[i]);
      if (ep[i] >= 0) close(ep[i]);
      if (xp[i] >= 0) close(xp[i]);
    }
    return TR_ERR_IO;
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    tr_diag_errorf(d, "cmd: fork: %s", strerror(errno));
    close(sv[0]); close(sv[1]); close(op[0]); close(op[1]);
    close(ep[0]); close(ep[1]); close(xp[0]); close(xp[1]);
    return TR_ERR_IO;
  }
  if (pid == 0) {
    /* Child: async-signal-safe calls only. It becomes the keeper
     * (keeper.c), in its own process group (a terminal's Ctrl-C reaches
     * trench, not the target mid-request), which runs the adapter. */
    signal(SIGPIPE, SIG_DFL);
    setpgid(0, 0);
    if (move_fd(sv[1], 0) < 0 || move_fd(op[1], 1) < 0 ||
        move_fd(ep[1], 2) < 0) {
      int e = errno;
      if (write(xp[1], &e, sizeof e) < 0) {}
      _exit(127);
    }
    tr_keeper_run(p->argv, xp[1], parent, p->tmp);
  }
  close(sv[1]);
  close(op[1]);
  close(ep[1]);
  close(xp[1]);
  /* The adapter's exec closes xp[1] (CLOEXEC), the keeper closes its own
   * copy: EOF means it ran; 4 bytes mean errno. */
  int e = 0;
  ssize_t k;
  while ((k = read(xp[0], &e, sizeof e)) < 0 && errno == EINTR) {}
  close(xp[0]);
  if (k == (ssize_t)sizeof e) {
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    close(sv[0]);
    close(op[0]);
    close(ep[0]);
    tr_diag_errorf(d, "cmd: cannot run '%s': %s", p->argv[0], strerror(e));
    return TR_ERR_IO;
  }
  p->pid = pid;
  if (p->cfg.guard) p->cfg.guard->pid = (sig_atomic_t)pid;
  p->fd_in = sv[0];
  p->fd_out = op[0];
  p->fd_err = ep[0];
  set_nonblock(p->fd_in);
  set_nonblock(p->fd_out);
  set_nonblock(p->fd_err);
  /* We only write to the socket; the child's replies come on the pipe. */
  shutdown(p->fd_in, SHUT_RD);
  p->obuf.n = 0;
  p->nerr = 0;
  p->err_total = 0;
  p->nstarts++;
  return TR_OK;
}

/* ---- one exchange ---- */

typedef enum {
  IO_OK,      /* done */
  IO_EOF,     /* child closed stdout / stdin (it died or quit) */
  IO_TIMEOUT, /* deadline passed */
  IO_TOOLONG  /* reply line past MAX_LINE */
} io_result;

static io_result send_all(proc *p, const char *s, size_t n, double deadline) {
  size_t off = 0;
  while (off < n) {
    ssize_t k = send(p->fd_in, s + off, n - off, MSG_NOSIGNAL);
    if (k > 0) {
      off += (size_t)k;
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      struct pollfd f[2] = {{p->fd_in, POLLOUT, 0}, {p->fd_err, POLLIN, 0}};
      int nf = p->fd_err >= 0 ? 2 : 1;
      int r = poll(f, (nfds_t)nf, ms_left(deadline));
      if (r == 0) return IO_TIMEOUT;
      if (nf == 2 && f[1].revents) drain_err(p);
      continue;
    }
    return IO_EOF; /* EPIPE, ECONNRESET: the child is gone */
  }
  return IO_OK;
}

/* Reads stdout until a whole line is buffered; *len gets its length
 * (without '\n'). Drains stderr meanwhile so a chatty child never blocks. */
static io_result read_line(proc *p, double deadline, size_t *len) {
  size_t scanned = 0;
  for (;;) {
    char *nl = p->obuf.n > scanned ? memchr(p->obuf.p + scanned, '\n',
                                            p->obuf.n - scanned) : NULL;
    if (nl) {
      *len = (size_t)(nl - p->obuf.p);
      return IO_OK;
    }
    scanned = p->obuf.n;
    if (p->obuf.n > MAX_LINE) return IO_TOOLONG;
    if (p->fd_out < 0) return IO_EOF;
    struct pollfd f[2] = {{p->fd_out, POLLIN, 0}, {p->fd_err, POLLIN, 0}};
    int nf = p->fd_err >= 0 ? 2 : 1;
    int ms = ms_left(deadline);
    if (ms == 0) return IO_TIMEOUT;
    /* Wakes every 200 ms to see whether the child is still there: a
     * helper it started (one that left the process group with setsid)
     * may hold stdout open after the child died, so no EOF would come. */
    int r = poll(f, (nfds_t)nf, ms < 200 ? ms : 200);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      siginfo_t si;
      memset(&si, 0, sizeof si);
      if (waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == p->pid) {
        struct pollfd last = {p->fd_out, POLLIN, 0}; /* what it wrote before it went */
        if (poll(&last, 1, 0) > 0 && (last.revents & POLLIN)) continue;
        return IO_EOF;
      }
      continue;
    }
    if (nf == 2 && f[1].revents) drain_err(p);
    if (f[0].revents) {
      char buf[65536];
      ssize_t k = read(p->fd_out, buf, sizeof buf);
      if (k > 0) {
        tr_buf_putn(&p->obuf, buf, (size_t)k);
        tr_heap_keep(p->obuf.p); /* p's, not a run's heap frame's */
      }
      else if (k == 0 || (errno != EINTR && errno != EAGAIN)) {
        close_fd(&p->fd_out);
        return IO_EOF;
      }
    }
  }
}

/* Drops the first line (and its '\n') from obuf. */
static void consume_line(proc *p, size_t len) {
  size_t n = len + 1;
  memmove(p->obuf.p, p->obuf.p + n, p->obuf.n - n);
  p->obuf.n -= n;
  p->obuf.p[p->obuf.n] = 0;
}

typedef struct {
  tr_verdict verdict; /* OK: reply holds a parsed object with our id */
  cJSON *reply;       /* the reply object (OK only) */
  char *why;          /* for non-OK */
} exchange;

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...) {
  tr_buf b = {0};
  va_list ap;
  va_start(ap, f);
  tr_buf_vprintf(&b, f, ap);
  va_end(ap);
  char *s = tr_xstrdup(tr_buf_str(&b));
  tr_buf_free(&b);
  return s;
}

/* Kills the child after a failed exchange, and phrases why. */
static char *fail_child(proc *p, io_result io, const char *what,
                        double timeout, tr_verdict *v) {
  char *why;
  if (io == IO_TIMEOUT) {
    *v = TR_VERDICT_HANG;
    reap(p, 0); /* straight to SIGKILL */
    why = fmt("no reply to '%s' within %.3g s; killed (%s)", what, timeout,
              p->exit_why ? p->exit_why : "?");
  } else if (io == IO_TOOLONG) {
    *v = TR_VERDICT_PROTOCOL_ERROR;
    reap(p, 0);
    why = fmt("reply to '%s' has no newline within %d bytes; killed", what,
              MAX_LINE);
  } else {
    *v = TR_VERDICT_CRASH;
    /* Read stderr to its end (the dying words), then reap. */
    double dl = now_s() + EXIT_GRACE_S;
    while (p->fd_err >= 0 && now_s() < dl) {
      struct pollfd f = {p->fd_err, POLLIN, 0};
      if (poll(&f, 1, ms_left(dl)) <= 0) break;
      drain_err(p);
    }
    reap(p, EXIT_GRACE_S);
    why = fmt("the target %s during '%s'", p->exit_why ? p->exit_why : "died",
              what);
  }
  return why;
}

/* Sends req (id added here) and waits for the matching reply. */
static exchange talk(proc *p, cJSON *req, const char *what, double timeout) {
  exchange x = {TR_VERDICT_OK, NULL, NULL};
  double deadline = now_s() + timeout;
  long id = p->next_id++;
  cJSON_AddNumberToObject(req, "id", (double)id);
  char *line = cJSON_PrintUnformatted(req);
  if (!line) tr_heap_raise(0); /* cJSON's allocations failed */
  size_t n = strlen(line);
  line = tr_xrealloc(line, n + 2);
  line[n] = '\n';
  line[n + 1] = 0;
  io_result io = send_all(p, line, n + 1, deadline);
  tr_free(line);
  size_t len = 0;
  if (io == IO_OK) io = read_line(p, deadline, &len);
  if (io != IO_OK) {
    x.why = fail_child(p, io, what, timeout, &x.verdict);
    return x;
  }
  cJSON *rep = cJSON_ParseWithLength(p->obuf.p, len);
  char head[120];
  size_t hn = len < sizeof head - 1 ? len : sizeof head - 1;
  memcpy(head, p->obuf.p, hn);
  head[hn] = 0;
  consume_line(p, len);
  cJSON *jid = rep ? cJSON_GetObjectItemCaseSensitive(rep, "id") : NULL;
  if (!rep || !cJSON_IsObject(rep)) {
    x.why = fmt("reply to '%s' is not a JSON object: '%s%s'", what, head,
                len > hn ? "..." : "");
  } else if (!cJSON_IsNumber(jid) || jid->valuedouble != (double)id) {
    x.why = fmt("reply to '%s' has id %s, expected %ld", what,
                cJSON_IsNumber(jid) ? "another" : "none", id);
  } else if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(rep, "status"))) {
    x.why = fmt("reply to '%s' has no \"status\" string", what);
  } else {
    x.reply = rep;
    return x;
  }
  cJSON_Delete(rep);
  x.verdict = TR_VERDICT_PROTOCOL_ERROR;
  reap(p, 0);
  return x;
}

static const char *jstr(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double jnum(const cJSON *o, const char *k, double def) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : def;
}

/* hello: checks the protocol version and reads the target's identity. */
static exchange hello(tr_target *t, proc *p) {
  cJSON *req = cJSON_CreateObject();
  cJSON_AddStringToObject(req, "op", "hello");
  cJSON_AddNumberToObject(req, "protocol", PROTOCOL_VERSION);
  exchange x = talk(p, req, "hello", p->cfg.start_timeout_s);
  cJSON_Delete(req);
  if (x.verdict != TR_VERDICT_OK) return x;
  const char *st = jstr(x.reply, "status");
  double ver = jnum(x.reply, "protocol", -1);
  if (strcmp(st, "ok") != 0 || ver != PROTOCOL_VERSION) {
    x.why = strcmp(st, "ok") != 0
                ? fmt("hello failed: %s: %s", st,
                      jstr(x.reply, "message") ? jstr(x.reply, "message") : "")
                : fmt("the target speaks protocol %g, trench speaks %d", ver,
                      PROTOCOL_VERSION);
    x.verdict = TR_VERDICT_PROTOCOL_ERROR;
    cJSON_Delete(x.reply);
    x.reply = NULL;
    reap(p, 0);
    return x;
  }
  tr_free(t->name);
  tr_free(t->version);
  t->name = xstrdup_or_null(jstr(x.reply, "name"));
  t->version = xstrdup_or_null(jstr(x.reply, "version"));
  tr_heap_keep(t->name); /* the target's, not a run's heap frame's */
  tr_heap_keep(t->version);
  t->caps = 0;
  const cJSON *caps = cJSON_GetObjectItemCaseSensitive(x.reply, "capabilities");
  const cJSON *c;
  cJSON_ArrayForEach(c, caps) {
    if (!cJSON_IsString(c)) continue;
    if (!strcmp(c->valuestring, "optimized_hlo")) t->caps |= TR_CAP_OPTIMIZED_HLO;
    if (!strcmp(c->valuestring, "disable_passes")) t->caps |= TR_CAP_DISABLE_PASSES;
    if (!strcmp(c->valuestring, "list_passes")) t->caps |= TR_CAP_LIST_PASSES;
    if (!strcmp(c->valuestring, "timings")) t->caps |= TR_CAP_TIMINGS;
    if (!strcmp(c->valuestring, "received_hlo")) t->caps |= TR_CAP_RECEIVED_HLO;
    if (!strcmp(c->valuestring, "mlir")) t->caps |= TR_CAP_MLIR;
    if (!strcmp(c->valuestring, "pass_dumps")) t->caps |= TR_CAP_PASS_DUMPS;
  }
  return x;
}

/* Starts the child when none runs (first use, or after a kill). */
static tr_status ensure_child(tr_target *t, proc *p, exchange *x,
                              tr_diag *d) {
  x->verdict = TR_VERDICT_OK;
  x->reply = NULL;
  x->why = NULL;
  if (p->pid >= 0) return TR_OK;
  if (p->given_up) {
    x->verdict = TR_VERDICT_UNSUPPORTED;
    x->why = fmt("not run: %s", p->given_up);
    return TR_OK;
  }
  tr_status s = spawn(p, d);
  if (s != TR_OK) return s;
  *x = hello(t, p);
  cJSON_Delete(x->reply);
  x->reply = NULL;
  /* A target that cannot start twice in a row is given up: its failure
   * is reported once (this verdict), later requests are declined at once
   * instead of each waiting out a start timeout. */
  if (x->verdict != TR_VERDICT_OK && ++p->start_fails >= MAX_START_FAILS && p->nstarts > 1) {
    p->given_up = fmt("the target failed to start %d times in a row (last: %s); it is given up", p->start_fails,
                      x->why ? x->why : "?");
    tr_heap_keep(p->given_up);
  }
  else if (x->verdict == TR_VERDICT_OK) {
    p->start_fails = 0;
  }
  return TR_OK;
}

/* ---- files ---- */

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw) {
  (void)st; (void)flag; (void)ftw;
  remove(path);
  return 0;
}

static void rm_tree(const char *path) {
  nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static char *read_text(const char *path, char **err) {
  tr_diag d = {0};
  char *s = NULL;
  size_t n;
  if (tr_read_file(path, &s, &n, &d) != TR_OK) {
    *err = tr_xstrdup(tr_diag_first(&d) ? tr_diag_first(&d) : path);
    s = NULL;
  }
  tr_diag_clear(&d);
  return s;
}

/* Copies the stderr tail: everything kept, or only what the current
 * request wrote (since byte 'since'). */
static char *err_tail(const proc *p, uint64_t since) {
  size_t n = p->nerr;
  if (p->err_total - since < n) n = (size_t)(p->err_total - since);
  if (n == 0) return NULL;
  char *s = tr_xmalloc(n + 1);
  memcpy(s, p->err + (p->nerr - n), n);
  s[n] = 0;
  return s;
}

static bool dims_match(const tr_shape *s, const tr_tensor *t) {
  if (s->rank != t->rank) return false;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] >= 0 && !(s->dynamic && s->dynamic[i]) &&
        s->dims[i] != t->dims[i])
      return false;
  return true;
}

/* Why a path named in a reply may not be read, or NULL when it may: it
 * must be a regular file inside the request's folder (symbolic links
 * resolved) of at most max bytes. Anything else (/dev/zero, a FIFO, a file
 * elsewhere) is a protocol error and is never opened, so a target cannot
 * make trench block or read without bound. The read itself opens without
 * blocking and checks again (tr_read_file_max): a file swapped in between
 * is caught there. */
static char *reply_path_problem(const char *dir, const char *path, size_t max) {
  char *rdir = realpath(dir, NULL), *rp = realpath(path, NULL), *why = NULL;
  struct stat st;
  size_t dl = rdir ? strlen(rdir) : 0;
  if (!rdir) why = fmt("the request folder %s is gone", dir);
  else if (!rp) why = fmt("'%s': %s", path, strerror(errno));
  else if (strncmp(rp, rdir, dl) != 0 || rp[dl] != '/')
    why = fmt("'%s' is outside the request's folder %s", path, dir);
  else if (stat(rp, &st) != 0 || !S_ISREG(st.st_mode))
    why = fmt("'%s' is not a regular file", path);
  else if ((uint64_t)st.st_size > max)
    why = fmt("'%s' has %lld bytes, more than the %zu its output can take", path, (long long)st.st_size, max);
  tr_free(rdir);
  tr_free(rp);
  return why;
}

/* Bytes the .npy file of leaf s may have: its data and REPLY_SLACK. */
static size_t npy_cap(const tr_shape *s) {
  int64_t n = tr_shape_count(s);
  if (n < 0) return TR_READ_MAX;
  double b = (double)n * tr_dtype_size(s->dtype) + (double)REPLY_SLACK;
  return b > (double)TR_READ_MAX ? TR_READ_MAX : (size_t)b;
}

/* Reads the reply of a successful run into r; a bad output list is a
 * protocol error (message in r). */
static void take_outputs(const tr_module *m, const char *dir, const cJSON *rep,
                         tr_run_result *r) {
  const tr_shape *root = m->entry->root->shape;
  int nleaves = tr_shape_leaves(root, NULL, 0);
  const tr_shape **leaves = tr_xcalloc((size_t)(nleaves + 1), sizeof *leaves);
  tr_shape_leaves(root, leaves, nleaves);
  const cJSON *outs = cJSON_GetObjectItemCaseSensitive(rep, "outputs");
  int n = cJSON_IsArray(outs) ? cJSON_GetArraySize(outs) : -1;
  if (n != nleaves) {
    r->verdict = TR_VERDICT_PROTOCOL_ERROR;
    tr_free(r->message);
    r->message = n < 0 ? fmt("reply has no \"outputs\" list")
                       : fmt("reply names %d outputs, the module's root has %d "
                             "array leaves", n, nleaves);
    tr_free(leaves);
    return;
  }
  r->outputs = tr_xcalloc((size_t)(n + 1), sizeof *r->outputs);
  for (int i = 0; i < n; i++) {
    const cJSON *o = cJSON_GetArrayItem(outs, i);
    tr_diag d = {0};
    tr_tensor *tt = NULL;
    char *msg = NULL;
    char *bad_path = NULL;
    if (!cJSON_IsString(o)) {
      msg = fmt("output %d is not a path string", i);
    } else if ((bad_path = reply_path_problem(dir, o->valuestring, npy_cap(leaves[i])))) {
      msg = fmt("output %d: %s", i, bad_path);
      tr_free(bad_path);
    } else if (tr_npy_read(o->valuestring, leaves[i]->dtype, &tt, &d) != TR_OK) {
      msg = fmt("output %d: %s", i, tr_diag_first(&d));
    } else if (!dims_match(leaves[i], tt)) {
      tr_buf a = {0}, b = {0};
      tr_tensor_print_type(&a, tt);
      tr_shape_print(&b, leaves[i], false);
      msg = fmt("output %d is %s, the module's root gives %s", i,
                       tr_buf_str(&a), tr_buf_str(&b));
      tr_buf_free(&a);
      tr_buf_free(&b);
      tr_tensor_free(tt);
      tt = NULL;
    }
    tr_diag_clear(&d);
    if (!tt) {
      r->verdict = TR_VERDICT_PROTOCOL_ERROR;
      tr_free(r->message);
      r->message = msg;
      break;
    }
    r->outputs[r->noutputs++] = tt;
  }
  tr_free(leaves);
  if (r->verdict != TR_VERDICT_OK) {
    for (int i = 0; i < r->noutputs; i++) tr_tensor_free(r->outputs[i]);
    tr_free(r->outputs);
    r->outputs = NULL;
    r->noutputs = 0;
  }
}

/* Reads the text file a reply names under key into *out; a name that
 * cannot be read is a protocol error. */
static void read_hlo_file(const char *dir, const cJSON *rep, const char *key, char **out,
                          tr_run_result *r) {
  const char *path = jstr(rep, key);
  if (r->verdict != TR_VERDICT_OK || !path) return;
  char *err = reply_path_problem(dir, path, TR_READ_MAX);
  if (!err) *out = read_text(path, &err);
  if (!*out) {
    r->verdict = TR_VERDICT_PROTOCOL_ERROR;
    tr_free(r->message);
    r->message = fmt("%s: %s", key, err);
  }
  tr_free(err);
}

/* Writes the module and the inputs into a fresh request folder. */
static tr_status write_request_files(proc *p, const tr_module *m, const char *source,
                                     tr_tensor *const *inputs, int ninputs,
                                     tr_buf *dir, cJSON *req, tr_diag *d) {
  tr_buf path = {0};
  tr_status s = TR_OK;
  tr_buf_printf(dir, "%s/r%ld", p->tmp, p->nreq++);
  /* The private folder may have been removed under trench (by the
   * target, or a cleaner of /tmp): made again, with the same name. */
  int made = mkdir(dir->p, 0700);
  if (made < 0 && errno == ENOENT && mkdir(p->tmp, 0700) == 0) made = mkdir(dir->p, 0700);
  if (made < 0) {
    tr_diag_errorf(d, "cmd: cannot create %s: %s", dir->p, strerror(errno));
    return TR_ERR_IO;
  }
  /* The module as trench prints it, or the text it came from verbatim
   * (StableHLO the target compiles as it is). */
  tr_buf text = {0};
  if (source) tr_buf_puts(&text, source);
  else tr_print_module(&text, m);
  tr_buf_printf(&path, "%s/%s", dir->p, source ? "module.mlir" : "module.hlo");
  FILE *f = fopen(path.p, "wb");
  if (!f || fwrite(text.p ? text.p : "", 1, text.n, f) != text.n ||
      fclose(f) != 0) {
    if (f) fclose(f);
    tr_diag_errorf(d, "cmd: cannot write %s", path.p);
    s = TR_ERR_IO;
  }
  tr_buf_free(&text);
  cJSON_AddStringToObject(req, "module", tr_buf_str(&path));
  cJSON *ins = cJSON_AddArrayToObject(req, "inputs");
  for (int i = 0; i < ninputs && s == TR_OK; i++) {
    path.n = 0;
    tr_buf_printf(&path, "%s/in%d.npy", dir->p, i);
    s = tr_npy_write(path.p, inputs[i], d);
    cJSON_AddItemToArray(ins, cJSON_CreateString(path.p));
  }
  path.n = 0;
  tr_buf_printf(&path, "%s/out", dir->p);
  if (s == TR_OK && mkdir(path.p, 0700) < 0) {
    tr_diag_errorf(d, "cmd: cannot create %s: %s", path.p, strerror(errno));
    s = TR_ERR_IO;
  }
  cJSON_AddStringToObject(req, "outdir", tr_buf_str(&path));
  tr_buf_free(&path);
  return s;
}

/* Checks that the inputs fit the entry parameters (a caller's mistake,
 * not the target's). */
static tr_status check_inputs(const tr_module *m, tr_tensor *const *inputs,
                              int ninputs, tr_diag *d) {
  if (!m->entry || !m->entry->root) {
    tr_diag_errorf(d, "cmd: the module has no entry computation");
    return TR_ERR_INVALID;
  }
  int k = 0;
  for (int i = 0; i < m->entry->nparams; i++) {
    const tr_shape *ps = m->entry->params[i] ? m->entry->params[i]->shape : NULL;
    int n = tr_shape_leaves(ps, NULL, 0);
    const tr_shape **lv = tr_xcalloc((size_t)(n + 1), sizeof *lv);
    tr_shape_leaves(ps, lv, n);
    for (int j = 0; j < n; j++, k++) {
      if (k >= ninputs) continue;
      if (inputs[k]->dtype != lv[j]->dtype || !dims_match(lv[j], inputs[k])) {
        tr_buf a = {0}, b = {0};
        tr_tensor_print_type(&a, inputs[k]);
        tr_shape_print(&b, lv[j], false);
        tr_diag_errorf(d, "input %d is %s, parameter %d wants %s", k,
                       tr_buf_str(&a), i, tr_buf_str(&b));
        tr_buf_free(&a);
        tr_buf_free(&b);
        tr_free(lv);
        return TR_ERR_INVALID;
      }
    }
    tr_free(lv);
  }
  if (k != ninputs) {
    tr_diag_errorf(d, "%d inputs given, the module's parameters have %d array "
                   "leaves", ninputs, k);
    return TR_ERR_INVALID;
  }
  return TR_OK;
}

/* When a run fails, whether trench's own temp space is what failed: the
 * private folder's file system has less room than the module's outputs
 * need. A target that cannot write its outputs there is not at fault (a
 * full TMPDIR must not become a crash finding). */
static bool tmp_too_full(const proc *p, const tr_module *m, uint64_t *avail, uint64_t *need) {
  struct statvfs sv;
  if (!p->tmp || statvfs(p->tmp, &sv) != 0) return false;
  *avail = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
  const tr_shape *root = m && m->entry && m->entry->root ? m->entry->root->shape : NULL;
  int n = tr_shape_leaves(root, NULL, 0);
  const tr_shape **lv = tr_xcalloc((size_t)n + 1, sizeof *lv);
  tr_shape_leaves(root, lv, n);
  *need = 64 * 1024;
  for (int i = 0; i < n; i++) {
    int64_t c = tr_shape_count(lv[i]);
    if (c > 0) *need += (uint64_t)c * (uint64_t)tr_dtype_size(lv[i]->dtype) + 256;
  }
  tr_free(lv);
  return *avail < *need;
}

static tr_verdict verdict_of_status(const char *st) {
  if (!strcmp(st, "ok")) return TR_VERDICT_OK;
  if (!strcmp(st, "compile_error")) return TR_VERDICT_COMPILE_ERROR;
  if (!strcmp(st, "unsupported")) return TR_VERDICT_UNSUPPORTED;
  if (!strcmp(st, "error")) return TR_VERDICT_ERROR;
  return TR_VERDICT_PROTOCOL_ERROR;
}

static tr_status run_body(tr_target *t, const tr_module *m,
                         tr_tensor *const *inputs, int ninputs,
                         const tr_run_opts *o, tr_run_result *r,
                         tr_diag *d) {
  proc *p = t->impl;
  tr_status s = check_inputs(m, inputs, ninputs, d);
  if (s != TR_OK) return s;
  double t0 = now_s();
  exchange x;
  s = ensure_child(t, p, &x, d);
  if (s != TR_OK) return s;
  if (x.verdict != TR_VERDICT_OK) { /* the restart itself failed */
    r->verdict = x.verdict;
    r->message = fmt("restarting the target: %s", x.why);
    r->stderr_tail = err_tail(p, 0);
    tr_free(x.why);
    r->wall_ms = (now_s() - t0) * 1e3;
    return TR_OK;
  }
  uint64_t err_mark = p->err_total;
  cJSON *req = cJSON_CreateObject();
  cJSON_AddStringToObject(req, "op", "run");
  tr_buf dir = {0};
  s = write_request_files(p, m, o->module_text, inputs, ninputs, &dir, req, d);
  if (s != TR_OK) {
    cJSON_Delete(req);
    rm_tree(dir.p);
    tr_buf_free(&dir);
    return s;
  }
  cJSON *opts = cJSON_AddObjectToObject(req, "options");
  cJSON *dis = cJSON_AddArrayToObject(opts, "disable_passes");
  for (int i = 0; i < o->ndisable_passes; i++)
    cJSON_AddItemToArray(dis, cJSON_CreateString(o->disable_passes[i]));
  cJSON_AddBoolToObject(opts, "want_optimized_hlo", o->want_optimized_hlo);
  cJSON_AddBoolToObject(opts, "want_passes", o->want_passes);
  cJSON_AddBoolToObject(opts, "want_received_hlo", o->want_received_hlo);
  if (o->want_pass_dumps) cJSON_AddBoolToObject(opts, "want_pass_dumps", true);
  double timeout = o->timeout_s > 0 ? o->timeout_s : p->cfg.timeout_s;
  x = talk(p, req, "run", timeout);
  cJSON_Delete(req);
  if (x.verdict != TR_VERDICT_OK) {
    r->verdict = x.verdict;
    r->message = x.why;
    r->stderr_tail = err_tail(p, 0);
  } else {
    const cJSON *rep = x.reply;
    r->verdict = verdict_of_status(jstr(rep, "status"));
    if (r->verdict == TR_VERDICT_PROTOCOL_ERROR)
      r->message = fmt("unknown status \"%s\"", jstr(rep, "status"));
    else
      r->message = xstrdup_or_null(jstr(rep, "message"));
    r->compile_ms = jnum(rep, "compile_ms", -1);
    r->run_ms = jnum(rep, "run_ms", -1);
    if (r->verdict == TR_VERDICT_OK) {
      take_outputs(m, dir.p, rep, r);
      read_hlo_file(dir.p, rep, "optimized_hlo", &r->optimized_hlo, r);
      read_hlo_file(dir.p, rep, "received_hlo", &r->received_hlo, r);
      const cJSON *pc = cJSON_GetObjectItemCaseSensitive(rep, "passes_changed");
      int np = cJSON_IsArray(pc) ? cJSON_GetArraySize(pc) : 0;
      if (r->verdict == TR_VERDICT_OK && np > 0) {
        r->passes_changed = tr_xcalloc((size_t)np, sizeof(char *));
        const cJSON *c;
        cJSON_ArrayForEach(c, pc) if (cJSON_IsString(c))
          r->passes_changed[r->npasses_changed++] = tr_xstrdup(c->valuestring);
      }
      /* pass_dumps: [{"pass": NAME, "path": FILE}], in pipeline order. */
      const cJSON *pd = cJSON_GetObjectItemCaseSensitive(rep, "pass_dumps");
      int nd = cJSON_IsArray(pd) ? cJSON_GetArraySize(pd) : 0;
      if (nd > 0) {
        r->pass_dump_names = tr_xcalloc((size_t)nd, sizeof(char *));
        r->pass_dump_texts = tr_xcalloc((size_t)nd, sizeof(char *));
        const cJSON *c;
        cJSON_ArrayForEach(c, pd) {
          const char *name = jstr(c, "pass"), *path = jstr(c, "path");
          char *err = NULL, *text = path ? read_text(path, &err) : NULL;
          tr_free(err);
          if (!name || !text) {
            tr_free(text);
            continue;
          }
          r->pass_dump_names[r->npass_dumps] = tr_xstrdup(name);
          r->pass_dump_texts[r->npass_dumps++] = text;
        }
      }
    }
    if (r->verdict == TR_VERDICT_PROTOCOL_ERROR) {
      reap(p, 0); /* a confused child is not trusted with the next request */
      r->stderr_tail = err_tail(p, 0);
    } else if (r->verdict != TR_VERDICT_OK) {
      drain_err(p);
      r->stderr_tail = err_tail(p, err_mark);
    }
    cJSON_Delete(x.reply);
  }
  uint64_t avail = 0, need = 0;
  bool full = (r->verdict == TR_VERDICT_CRASH || r->verdict == TR_VERDICT_ERROR ||
               r->verdict == TR_VERDICT_PROTOCOL_ERROR) && tmp_too_full(p, m, &avail, &need);
  if (full) {
    tr_diag_errorf(d, "cmd: %s has %llu bytes free, less than the %llu the outputs need: trench's temp space "
                   "is full (TMPDIR), so the target's %s is not a finding (%s)", p->tmp,
                   (unsigned long long)avail, (unsigned long long)need, tr_verdict_name(r->verdict),
                   r->message ? r->message : "");
    tr_run_result_free(r);
  }
  rm_tree(dir.p);
  tr_buf_free(&dir);
  if (full) return TR_ERR_IO;
  r->wall_ms = (now_s() - t0) * 1e3;
  return TR_OK;
}

/* One run in a heap frame: running out of memory while writing the request
 * or reading the reply (its JSON, outputs, dumps) frees what the run made
 * and is a verdict (declined, not a finding). The child, whose exchange was
 * cut off, is killed and restarted by the next run. The state that
 * outlives a run (p's buffers, the target's name) leaves the frame where
 * it is made (tr_heap_keep). */
typedef struct {
  tr_target *t;
  const tr_module *m;
  tr_tensor *const *inputs;
  int ninputs;
  const tr_run_opts *o;
  tr_run_result *r;
  tr_diag *d;
  tr_status st;
} run_job;

static void run_job_fn(void *v) {
  run_job *j = v;
  j->st = run_body(j->t, j->m, j->inputs, j->ninputs, j->o, j->r, j->d);
}

static tr_status proc_run(tr_target *t, const tr_module *m,
                          tr_tensor *const *inputs, int ninputs,
                          const tr_run_opts *o, tr_run_result *r,
                          tr_diag *d) {
  tr_run_result_init(r);
  double t0 = now_s();
  run_job j = {t, m, inputs, ninputs, o, r, d, TR_OK};
  size_t bytes = 0;
  if (tr_heap_run(run_job_fn, &j, &bytes)) return j.st;
  proc *p = t->impl;
  if (p->pid >= 0) reap(p, 0);
  tr_run_result_init(r); /* its blocks went with the frame */
  r->verdict = TR_VERDICT_UNSUPPORTED;
  tr_diag od = {0};
  tr_heap_diag(&od, m->file ? m->file : "<module>",
               "sending the module to the target or reading its reply", bytes);
  r->message = tr_xstrdup(tr_diag_first(&od));
  tr_diag_clear(&od);
  r->wall_ms = (now_s() - t0) * 1e3;
  return TR_OK;
}

static tr_status proc_list_passes(tr_target *t, const tr_module *m,
                                  char ***names, int *nnames, tr_diag *d) {
  proc *p = t->impl;
  *names = NULL;
  *nnames = 0;
  if (!(t->caps & TR_CAP_LIST_PASSES)) {
    tr_diag_errorf(d, "target '%s' cannot list its passes", t->spec);
    return TR_ERR_UNSUPPORTED;
  }
  if (!m->entry) {
    tr_diag_errorf(d, "cmd: the module has no entry computation");
    return TR_ERR_INVALID;
  }
  exchange x;
  tr_status s = ensure_child(t, p, &x, d);
  if (s == TR_OK && x.verdict != TR_VERDICT_OK) {
    tr_diag_errorf(d, "%s: %s", t->spec, x.why);
    tr_free(x.why);
    return TR_ERR_IO;
  }
  if (s != TR_OK) return s;
  cJSON *req = cJSON_CreateObject();
  cJSON_AddStringToObject(req, "op", "list_passes");
  tr_buf dir = {0};
  s = write_request_files(p, m, NULL, NULL, 0, &dir, req, d);
  if (s == TR_OK) {
    x = talk(p, req, "list_passes", p->cfg.timeout_s);
    if (x.verdict != TR_VERDICT_OK) {
      tr_diag_errorf(d, "%s: %s", t->spec, x.why);
      tr_free(x.why);
      s = TR_ERR_IO;
    } else if (strcmp(jstr(x.reply, "status"), "ok") != 0) {
      tr_diag_errorf(d, "%s: list_passes: %s: %s", t->spec,
                     jstr(x.reply, "status"),
                     jstr(x.reply, "message") ? jstr(x.reply, "message") : "");
      s = TR_ERR_UNSUPPORTED;
    } else {
      const cJSON *ps = cJSON_GetObjectItemCaseSensitive(x.reply, "passes");
      int n = cJSON_IsArray(ps) ? cJSON_GetArraySize(ps) : 0;
      *names = tr_xcalloc((size_t)n + 1, sizeof(char *));
      const cJSON *c;
      cJSON_ArrayForEach(c, ps) if (cJSON_IsString(c))
        (*names)[(*nnames)++] = tr_xstrdup(c->valuestring);
    }
    cJSON_Delete(x.reply);
  }
  cJSON_Delete(req);
  if (dir.p) rm_tree(dir.p);
  tr_buf_free(&dir);
  return s;
}

tr_status tr_proc_convert(tr_target *t, const char *text, char **hlo, tr_diag *d) {
  *hlo = NULL;
  if (strcmp(t->ops->kind, "cmd") != 0 || !(t->caps & TR_CAP_MLIR)) {
    tr_diag_errorf(d, "target '%s' cannot convert StableHLO to HLO (no 'mlir' capability)", t->spec);
    return TR_ERR_UNSUPPORTED;
  }
  proc *p = t->impl;
  exchange x;
  tr_status s = ensure_child(t, p, &x, d);
  if (s == TR_OK && x.verdict != TR_VERDICT_OK) {
    tr_diag_errorf(d, "%s: %s", t->spec, x.why);
    tr_free(x.why);
    return TR_ERR_IO;
  }
  if (s != TR_OK) return s;
  cJSON *req = cJSON_CreateObject();
  cJSON_AddStringToObject(req, "op", "convert");
  tr_buf dir = {0};
  s = write_request_files(p, NULL, text, NULL, 0, &dir, req, d);
  if (s == TR_OK) {
    x = talk(p, req, "convert", p->cfg.timeout_s);
    if (x.verdict != TR_VERDICT_OK) {
      tr_diag_errorf(d, "%s: %s", t->spec, x.why);
      tr_free(x.why);
      s = TR_ERR_IO;
    } else if (strcmp(jstr(x.reply, "status"), "ok") != 0) {
      tr_diag_errorf(d, "%s: convert: %s: %s", t->spec, jstr(x.reply, "status"),
                     jstr(x.reply, "message") ? jstr(x.reply, "message") : "");
      s = TR_ERR_UNSUPPORTED;
    } else {
      tr_run_result r;
      tr_run_result_init(&r);
      read_hlo_file(dir.p, x.reply, "hlo", hlo, &r);
      if (!*hlo) {
        tr_diag_errorf(d, "%s: convert: %s", t->spec, r.message ? r.message : "no 'hlo' file in the reply");
        s = TR_ERR_IO;
      }
      tr_run_result_free(&r);
    }
    cJSON_Delete(x.reply);
  }
  cJSON_Delete(req);
  if (dir.p) rm_tree(dir.p);
  tr_buf_free(&dir);
  return s;
}

static void proc_close(tr_target *t) {
  proc *p = t->impl;
  if (!p) return;
  if (p->pid >= 0) {
    /* Polite first: shutdown, then EOF on stdin, then SIGKILL. */
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "op", "shutdown");
    exchange x = talk(p, req, "shutdown", EXIT_GRACE_S);
    cJSON_Delete(req);
    cJSON_Delete(x.reply);
    tr_free(x.why);
    if (p->pid >= 0) {
      close_fd(&p->fd_in);
      reap(p, EXIT_GRACE_S);
    }
  }
  if (p->tmp) rm_tree(p->tmp);
  if (p->cfg.guard) p->cfg.guard->tmp[0] = 0;
  tr_free(p->tmp);
  tr_free(p->given_up);
  for (int i = 0; i < p->argc; i++) tr_free(p->argv[i]);
  tr_free(p->argv);
  tr_buf_free(&p->obuf);
  tr_free(p->err);
  tr_free(p->exit_why);
  tr_free(p);
  t->impl = NULL;
}

static const tr_target_ops proc_ops = {"cmd", proc_run, proc_list_passes,
                                       proc_close};

int tr_proc_pid(const tr_target *t) {
  const proc *p = t && t->ops == &proc_ops ? t->impl : NULL;
  return p ? (int)p->pid : -1;
}

tr_status tr_proc_open(const char *spec, const char *cmdline,
                       const tr_target_config *cfg, tr_target **out,
                       tr_diag *d) {
  *out = NULL;
  /* cJSON's trees are a run's like any other block: an out-of-memory
   * unwind frees them (installed once; base.h). */
  tr_json_hooks();
  char **argv;
  int argc;
  tr_status s = split_words(cmdline, &argv, &argc, d);
  if (s != TR_OK) return s;
  char *prog = resolve_program(argv[0]);
  if (!prog) {
    tr_diag_errorf(d, "cmd: program '%s' not found on PATH", argv[0]);
    for (int i = 0; i < argc; i++) tr_free(argv[i]);
    tr_free(argv);
    return TR_ERR_USAGE;
  }
  tr_free(argv[0]);
  argv[0] = prog;
  proc *p = tr_xcalloc(1, sizeof *p);
  p->argv = argv;
  p->argc = argc;
  p->cfg = *cfg;
  if (p->cfg.timeout_s <= 0) p->cfg.timeout_s = 60;
  if (p->cfg.start_timeout_s <= 0) p->cfg.start_timeout_s = 120;
  p->pid = -1;
  p->fd_in = p->fd_out = p->fd_err = -1;
  p->err = tr_xmalloc(ERR_TAIL);
  p->next_id = 1;
  tr_target *t = tr_xcalloc(1, sizeof *t);
  t->ops = &proc_ops;
  t->spec = tr_xstrdup(spec);
  t->impl = p;

  const char *base = cfg->tmp_dir ? cfg->tmp_dir : getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  tr_buf tmpl = {0};
  tr_buf_printf(&tmpl, "%s/trench-XXXXXX", base);
  if (!mkdtemp(tmpl.p)) {
    tr_diag_errorf(d, "cmd: cannot create a folder in %s: %s", base,
                   strerror(errno));
    tr_buf_free(&tmpl);
    tr_target_close(t);
    return TR_ERR_IO;
  }
  p->tmp = tr_xstrdup(tmpl.p);
  tr_buf_free(&tmpl);
  if (p->cfg.guard) {
    p->cfg.guard->pid = 0;
    snprintf(p->cfg.guard->tmp, sizeof p->cfg.guard->tmp, "%s", p->tmp);
  }

  exchange x;
  s = ensure_child(t, p, &x, d);
  if (s == TR_OK && x.verdict != TR_VERDICT_OK) {
    tr_diag_errorf(d, "%s: %s%s%.*s", spec, x.why,
                   p->nerr ? "; its stderr ends with:\n" : "",
                   (int)(p->nerr > 2000 ? 2000 : p->nerr),
                   p->err + (p->nerr > 2000 ? p->nerr - 2000 : 0));
    tr_free(x.why);
    s = TR_ERR_IO;
  }
  if (s != TR_OK) {
    tr_target_close(t);
    return s;
  }
  *out = t;
  return TR_OK;
}
