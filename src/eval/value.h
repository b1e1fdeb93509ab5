/* value.h - what a value of every interpreter domain begins with: its
 * reference count and its structure (an array of the domain's, a tuple of
 * values, or a token). Tuples and tokens are made, shared and freed here
 * once for every domain (value.c); a domain's value struct has an ev_v as
 * its first member, so a pointer to the one is a pointer to the other, and
 * its arrays carry what the domain needs after it. Not a public
 * interface. */
#ifndef TR_EVAL_VALUE_H
#define TR_EVAL_VALUE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { EV_ARRAY, EV_TUPLE, EV_TOKEN } ev_kind;

typedef struct ev_v ev_v;
struct ev_v {
  int refs;      /* owners; freed when it drops to 0 */
  ev_kind kind;
  int nelems;    /* tuple element count */
  ev_v **elems;  /* tuple elements, one reference each (NULL: not set yet) */
};

/* A domain's values: the size of its value struct (tuples and tokens are
 * made that size, the domain's own fields zero) and how an array's own
 * data is freed: drop returns true when it kept the whole value for reuse
 * (a domain's cache of scalars), and then the value itself is not freed. */
typedef struct {
  size_t size;
  bool (*drop)(ev_v *v);
} ev_layout;

/* A new array value of layout l (zeroed past the header, one owner). */
ev_v *ev_value_array(const ev_layout *l);
/* A tuple of n elements taking elems' references; elems NULL leaves the
 * n slots NULL for the caller to fill (unref frees a half-filled one). */
ev_v *ev_value_tuple(const ev_layout *l, int n, ev_v *const *elems);
ev_v *ev_value_token(const ev_layout *l);
ev_v *ev_value_ref(ev_v *v);                  /* returns v; NULL is fine */
void ev_value_unref(const ev_layout *l, ev_v *v); /* NULL is fine */

#endif
