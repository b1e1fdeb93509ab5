/* received.h - is the module a target compiled the module trench sent?
 * A target with the received_hlo capability returns the module its passes
 * started from (XLA: its before-optimizations dump, after jaxlib's
 * HLO -> MLIR -> HLO trip); this compares it with the sent module names
 * aside (tr_module_same_program) so a verdict can say when the compiler
 * judged another program than the one trench evaluated. */
#ifndef TR_RECEIVED_H
#define TR_RECEIVED_H

#include "../ir/ir.h"

#include <cjson/cJSON.h>

typedef struct {
  bool checked;    /* the received text parsed and was compared */
  bool same;       /* the same program, names aside */
  bool dead_only;  /* differs only in code the root does not use */
  bool equivalent; /* differs only by canonical forms that compute the
                      same values (tr_module_same_canonical) */
  int ndiff;       /* lines of diff */
  char *diff;      /* "- sent only" / "+ received only" lines, or NULL */
  char *error;     /* why it was not compared (received text unreadable) */
} tr_received;

void tr_received_compare(const tr_module *sent, const char *received_text, tr_received *r);
/* "received": {"same": ..., "equivalent": ..., "dead_only": ..., "diff":
 * [...]} into obj. */
void tr_received_json(cJSON *obj, const tr_received *r);
/* One line for people: unchanged, changed (N differences), or why not. */
void tr_received_line(tr_buf *b, const tr_received *r, bool show_diff);
void tr_received_free(tr_received *r);

#endif
