/* test_heap.c - heap frames (base.h): out of memory in a frame frees what
 * the frame made and returns false with the request's size; blocks of the
 * caller and blocks kept stay; inner frames hand their blocks to the outer
 * one; arenas made in a frame go with it. Under ASan (check-san) a block
 * left behind or freed twice fails these tests. */
#include "test.h"

#include "../../src/base/base.h"

#include <cjson/cJSON.h>

#include <string.h>

typedef struct {
  void *outer;     /* the caller's block, grown in the frame */
  char *kept;      /* made in the frame and kept */
  void *made;      /* made in the frame, live at its end */
  tr_buf *b;       /* the caller's buffer, grown in the frame */
  size_t huge;     /* a request made to fail, 0: none */
  int steps;       /* how far fn got */
} heap_ctx;

static void grow_then_fail(void *p) {
  heap_ctx *c = p;
  c->outer = tr_xrealloc(c->outer, 4096); /* the caller's: not the frame's */
  c->kept = tr_xstrdup("kept");
  tr_heap_keep(c->kept);
  void *v[100];
  for (int i = 0; i < 100; i++) v[i] = tr_xmalloc(64); /* the frame's */
  tr_arena *a = tr_arena_new();
  tr_arena_alloc(a, 100000); /* a chunk of its own, freed with the arena */
  tr_buf_puts(c->b, "x");
  c->steps = 1;
  if (c->huge) {
    tr_heap_fail_at(1); /* as if malloc returned NULL */
    tr_xmalloc(c->huge);
  }
  for (int i = 0; i < 100; i++) tr_free(v[i]);
  tr_arena_free(a);
  c->made = tr_xmalloc(16);
  c->steps = 2;
}

TR_TEST(heap_frame_unwinds) {
  heap_ctx c;
  memset(&c, 0, sizeof c);
  tr_buf b = {0};
  tr_buf_puts(&b, "caller's");
  c.b = &b;
  c.outer = tr_xmalloc(8);
  c.huge = 1000;
  size_t bytes = 0;
  CHECK(!tr_heap_active());
  CHECK(!tr_heap_run(grow_then_fail, &c, &bytes));
  CHECK(!tr_heap_active());
  CHECK(bytes == c.huge);
  CHECK_EQ_INT(c.steps, 1);
  CHECK_STR(c.kept, "kept");
  CHECK_STR(tr_buf_str(&b), "caller'sx"); /* grown in place or moved: still the caller's */
  tr_free(c.kept);
  tr_free(c.outer);
  tr_buf_free(&b);
}

TR_TEST(heap_frame_completes) {
  heap_ctx c;
  memset(&c, 0, sizeof c);
  tr_buf b = {0};
  c.b = &b;
  c.outer = tr_xmalloc(8);
  size_t bytes = 7;
  CHECK(tr_heap_run(grow_then_fail, &c, &bytes));
  CHECK_EQ_INT(c.steps, 2);
  CHECK(bytes == 7);
  tr_free(c.made); /* left live by the frame: the caller's now */
  tr_free(c.kept);
  tr_free(c.outer);
  tr_buf_free(&b);
}

typedef struct {
  int nth;       /* TRENCH_HEAP_FAIL's count, for the inner frame */
  bool inner_ok; /* the inner frame's result */
  void *from_inner;
  int after;     /* allocations the outer frame made after the inner */
} nest_ctx;

static void inner_fn(void *p) {
  nest_ctx *c = p;
  c->from_inner = tr_xmalloc(32);
  for (int i = 0; i < 10; i++) tr_free(tr_xmalloc(16));
}

static void outer_fn(void *p) {
  nest_ctx *c = p;
  tr_xmalloc(32);
  tr_heap_fail_at((uint64_t)c->nth);
  size_t bytes = 0;
  c->inner_ok = tr_heap_run(inner_fn, c, &bytes);
  tr_heap_fail_at(0);
  for (; c->after < 5; c->after++) tr_xmalloc(8);
  tr_heap_raise(123); /* the outer frame fails too: frees the inner's */
}

TR_TEST(heap_frame_nests) {
  for (int nth = 1; nth <= 12; nth++) {
    nest_ctx c;
    memset(&c, 0, sizeof c);
    c.nth = nth;
    size_t bytes = 0;
    CHECK(!tr_heap_run(outer_fn, &c, &bytes));
    CHECK(bytes == 123);
    CHECK(c.inner_ok == (nth > 11)); /* inner_fn makes 11 allocations */
    CHECK_EQ_INT(c.after, 5);
  }
  tr_heap_fail_at(0);
}

/* cJSON through tr_json_hooks: in a frame, a failed node unwinds the
 * frame and the half-built tree goes with it (ASan: nothing leaks); every
 * injection point either unwinds or completes with the whole document. */
typedef struct {
  char *text; /* the printed document, when the frame completes */
} json_ctx;

static void json_fn(void *p) {
  json_ctx *c = p;
  cJSON *o = cJSON_CreateObject();
  cJSON *a = cJSON_AddArrayToObject(o, "runs");
  for (int i = 0; i < 20; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(i));
  cJSON_AddStringToObject(o, "summary", "pass");
  c->text = tr_json_print(o, false);
  cJSON_Delete(o);
}

TR_TEST(heap_json_hooks) {
  tr_json_hooks();
  tr_json_hooks(); /* once: a second call changes nothing */
  int unwound = 0, whole = 0;
  for (int nth = 1; nth <= 80; nth++) {
    json_ctx c = {NULL};
    tr_heap_fail_at((uint64_t)nth);
    size_t bytes = 0;
    if (!tr_heap_run(json_fn, &c, &bytes)) {
      unwound++;
      CHECK(bytes > 0);
    } else {
      whole++;
      CHECK(c.text && strstr(c.text, "\"summary\":\"pass\"") && strstr(c.text, "19]"));
      tr_free(c.text);
    }
  }
  tr_heap_fail_at(0);
  CHECK(unwound > 20); /* every node before the print is a point */
  CHECK(whole > 0);
  /* Outside a frame the hooks are malloc's: a document prints. */
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "n", 1);
  char *s = tr_json_print(o, true);
  CHECK(s && strstr(s, "\"n\""));
  tr_free(s);
  cJSON_Delete(o);
  CHECK(!tr_json_print(NULL, false));
}
