/* cmd_reduce.c - "trench reduce": isolates a finding, then reduces the
 * module keeping the finding's signature (src/triage/reduce.c); the
 * driver is shared with "trench isolate" (cmd_isolate.c). */
#include "cli.h"

static int run(int argc, char **argv);

const cli_cmd cli_cmd_reduce = {
  "reduce", "reduce a finding to a minimal module with the same bug",
  "Usage: trench reduce MODULE|BUNDLE [OPTIONS]\n"
  "\n"
  "Isolates the finding as `trench isolate` does, measures how often it\n"
  "reproduces on its inputs, then reduces the module by delta debugging\n"
  "with tensor-aware moves (return the culprit or an intermediate value,\n"
  "drop outputs, forward an operand, replace a value by a parameter fed its\n"
  "recorded value). A candidate is kept only when the signature stays: the\n"
  "finding's kind, the op of the first wrong output, the first wrong\n"
  "element's kind and, for builtin, the guilty pass (docs/TRIAGE.md). The\n"
  "result is 1-minimal for those moves.\n"
  "\n"
  "Options: those of `trench isolate`, and\n"
  "      --repro N      runs measuring the reproduction rate (default 3)\n"
  "\n"
  "Exit codes:\n"
  "  0  no finding to reduce\n"
  "  1  a finding, reduced\n"
  "  2  usage error, unreadable input, trench's own trouble\n",
  run,
};

static int run(int argc, char **argv) { return cli_triage_main(&cli_cmd_reduce, argc, argv, true); }
