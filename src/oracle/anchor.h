/* anchor.h - per-instruction checking (docs/ORACLE.md, "Per-instruction
 * checks"): the target runs an anchored copy of the module that also
 * returns the value of every entry instruction, and each instruction is
 * judged on its own, evaluated in shadow mode on the target's values of
 * its operands. Each bound then covers one op, not the whole chain before
 * it, so deep graphs (ResNet-50, transformers) are judged where the
 * whole-module bounds have grown past the values. */
#ifndef TR_ANCHOR_H
#define TR_ANCHOR_H

#include "../target/target.h"
#include "compare.h"

/* One anchored instruction of the original module's entry. */
typedef struct {
  const tr_instr *in; /* in the original module */
  /* The instructions judged with it: in itself, after the producers it
   * absorbs in chains mode (program order, in last). */
  const tr_instr **members;
  int nmembers;
  int first;          /* its first leaf among the anchored module's outputs */
  int nleaves;        /* its array leaves (depth-first) */
} tr_anchor;

typedef struct {
  const tr_module *src; /* the original module (not owned) */
  /* The anchored module, in parts (owned): usually one; a target that
   * refuses so many outputs gets several (tr_anchor_split), whose outputs
   * in order are those of the one. */
  tr_module **parts;
  int nparts;
  int norig;          /* leaves of the original root: the first outputs */
  int nleaves;        /* all outputs of the anchored module */
  tr_anchor *anchors; /* in program order */
  int nanchors;
} tr_anchored;

/* Builds the anchored copy of m: its entry root becomes a flat tuple of
 * the original root's array leaves, then the leaves of every anchored
 * entry instruction in program order. Anchored are the entry's
 * instructions with an array leaf, except parameters, constants, tuples,
 * get-tuple-elements of parameters and ops with side effects; a while,
 * call or conditional is one instruction (its insides are not anchored).
 * With chains, a producer a compiler would fuse into its consumer (an
 * elementwise or index-only op whose single user is another anchored
 * entry instruction) is not anchored but judged together with that
 * consumer: returning every value changes what a compiler fuses (a value
 * with a second user, the root, is no longer fused), which can hide a
 * fusion defect; chains keep those fusions as they were. */
tr_status tr_anchor_module(const tr_module *m, bool chains, tr_anchored *out, tr_diag *d);
void tr_anchored_free(tr_anchored *a);
/* Rebuilds a's parts with at most max_leaves outputs each (0: one part),
 * never splitting an instruction's leaves. */
tr_status tr_anchor_split(tr_anchored *a, int max_leaves, tr_diag *d);
/* Runs every part of a on t with the original module's inputs ins; res
 * gets the outputs of all parts in order (a->nleaves) or the first
 * non-OK verdict. A single part the target calls unsupported is split
 * into parts of at most 200 outputs and run again. Returns non-OK only
 * for trouble on trench's side, as tr_target_run does. */
tr_status tr_anchor_run(tr_anchored *a, tr_target *t, tr_tensor *const *ins, int nins,
                        const tr_run_opts *ro, tr_run_result *res, tr_diag *d);

typedef struct {
  double k;                  /* bound multiplier (1) */
  /* NULL: strict. Besides the comparison rules, its input rules give
   * anchored operands an input bound where the consumer may have seen
   * another value than the stored anchor (docs/ORACLE.md):
   * narrow-in-f32 (a bf16/f16 value before its rounding to the stored
   * type) and fma-contraction (a product feeding an add, unrounded). */
  const tr_profile *profile;
} tr_anchor_opts;

void tr_anchor_opts_default(tr_anchor_opts *o);

/* The judgement of one anchored instruction. */
typedef struct {
  int status;               /* 0 judged, 1 skipped (see reason) */
  const char *reason;       /* why skipped or weak, or NULL */
  tr_judgement judgement;   /* of the worst leaf */
  int leaf;                 /* that leaf (0 for single results) */
  tr_compare_result r;      /* that leaf's numbers */
  /* Rules that excused something of it (bit 1<<rule): an input rule when
   * it mismatched on the exact operands and not with the rule's input
   * bound, a comparison rule when it excused an element. */
  unsigned excused;
} tr_anchor_result;

typedef struct {
  int checked;              /* instructions judged */
  int pass, weak, mismatch;
  int skipped;              /* the reference could not evaluate it alone */
  int first_bad;            /* anchor index of the first mismatch in program
                               order, or -1 */
  double worst_ratio;       /* over every judged float element */
  int worst;                /* anchor index where it was seen, or -1 */
  int excused_by[TR_PR_COUNT]; /* judged instructions each rule excused
                                  something of */
  int narrowed;             /* judged against the profile's narrowed
                               reference (dot-accumulate) */
  tr_anchor_result *per;    /* one per anchor */
  int nper;
} tr_anchor_summary;

/* Judges every anchor of a: ins are the original module's inputs (array
 * leaves of its entry parameters), outs the target's outputs of a->m on
 * them (a->nleaves). Fills s (free with tr_anchor_summary_free). Returns
 * non-OK only when the outputs do not fit a (count or shape), with a
 * diagnostic. */
tr_status tr_anchor_judge(const tr_anchored *a, tr_tensor *const *ins, int nins,
                          tr_tensor *const *outs, int nouts, const tr_anchor_opts *o,
                          tr_anchor_summary *s, tr_diag *d);
void tr_anchor_summary_free(tr_anchor_summary *s);

/* Writes anchor k alone for triage into the folder dir (created): the
 * extracted module (module.hlo), the target's values of its operands
 * (inN.npy), the target's value of it (targetN.npy) and a README with the
 * command that checks it alone on target. */
tr_status tr_anchor_save(const char *dir, const tr_anchored *a, int k, tr_tensor *const *ins,
                         int nins, tr_tensor *const *outs, int nouts, const char *target,
                         tr_diag *d);

/* The summary as text: one line "LABEL per-instruction: VERDICT (checked
 * N: pass P, weak W, mismatch M; skipped S; worst ratio R at %NAME[;
 * excused N by RULE...][; narrowed N by dot-accumulate])" (N
 * instructions) and,
 * when an instruction mismatched, one naming the first in program order
 * with its output, index and the three values. */
void tr_anchor_summary_text(tr_buf *b, const char *label, const tr_anchored *a,
                            const tr_anchor_summary *s);
/* The same as a "per_instruction" object added to js (a cJSON object),
 * with up to 100 instructions that did not pass. */
struct cJSON;
void tr_anchor_summary_json(struct cJSON *js, const tr_anchored *a, const tr_anchor_summary *s);

#endif
