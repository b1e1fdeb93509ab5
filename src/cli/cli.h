/* cli.h - what main.c and the subcommands (cmd_<name>.c) share: exit codes,
 * the command table entry, a small option scanner and module loading. The
 * CLI is a thin layer over the library; unlike the library it may exit. */
#ifndef TR_CLI_H
#define TR_CLI_H

#include "../base/base.h"
#include "../ir/ir.h"
#include "../oracle/profile.h"
#include "../target/target.h"

#define TRENCH_VERSION "0.1.0"

/* Exit codes, the same for every command. When several apply (one file
 * unreadable, another malformed) the highest wins. */
enum {
  CLI_EXIT_OK = 0,      /* success, nothing found */
  CLI_EXIT_FINDING = 1, /* a finding; an input failed to parse or verify */
  CLI_EXIT_USAGE = 2    /* bad usage, unreadable input, unwritable output */
};

typedef struct {
  const char *name;    /* as typed after "trench" */
  const char *summary; /* one line for the command list */
  const char *help;    /* full text printed by --help and "trench help NAME" */
  int (*run)(int argc, char **argv); /* argv[0] is the command name */
} cli_cmd;

extern const cli_cmd cli_cmd_parse;
extern const cli_cmd cli_cmd_stats;
extern const cli_cmd cli_cmd_run;
extern const cli_cmd cli_cmd_check;
extern const cli_cmd cli_cmd_defects;
extern const cli_cmd cli_cmd_compile;
extern const cli_cmd cli_cmd_isolate;
extern const cli_cmd cli_cmd_reduce;
/* isolate and reduce share their driver (cmd_isolate.c). */
int cli_triage_main(const cli_cmd *cmd, int argc, char **argv, bool reduce);
extern const cli_cmd cli_cmd_verify;
extern const cli_cmd cli_cmd_gen;
extern const cli_cmd cli_cmd_mutate;
extern const cli_cmd cli_cmd_fuzz;
extern const cli_cmd cli_cmd_merge;

/* ---- option scanning ----
 * Options and operands may be mixed; "--" ends options; "-" is an operand
 * (stdin). Long options take values as "--opt=V" or "--opt V", short ones
 * as "-oV" or "-o V". Short flags do not bundle ("-qv" is an error): few
 * commands, clearer errors. */
typedef struct {
  int argc;           /* from the command */
  char **argv;        /* argv[0] is the command name */
  const cli_cmd *cmd; /* for error messages */
  int i;              /* next argument to look at */
  bool no_more_opts;  /* "--" was seen */
  const char *arg;    /* the current option or operand */
  const char *val;    /* glued value ("--o=V", "-oV"), else NULL */
} cli_opts;

void cli_opts_init(cli_opts *o, const cli_cmd *cmd, int argc, char **argv);
/* Advances. Returns 0 at the end, 'o' for an option (o->arg), 'f' for an
 * operand (o->arg). */
int cli_opts_next(cli_opts *o);
/* Whether the current option is one of the given spellings (either may be
 * NULL); sets o->val to a glued value. */
bool cli_opt_is(cli_opts *o, const char *shortname, const char *longname);
/* cli_opt_is for options without a value: a glued value is a usage error. */
bool cli_opt_flag(cli_opts *o, const char *shortname, const char *longname);
/* The value of the current option: glued or the next argument; exits with a
 * usage error when missing. */
const char *cli_opt_value(cli_opts *o);

/* Prints "trench CMD: message" and the usage hint to stderr and exits 2. */
_Noreturn void cli_usage_error(const cli_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prints cmd->help to stdout and exits 0 when the current option is -h or
 * --help. */
void cli_opt_help(cli_opts *o);
/* The reference interpreter's limits (tr_eval_opts): --ref-timeout S sets
 * *deadline_s, --max-trips N sets *max_trips. Returns whether the current
 * option was one of them; a bad value is a usage error. CLI_REF_LIMITS_HELP
 * is their help text. */
bool cli_opt_ref_limits(cli_opts *o, double *deadline_s, int64_t *max_trips);
#define CLI_REF_LIMITS_HELP \
  "      --ref-timeout S  end the reference interpreter's run after S seconds\n" \
  "                       of wall-clock time (default: no deadline)\n" \
  "      --max-trips N    end it when one while loop runs more than N trips\n" \
  "                       (default 10000000)\n"

/* A process target's start (tr_target_config.start_timeout_s: spawning
 * the adapter and its hello): --start-timeout S sets *start_timeout_s.
 * Shared by every command that opens a target. Returns whether the
 * current option was it; a bad value is a usage error. */
bool cli_opt_start_timeout(cli_opts *o, double *start_timeout_s);
#define CLI_START_TIMEOUT_HELP \
  "      --start-timeout S  seconds a process target may take to start\n" \
  "                       (hello; 120; torch-* 300)\n"

/* ---- inputs ---- */
/* Name shown in messages for path ("-" reads stdin). */
const char *cli_input_name(const char *path);

/* Reads path ("-" = stdin) whole: regular files only, at most
 * cli_read_limit() bytes (docs/CLI.md, "Limits"). */
tr_status cli_read_input(const char *path, char **out, size_t *len, tr_diag *d);
/* The read limit: TRENCH_MAX_INPUT (a size such as 64M) or TR_READ_MAX. */
size_t cli_read_limit(void);
/* Sets po->arena_limit from TRENCH_ARENA_LIMIT (a size): a module whose
 * parse needs more is "out of memory", the path a real exhaustion takes
 * (the fault tier's test of it, also under ASan where ulimit -v is not
 * possible). Unset: no limit. */
void cli_parse_opts_env(tr_parse_opts *po);
/* A byte count with an optional K, M, G or T suffix (powers of 1024). */
bool cli_parse_size(const char *v, uint64_t *out);

/* ---- the memory budget (--max-memory of run and check) ---- */
/* The machine's available memory (MemAvailable in /proc/meminfo), or 0
 * when unknown (no budget then). */
uint64_t cli_memory_available(void);
/* Whether evaluating m (shadow: in shadow mode; extra: bytes the command
 * holds besides) fits in budget bytes (0: no budget). When it does not,
 * prints "PREFIX: declined: ..." to stderr with the estimate and the budget
 * and returns false. */
bool cli_memory_fits(const tr_module *m, bool shadow, uint64_t extra, uint64_t budget,
                     const char *prefix, const char *name);
/* "1.5 GiB" */
void cli_put_bytes(tr_buf *b, uint64_t n);
/* Whether the reference can finish m before its deadline (seconds; 0:
 * none): when the module's lower bound of scalar operations
 * (tr_eval_estimate_ops) over the reference's fastest rate, a ceiling of
 * CLI_REF_OPS_PER_CORE per online core, already exceeds the deadline, it
 * prints "PREFIX: declined: ..." and returns false, in microseconds rather
 * than after the deadline. */
#define CLI_REF_OPS_PER_CORE 1e10
/* max_ops > 0 (--max-cost) replaces that derived budget with a number of
 * scalar operations the user chose. */
bool cli_cost_fits(const tr_module *m, double deadline_s, double max_ops, const char *prefix,
                   const char *name);
/* --max-cost OPS sets *max_ops; returns whether the current option was it. */
bool cli_opt_max_cost(cli_opts *o, double *max_ops);
#define CLI_MAX_COST_HELP \
  "      --max-cost OPS   decline a module needing over OPS scalar operations\n" \
  "                       (default: what the reference does before its deadline)\n"

/* ---- interruption (guard.c) ---- */
/* Handles SIGINT, SIGTERM and SIGHUP: kills the adapters of process
 * targets opened with a guard slot and removes their private folders,
 * then dies of the signal. main() installs it. */
void cli_guard_install(void);
/* A slot for tr_target_config.guard (NULL when all are taken). */
tr_target_guard *cli_guard_slot(void);

/* Reads and parses path ("-" = stdin) and verifies it when asked. On
 * failure prints the diagnostics to stderr, returns NULL and sets *exit_code
 * to CLI_EXIT_USAGE (unreadable) or CLI_EXIT_FINDING (syntax or verify
 * error); on success sets it to CLI_EXIT_OK. */
tr_module *cli_load(const char *path, bool verify, int *exit_code);
/* The same with parse options (po may be NULL): --fill-elided. */
tr_module *cli_load_opts(const char *path, bool verify, const tr_parse_opts *po, int *exit_code);
/* As cli_load_opts (verified), or, when path holds StableHLO/MHLO text,
 * the conversion to HLO by the target get_conv(ctx) gives (called only
 * then; an error when it gives NULL or cannot convert);
 * then *mlir gets the text as read (heap), else NULL. */

/* trench's source tree for targets and profiles: NULL when $TRENCH_HOME
 * is set (the library reads it), else the folder above BUILD/trench. */
const char *cli_home(char *buf, size_t n);

/* The profile a command applies for target SPEC: PATH_ARG (--profile)
 * when given; none under --strict or for cmd: and file targets; else
 * HOME/profiles/NAME.conf for NAME[@VER] when it exists (HOME:
 * $TRENCH_HOME, else the tree above BUILD/trench), with the rules keyed
 * by VER. When HOME has no profiles/ folder at all (a binary copied out
 * of its tree) a warning says the target is judged without one. *out
 * gets the profile (NULL: none), path (n bytes) the file read or "".
 * Returns 0, or CLI_EXIT_USAGE after printing the error. */
int cli_profile_open(const char *spec, const char *path_arg, bool strict, tr_profile **out, char *path,
                     size_t n);
typedef struct tr_target tr_target;
tr_module *cli_load_source(const char *path, tr_target *(*conv)(void *ctx), void *ctx,
                           const tr_parse_opts *po, char **mlir, int *exit_code);

/* Flushes stdout; reports a write error (full disk, closed pipe) as exit 2
 * so a truncated output is never mistaken for success. */
int cli_finish(int exit_code);

static inline int cli_worse(int a, int b) { return a > b ? a : b; }

#endif
