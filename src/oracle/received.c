/* received.c - compares the module a target received with the one sent
 * (received.h). */
#include "received.h"

#include <stdlib.h>
#include <string.h>

void tr_received_compare(const tr_module *sent, const char *received_text, tr_received *r) {
  memset(r, 0, sizeof *r);
  tr_diag d = {0};
  tr_module *got = tr_parse("received module", received_text, strlen(received_text), NULL, &d);
  if (!got) {
    r->error = tr_xstrdup(d.nmsgs ? tr_diag_first(&d) : "the received module does not parse");
    tr_diag_clear(&d);
    return;
  }
  tr_diag_clear(&d);
  tr_buf diff = {0};
  r->checked = true;
  r->same = tr_module_same_program(sent, got, &diff, &r->dead_only);
  if (!r->same) {
    r->equivalent = tr_module_same_canonical(sent, got);
    r->diff = tr_xstrdup(tr_buf_str(&diff));
    for (const char *p = r->diff; *p; p++) r->ndiff += *p == '\n';
  }
  tr_buf_free(&diff);
  tr_module_free(got);
}

void tr_received_json(cJSON *obj, const tr_received *r) {
  cJSON *o = cJSON_AddObjectToObject(obj, "received");
  if (!r->checked) {
    cJSON_AddStringToObject(o, "error", r->error ? r->error : "not compared");
    return;
  }
  cJSON_AddBoolToObject(o, "same", r->same);
  if (r->same) return;
  cJSON_AddBoolToObject(o, "equivalent", r->equivalent);
  cJSON_AddBoolToObject(o, "dead_only", r->dead_only);
  cJSON *a = cJSON_AddArrayToObject(o, "diff");
  const char *p = r->diff;
  while (p && *p) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char *line = tr_xmalloc(n + 1);
    memcpy(line, p, n);
    line[n] = 0;
    cJSON_AddItemToArray(a, cJSON_CreateString(line));
    tr_free(line);
    p = e ? e + 1 : p + n;
  }
}

void tr_received_line(tr_buf *b, const tr_received *r, bool show_diff) {
  if (!r->checked) {
    tr_buf_printf(b, "received: not compared: %s\n", r->error ? r->error : "?");
  } else if (r->same) {
    tr_buf_puts(b, "received: the target compiled the module sent (same program, names aside)\n");
  } else if (r->equivalent) {
    tr_buf_printf(b, "received: an equivalent form of the module sent: %d instruction%s differ%s only by "
                  "canonical forms that compute the same values (unused or duplicate code, identity "
                  "moves, layouts, reshape chains, splat constants, tuple nesting, operand order); "
                  "the target's passes started from that form\n",
                  r->ndiff, r->ndiff == 1 ? "" : "s", r->ndiff == 1 ? "s" : "");
  } else {
    tr_buf_printf(b, "received: CHANGED before the target's passes: %d instruction%s differ%s%s\n",
                  r->ndiff, r->ndiff == 1 ? "" : "s", r->ndiff == 1 ? "s" : "",
                  r->dead_only ? " (unused code only)" : "; the target judged another program");
  }
  if (r->checked && !r->same) {
    if (show_diff && r->diff) {
      tr_buf_puts(b, "received: - sent only, + received only:\n");
      const char *p = r->diff;
      while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        tr_buf_puts(b, "  ");
        tr_buf_putn(b, p, n);
        tr_buf_putc(b, '\n');
        p = e ? e + 1 : p + n;
      }
    } else if (r->diff) {
      tr_buf_puts(b, "received: --show-received prints the difference\n");
    }
  }
}

void tr_received_free(tr_received *r) {
  tr_free(r->diff);
  tr_free(r->error);
  memset(r, 0, sizeof *r);
}
