/* cmd_defects.c - "trench defects": lists the built-in compiler's defect
 * registry (src/comp/defects.def), the mistakes that the builtin target
 * plants on demand with inject=NAME. */
#include "cli.h"

#include "../comp/defects.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv);

const cli_cmd cli_cmd_defects = {
  "defects", "list the defects the builtin target can inject",
  "Usage: trench defects [OPTIONS]\n"
  "\n"
  "Lists every defect of the built-in compiler's registry, one a line:\n"
  "  NAME  CATEGORY  PASS  DESCRIPTION\n"
  "CATEGORY is emitter, simplifier, fusion, constfold, loop or layout; PASS\n"
  "is the pass (or emit) the mistake lives in; DESCRIPTION says what goes\n"
  "wrong and under which condition. Plant one with the target option\n"
  "inject=NAME (repeatable), e.g.\n"
  "  trench check M.hlo --target builtin:inject=emit-tail-mask-short\n"
  "\n"
  "Options:\n"
  "      --json    print a JSON array of {name, category, pass, description}\n"
  "  -h, --help    show this help\n"
  "\n"
  "Exit codes:\n"
  "  0  listed\n"
  "  2  usage error\n",
  run,
};

static int run(int argc, char **argv) {
  cli_opts o;
  cli_opts_init(&o, &cli_cmd_defects, argc, argv);
  bool json = false;
  int k;
  while ((k = cli_opts_next(&o))) {
    if (k == 'f') cli_usage_error(&cli_cmd_defects, "unexpected operand '%s'", o.arg);
    cli_opt_help(&o);
    if (cli_opt_flag(&o, NULL, "--json")) json = true;
    else cli_usage_error(&cli_cmd_defects, "unknown option '%s'", o.arg);
  }
  int n;
  const tr_defect_info *t = tr_defect_table(&n);
  if (json) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
      cJSON *e = cJSON_CreateObject();
      cJSON_AddStringToObject(e, "name", t[i].name);
      cJSON_AddStringToObject(e, "category", t[i].category);
      cJSON_AddStringToObject(e, "pass", t[i].pass);
      cJSON_AddStringToObject(e, "description", t[i].description);
      cJSON_AddItemToArray(a, e);
    }
    char *s = cJSON_PrintUnformatted(a);
    if (s) printf("%s\n", s);
    tr_free(s);
    cJSON_Delete(a);
    return CLI_EXIT_OK;
  }
  int w = 4;
  for (int i = 0; i < n; i++) {
    int l = (int)strlen(t[i].name);
    if (l > w) w = l;
  }
  printf("%-*s  %-11s  %-9s  %s\n", w, "NAME", "CATEGORY", "PASS", "DESCRIPTION");
  for (int i = 0; i < n; i++)
    printf("%-*s  %-11s  %-9s  %s\n", w, t[i].name, t[i].category, t[i].pass, t[i].description);
  return CLI_EXIT_OK;
}
