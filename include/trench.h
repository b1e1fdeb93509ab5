/* trench.h - the public API for embedding trench: load HLO text, verify
 * it, print it. Handles are opaque; every call reports problems through a
 * status and a message, never by exiting. */
#ifndef TRENCH_H
#define TRENCH_H

#include <stddef.h>

#define TRENCH_VERSION "0.1.0"

typedef struct tr_module tr_module;

/* Parses HLO text (XLA's format). Returns NULL on error and, when err is
 * given, a malloc'd "file:line:col: error: ..." message the caller frees. */
tr_module *trench_parse(const char *name, const char *text, size_t len, char **err);
/* Verifies shapes and attributes; 0 when valid, else -1 and *err. */
int trench_verify(const tr_module *m, char **err);
/* Canonical HLO text, malloc'd; the caller frees it. */
char *trench_print(const tr_module *m);
void trench_free(tr_module *m);

#endif
