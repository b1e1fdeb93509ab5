/* value.c - values of every interpreter domain (value.h): reference
 * counts, tuples and tokens, written once; a domain frees its arrays' own
 * data through its layout's drop. */
#include "value.h"

#include "../base/base.h"

#include <stdlib.h>

static ev_v *make(const ev_layout *l, ev_kind kind) {
  ev_v *v = tr_xcalloc(1, l->size);
  v->refs = 1;
  v->kind = kind;
  return v;
}

ev_v *ev_value_array(const ev_layout *l) { return make(l, EV_ARRAY); }

ev_v *ev_value_token(const ev_layout *l) { return make(l, EV_TOKEN); }

ev_v *ev_value_tuple(const ev_layout *l, int n, ev_v *const *elems) {
  ev_v *v = make(l, EV_TUPLE);
  v->nelems = n;
  v->elems = tr_xcalloc(n > 0 ? (size_t)n : 1, sizeof(ev_v *));
  for (int i = 0; elems && i < n; i++) v->elems[i] = elems[i];
  return v;
}

ev_v *ev_value_ref(ev_v *v) {
  if (v) v->refs++;
  return v;
}

void ev_value_unref(const ev_layout *l, ev_v *v) {
  if (!v || --v->refs > 0) return;
  if (v->kind == EV_ARRAY && l->drop(v)) return;
  for (int i = 0; i < v->nelems; i++) ev_value_unref(l, v->elems[i]);
  tr_free(v->elems);
  tr_free(v);
}
