/* guard.c - an interrupted trench (Ctrl-C, SIGTERM, a closed terminal's
 * SIGHUP) leaves no adapter process and no temp folder behind. Process
 * targets run their adapter under a keeper (src/target/keeper.c), away
 * from the terminal's process group (so its Ctrl-C does not reach the
 * adapter mid-request): on these signals the handler asks each keeper to
 * kill its adapter's whole process tree and waits for it (a SIGKILL after
 * KEEP_WAIT_MS), removes each private folder, then dies of the signal as
 * it would have.
 *
 * The slots below are the one piece of process-wide mutable state in the
 * CLI, and only because a signal handler can be handed no context: a
 * command passes a slot to its target (tr_target_config.guard), the
 * target keeps the child's pid and folder there, and the handler reads
 * them. The handler calls only async-signal-safe functions: kill, fork,
 * execve, waitpid, nanosleep, signal, raise (the folder is removed by an rm child,
 * since walking a folder is not async-signal-safe). */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GUARD_SLOTS 8
#define KEEP_WAIT_MS 2000
static tr_target_guard guards[GUARD_SLOTS];
static volatile sig_atomic_t nguards;

tr_target_guard *cli_guard_slot(void) {
  if (nguards >= GUARD_SLOTS) return NULL; /* the target then goes unguarded */
  tr_target_guard *g = &guards[nguards];
  g->pid = 0;
  g->tmp[0] = 0;
  nguards++;
  return g;
}

static void on_signal(int sig) {
  int n = nguards;
  for (int i = 0; i < n; i++)
    if (guards[i].pid > 0) kill((pid_t)guards[i].pid, SIGTERM);
  for (int i = 0; i < n; i++) {
    pid_t pid = (pid_t)guards[i].pid;
    if (pid <= 0) continue;
    struct timespec ms = {0, 1000000L};
    int waited = 0;
    while (waitpid(pid, NULL, WNOHANG) == 0 && waited++ < KEEP_WAIT_MS) nanosleep(&ms, NULL);
    if (waited > KEEP_WAIT_MS) {
      kill(pid, SIGKILL);
      while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    }
  }
  for (int i = 0; i < n; i++) {
    if (!guards[i].tmp[0]) continue;
    pid_t c = fork();
    if (c == 0) {
      char *argv[] = {"rm", "-rf", "--", guards[i].tmp, NULL};
      char *envp[] = {NULL};
      execve("/bin/rm", argv, envp);
      _exit(127);
    }
    while (c > 0 && waitpid(c, NULL, 0) < 0 && errno == EINTR) {}
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void cli_guard_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  /* one cleanup at a time: the others wait until it re-raises */
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaddset(&sa.sa_mask, SIGHUP);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
}
