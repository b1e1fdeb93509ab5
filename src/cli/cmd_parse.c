/* cmd_parse.c - "trench parse": reads HLO text, verifies it and prints the
 * canonical text back. Checks that a dump loads, and normalizes it. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv);

const cli_cmd cli_cmd_parse = {
  "parse", "parse, verify and print HLO text in canonical form",
  "Usage: trench parse [OPTIONS] FILE...\n"
  "\n"
  "Parses each HLO text FILE (\"-\" reads stdin), verifies it and prints it\n"
  "back in canonical form on stdout, one module after another. Errors go to\n"
  "stderr as \"file:line:col: error: ...\" with the source line and a caret;\n"
  "a failing file prints no text and the remaining files are still read.\n"
  "\n"
  "Options:\n"
  "  -q, --quiet      print no module text on stdout, only diagnostics: a\n"
  "                   check that prints nothing when every FILE is good\n"
  "      --no-verify  skip the verifier (shapes, operands, attributes)\n"
  "  -o, --output OUT write the text to OUT instead of stdout (one FILE only;\n"
  "                   OUT is not touched when the FILE fails)\n"
  "  -h, --help       show this help\n"
  "\n"
  "Exit codes:\n"
  "  0  every FILE parsed (and verified)\n"
  "  1  some FILE has a syntax or verify error\n"
  "  2  usage error, unreadable FILE or unwritable OUT\n",
  run,
};

static int write_file(const char *path, const tr_buf *b) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "trench parse: cannot open '%s' for writing: %s\n", path,
            strerror(errno));
    return CLI_EXIT_USAGE;
  }
  size_t n = fwrite(tr_buf_str(b), 1, b->n, f);
  int bad = n != b->n || ferror(f);
  if (fclose(f) != 0) bad = 1;
  if (bad) {
    fprintf(stderr, "trench parse: error writing '%s'\n", path);
    return CLI_EXIT_USAGE;
  }
  return CLI_EXIT_OK;
}

static int run(int argc, char **argv) {
  const cli_cmd *cmd = &cli_cmd_parse;
  bool quiet = false, verify = true;
  const char *out = NULL;
  char **files = tr_xcalloc((size_t)argc, sizeof(char *));
  int nfiles = 0;
  cli_opts o;
  cli_opts_init(&o, cmd, argc, argv);
  for (int k; (k = cli_opts_next(&o)) != 0;) {
    if (k == 'f') {
      files[nfiles++] = (char *)o.arg;
      continue;
    }
    cli_opt_help(&o);
    if (cli_opt_flag(&o, "-q", "--quiet"))
      quiet = true;
    else if (cli_opt_flag(&o, NULL, "--no-verify"))
      verify = false;
    else if (cli_opt_is(&o, "-o", "--output"))
      out = cli_opt_value(&o);
    else
      cli_usage_error(cmd, "unknown option '%s'", o.arg);
  }
  if (nfiles == 0) cli_usage_error(cmd, "no input files");
  if (out && nfiles > 1) cli_usage_error(cmd, "-o needs exactly one input file");
  if (out && !out[0]) cli_usage_error(cmd, "-o needs a file name");

  int rc = CLI_EXIT_OK;
  for (int i = 0; i < nfiles; i++) {
    int frc;
    tr_module *m = cli_load(files[i], verify, &frc);
    rc = cli_worse(rc, frc);
    if (!m) continue;
    if (out || !quiet) {
      tr_buf b = {0};
      tr_print_module(&b, m);
      if (out)
        rc = cli_worse(rc, write_file(out, &b));
      else
        fwrite(tr_buf_str(&b), 1, b.n, stdout);
      tr_buf_free(&b);
    }
    tr_module_free(m);
  }
  tr_free(files);
  return rc;
}
