/* main.c - the trench command: global options (--help, --version), the
 * "help" command and dispatch to the subcommands in cmd_<name>.c. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <cjson/cJSON.h>
#include <malloc.h>
#endif


static const cli_cmd *const commands[] = {
  &cli_cmd_parse,
  &cli_cmd_run,
  &cli_cmd_check,
  &cli_cmd_compile,
  &cli_cmd_stats,
  &cli_cmd_defects,
  &cli_cmd_isolate,
  &cli_cmd_reduce,
  &cli_cmd_verify,
  &cli_cmd_gen,
  &cli_cmd_mutate,
  &cli_cmd_fuzz,
  &cli_cmd_merge,
};

static const char exit_codes_help[] =
  "Exit codes (all commands):\n"
  "  0  success, nothing found\n"
  "  1  a finding; an input failed to parse or verify\n"
  "  2  usage error, unreadable input or unwritable output\n"
  "When several apply, the highest is returned.\n";

static void print_help(FILE *f) {
  fprintf(f,
          "trench %s - finds silent wrong-result bugs in tensor compilers\n"
          "\n"
          "Usage: trench COMMAND [OPTIONS] [ARGS]\n"
          "       trench help COMMAND\n"
          "       trench --help | --version\n"
          "\n"
          "Commands:\n",
          TRENCH_VERSION);
  for (int i = 0; i < TR_NELEMS(commands); i++)
    fprintf(f, "  %-8s %s\n", commands[i]->name, commands[i]->summary);
  fprintf(f, "  %-8s %s\n", "help", "show the help of a command");
  fprintf(f, "\n%s", exit_codes_help);
  fprintf(f, "\nRun 'trench COMMAND --help' for the options of a command.\n");
}

static const cli_cmd *find_command(const char *name) {
  for (int i = 0; i < TR_NELEMS(commands); i++)
    if (strcmp(commands[i]->name, name) == 0) return commands[i];
  return NULL;
}

static int run_help(int argc, char **argv) {
  if (argc < 3) {
    print_help(stdout);
    return CLI_EXIT_OK;
  }
  if (argc > 3) cli_usage_error(NULL, "help takes one command name");
  const cli_cmd *c = find_command(argv[2]);
  if (!c) cli_usage_error(NULL, "unknown command '%s'", argv[2]);
  fputs(c->help, stdout);
  return CLI_EXIT_OK;
}

/* Evaluations allocate and free large buffers over and over (every
 * instruction's result, every seed): blocks up to 32 MB (glibc's largest
 * mmap threshold) come from the heap and freed memory stays in the
 * process, so the pages are not faulted in afresh each time (exact and
 * shadow mode alike, bench/README.md). */
static void tune_malloc(void) {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

int main(int argc, char **argv) {
  tune_malloc();
  cli_guard_install(); /* adapters and temp folders do not outlive a Ctrl-C */
  /* Every line a person or a script reads is out as soon as it is
   * printed: a killed or aborted run keeps what it reached. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  /* Tests: the Nth allocation inside a heap frame (an evaluation, a
   * compile, a target reply) fails, as if memory ran out there. */
  const char *hf = getenv("TRENCH_HEAP_FAIL");
  if (hf && *hf) tr_heap_fail_at(strtoull(hf, NULL, 10));
  /* cJSON's nodes are blocks like any other: an out-of-memory unwind of a
   * heap frame frees a report or reply it was building (base.h). */
  tr_json_hooks();
  if (argc < 2) {
    print_help(stderr);
    return CLI_EXIT_USAGE;
  }
  const char *a = argv[1];
  if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
    print_help(stdout);
    return cli_finish(CLI_EXIT_OK);
  }
  if (strcmp(a, "--version") == 0) {
    printf("trench %s\n", TRENCH_VERSION);
    return cli_finish(CLI_EXIT_OK);
  }
  if (strcmp(a, "help") == 0) return cli_finish(run_help(argc, argv));
  if (a[0] == '-') cli_usage_error(NULL, "unknown option '%s'", a);
  const cli_cmd *c = find_command(a);
  if (!c) cli_usage_error(NULL, "unknown command '%s'", a);
  return cli_finish(c->run(argc - 1, argv + 1));
}
