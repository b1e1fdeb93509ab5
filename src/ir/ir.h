/* ir.h - the tensor IR: a module of computations of instructions, mirroring
 * XLA HLO. A module owns one arena; everything reachable from it (names,
 * shapes, attributes, literals) lives there and dies with tr_module_free. */
#ifndef TR_IR_H
#define TR_IR_H

#include "../base/base.h"
#include "dtype.h"

/* ---- the op table ---- */
typedef enum {
#define X(E, name, arity, rule, types, flags, attrs, w, cls, modes) TR_OP_##E,
#include "ops.def"
#undef X
  TR_OP_COUNT
} tr_op;

typedef enum {
  TR_RULE_PARAMETER, TR_RULE_CONSTANT, TR_RULE_IOTA, TR_RULE_ID,
  TR_RULE_AFTER_ALL, TR_RULE_BROADCAST, TR_RULE_RESHAPE, TR_RULE_BITCAST,
  TR_RULE_TRANSPOSE, TR_RULE_SAME, TR_RULE_CONVERT, TR_RULE_BITCAST_CONVERT,
  TR_RULE_SLICE, TR_RULE_DYNAMIC_SLICE, TR_RULE_DYNAMIC_UPDATE_SLICE,
  TR_RULE_CONCATENATE, TR_RULE_PAD, TR_RULE_REVERSE, TR_RULE_GATHER,
  TR_RULE_SCATTER, TR_RULE_SELECT, TR_RULE_CLAMP, TR_RULE_COMPARE,
  TR_RULE_IS_FINITE, TR_RULE_BINARY, TR_RULE_REDUCE, TR_RULE_REDUCE_WINDOW,
  TR_RULE_SELECT_AND_SCATTER, TR_RULE_DOT, TR_RULE_CONVOLUTION, TR_RULE_SORT,
  TR_RULE_TOPK, TR_RULE_CHOLESKY, TR_RULE_TRIANGULAR_SOLVE, TR_RULE_WHILE,
  TR_RULE_CONDITIONAL, TR_RULE_CALL, TR_RULE_FUSION, TR_RULE_MAP,
  TR_RULE_TUPLE, TR_RULE_GTE, TR_RULE_DECLARED, TR_RULE_ADD_DEPENDENCY,
  TR_RULE_ALL_REDUCE
} tr_rule;

enum {
  TR_OPF_E = 1 << 0, /* elementwise */
  TR_OPF_C = 1 << 1, /* commutative */
  TR_OPF_I = 1 << 3, /* idempotent */
  TR_OPF_S = 1 << 4, /* has side effects / talks to the outside */
  TR_OPF_K = 1 << 5, /* in trench's core op set */
  TR_OPF_M = 1 << 6, /* moves values only: any element type */
  TR_OPF_P = 1 << 7  /* a form XLA's compilers make in their own pipeline
                        (layout assignment, fusion) and take as input only
                        from it: a target's refusal to compile it is not a
                        finding */
};

/* Op classes (ops.def's CLASS column). */
typedef enum {
  TR_OPC_UFLOAT, TR_OPC_UNUM, TR_OPC_UINT, TR_OPC_BARITH, TR_OPC_BBIT, TR_OPC_COMPARE,
  TR_OPC_SELECT, TR_OPC_CONVERT, TR_OPC_LEAF, TR_OPC_MOVE, TR_OPC_REDUCE, TR_OPC_LINALG,
  TR_OPC_SORT, TR_OPC_CONTROL, TR_OPC_COLLECTIVE, TR_OPC_EFFECT, TR_OPC_GENERIC
} tr_opclass;

/* Modes an op can work in (ops.def's modes column, one letter each). */
typedef enum {
  TR_MODE_EXACT = 'x',    /* the exact reference interpreter */
  TR_MODE_SHADOW = 's',   /* a shadow bound rule of its own */
  TR_MODE_EMIT = 'e',     /* the C emitter */
  TR_MODE_GENERATE = 'g', /* the module generator */
  TR_MODE_SYMBOLIC = 'y', /* the symbolic reference */
  TR_MODE_TORCH = 't'     /* translation to torch */
} tr_mode;

typedef struct {
  const char *name;  /* HLO spelling */
  int arity;         /* operand count, -1 variadic */
  tr_rule rule;      /* shape rule */
  const char *types; /* accepted operand element types */
  unsigned flags;    /* TR_OPF_* */
  const char *attrs; /* modelled attributes, '+' = required */
  int weight;        /* generator weight */
  tr_opclass cls;    /* op class */
  const char *modes; /* tr_mode letters */
} tr_op_info;

extern const tr_op_info tr_ops[TR_OP_COUNT];
bool tr_op_lookup(const char *s, size_t n, tr_op *op);
/* Whether op works in mode m (its modes column has the letter). */
bool tr_op_can(tr_op op, tr_mode m);
/* Whether op is an elementwise unary or binary op with scalar kernels
 * (classes UFLOAT, UNUM, UINT; BARITH, BBIT). */
bool tr_op_is_unary_kernel(tr_op op);
bool tr_op_is_binary_kernel(tr_op op);

/* ---- attributes ---- */
typedef enum {
#define X(E, name, kind, allowed) TR_ATTR_##E,
#include "attrs.def"
#undef X
  TR_ATTR_COUNT,
  TR_ATTR_RAW = TR_ATTR_COUNT /* not modelled: name and text kept verbatim */
} tr_attr_key;

typedef enum {
  TR_AK_INT, TR_AK_BOOL, TR_AK_INTS, TR_AK_INTSS, TR_AK_STR, TR_AK_IDENT,
  TR_AK_COMP, TR_AK_COMPS, TR_AK_INSTRS, TR_AK_SLICE, TR_AK_PADDING,
  TR_AK_WINDOW, TR_AK_DIMLABELS, TR_AK_RAW
} tr_attr_kind;

typedef struct {
  const char *name;    /* spelling */
  tr_attr_kind kind;   /* value kind */
  const char *allowed; /* "A|B" for identifiers, else NULL */
} tr_attr_info;

extern const tr_attr_info tr_attrs[TR_ATTR_COUNT];
bool tr_attr_lookup(const char *s, size_t n, tr_attr_key *k);
/* Whether op models attribute k (it is listed in ops.def), and whether it
 * must be present. */
bool tr_op_models_attr(tr_op op, tr_attr_key k, bool *required);
/* Whether v is one of the "A|B|C" values of an identifier attribute. */
bool tr_attr_value_allowed(const char *allowed, const char *v);

typedef struct { int64_t start, limit, stride; } tr_slice_dim;
typedef struct { int64_t lo, hi, interior; } tr_pad_dim;
typedef struct {
  int64_t size, stride, pad_lo, pad_hi, lhs_dilate, rhs_dilate;
  bool reversal;
} tr_window_dim;

/* Convolution dimension numbers from dim_labels. */
typedef struct {
  int nspatial;                             /* spatial dimensions */
  int64_t in_batch, in_feature, *in_spatial; /* lhs positions */
  int64_t k_in, k_out, *k_spatial;           /* kernel positions */
  int64_t out_batch, out_feature, *out_spatial; /* result positions */
} tr_convdims;

typedef struct tr_comp tr_comp;
typedef struct tr_instr tr_instr;
typedef struct tr_module tr_module;

typedef struct {
  tr_attr_key key;   /* TR_ATTR_RAW for verbatim attributes */
  const char *name;  /* spelling as written */
  tr_attr_kind kind; /* which union member is set */
  int n;             /* element count for lists (ints, comps, dims, ...) */
  union {
    int64_t i;            /* INT */
    bool b;               /* BOOL */
    const char *s;        /* STR (unescaped), IDENT, RAW (verbatim text) */
    int64_t *ints;        /* INTS */
    struct {
      int64_t **v;        /* INTSS: rows */
      int *lens;          /* INTSS: row lengths */
    } intss;
    tr_comp *comp;        /* COMP */
    tr_comp **comps;      /* COMPS */
    tr_instr **instrs;    /* INSTRS */
    tr_slice_dim *slice;  /* SLICE */
    tr_pad_dim *pad;      /* PADDING */
    tr_window_dim *win;   /* WINDOW */
    tr_convdims *conv;    /* DIMLABELS */
  } u;
} tr_attr;

/* ---- shapes ---- */
typedef struct tr_shape tr_shape;
struct tr_shape {
  tr_dtype dtype;         /* TR_DT_TUPLE for tuples */
  int rank;               /* number of dims (arrays) */
  int64_t *dims;          /* sizes; -1 for an unbounded dynamic dim '?' */
  uint8_t *dynamic;       /* per dim 1 when written '<=N'; NULL if none */
  int64_t *layout;        /* minor_to_major, NULL when not written */
  const char *layout_ext; /* verbatim layout text after ':' (tiles, ...) */
  bool has_layout;        /* a layout (possibly empty for scalars) was written */
  bool buffer;            /* an array in XLA's buffer shape, written b(f32[4]) */
  int nelems;             /* tuple element count */
  tr_shape **elems;       /* tuple elements */
};

int64_t tr_shape_count(const tr_shape *s); /* elements; -1 if dynamic */
bool tr_shape_is_array(const tr_shape *s);
/* Same dtype and dims (layouts ignored); tuples compare elementwise. */
bool tr_shape_equal(const tr_shape *a, const tr_shape *b);
bool tr_shape_same_dims(const tr_shape *a, const tr_shape *b);
/* As tr_shape_equal, but an unbounded dynamic dim ('?') matches any size. */
bool tr_shape_compatible(const tr_shape *a, const tr_shape *b);
tr_shape *tr_shape_clone(tr_arena *a, const tr_shape *s);
tr_shape *tr_shape_array(tr_arena *a, tr_dtype dt, int rank, const int64_t *dims);
tr_shape *tr_shape_tuple(tr_arena *a, int n, tr_shape *const *elems);
void tr_shape_print(tr_buf *b, const tr_shape *s, bool layouts);

/* ---- literals ---- */
/* Constant values, row-major in logical order. Element storage: one
 * tr_dtype_size() slot each, holding the dtype's bit pattern (floats as
 * their IEEE/narrow bits, sub-byte ints sign- or zero-extended into a byte,
 * pred as 0/1, complex as two floats). */
typedef struct tr_literal tr_literal;
struct tr_literal {
  tr_shape *shape;      /* the constant's shape */
  bool elided;          /* written as {...}: values unknown */
  bool single;          /* one value written for an array: element 0 is
                           it, the rest zero (XLA's parser); data is NULL
                           past the dense limit and one holds the value */
  unsigned char one[16]; /* that value's bytes (single) */
  void *data;           /* array data (NULL for tuples and elided) */
  int nelems;           /* tuple literal element count */
  tr_literal **elems;   /* tuple literal elements */
};

/* ---- instructions, computations, modules ---- */
struct tr_instr {
  int id;               /* unique in the module, stable across clones */
  const char *name;     /* without '%' */
  tr_op op;             /* opcode */
  const char *opname;   /* spelling (differs from tr_ops[op] for async sugar) */
  tr_shape *shape;      /* result shape */
  tr_instr **operands;  /* in order */
  int noperands;
  tr_instr **users;     /* distinct users, in order of first use */
  int nusers, capusers;
  tr_attr *attrs;       /* in the order written */
  int nattrs;
  tr_attr *attrs_buf;   /* the array tr_instr_add_attr grows in place while
                           attrs is still it, and its capacity */
  int capattrs;
  tr_literal *literal;  /* constant only */
  int64_t param_index;  /* parameter only */
  tr_comp *parent;      /* owning computation */
  bool operand_shapes;  /* operands were written with inline shapes */
  int line, col;        /* where it was written (0 when synthesized) */
};

struct tr_comp {
  int id;               /* unique in the module */
  const char *name;     /* without '%' */
  tr_instr **instrs;    /* in textual (and schedule) order */
  int ninstrs, capinstrs;
  tr_instr *root;       /* result */
  tr_instr **params;    /* by parameter index */
  int nparams;
  bool is_entry;        /* the ENTRY computation */
  const char *exec_thread; /* execution_thread="..." or NULL */
  tr_module *module;    /* owner */
  int line, col;        /* where it was written */
};

typedef struct {
  const char *name;     /* header attribute name */
  const char *text;     /* verbatim value */
} tr_header_attr;

struct tr_module {
  tr_arena *arena;      /* owns everything below */
  const char *name;     /* HloModule name */
  const char *file;     /* file it was read from, for messages */
  tr_header_attr *hattrs; /* header attributes, in order */
  int nhattrs;
  const char *frames;   /* verbatim stack-frame tables, or NULL */
  tr_comp **comps;      /* callees before callers, as in the text */
  int ncomps, capcomps;
  tr_comp *entry;       /* the entry computation */
  int next_id;          /* next instruction/computation id */
};

tr_module *tr_module_new(const char *name);
void tr_module_free(tr_module *m);
/* Deep copy into a fresh arena; ids and names are kept. */
tr_module *tr_module_clone(const tr_module *m);

tr_comp *tr_comp_new(tr_module *m, const char *name);
tr_comp *tr_module_find_comp(const tr_module *m, const char *name);
tr_instr *tr_comp_find(const tr_comp *c, const char *name);

/* Creates an instruction (not yet in a computation). */
tr_instr *tr_instr_new(tr_module *m, tr_op op, const char *name, tr_shape *shape);
void tr_comp_append(tr_comp *c, tr_instr *in);
void tr_instr_set_operands(tr_instr *in, tr_instr **ops, int n);
void tr_instr_add_user(tr_instr *in, tr_instr *user);
/* Rebuilds every use list in the module from operand lists. */
void tr_module_rebuild_users(tr_module *m);

/* ---- editing (passes, the reducer) ----
 * Computations keep instructions in an order where operands come first;
 * these calls keep use lists exact. */
void tr_instr_remove_user(tr_instr *in, tr_instr *user);
void tr_instr_replace_operand(tr_instr *in, int i, tr_instr *with);
/* Makes every user of old (and the root, if old is it) use with instead. */
void tr_instr_replace_uses(tr_instr *old, tr_instr *with);
/* Inserts in just before pos (at the end when pos is NULL). */
void tr_comp_insert_before(tr_comp *c, tr_instr *pos, tr_instr *in);
/* Removes an instruction that has no users and is not the root. */
void tr_comp_remove(tr_comp *c, tr_instr *in);
/* Computations in an order where callees come before callers (the order
 * the printer writes); out must hold m->ncomps entries. */
void tr_module_callee_order(const tr_module *m, tr_comp **out);

tr_attr *tr_instr_attr(const tr_instr *in, tr_attr_key k);
/* Typed attribute getters: the value of attribute k of in when it is there
 * with the expected kind; otherwise NULL (and *n = 0), def or false. */
const int64_t *tr_attr_ints(const tr_instr *in, tr_attr_key k, int *n);
int64_t tr_attr_int(const tr_instr *in, tr_attr_key k, int64_t def);
bool tr_attr_bool(const tr_instr *in, tr_attr_key k);
const char *tr_attr_ident(const tr_instr *in, tr_attr_key k);
tr_comp *tr_attr_comp(const tr_instr *in, tr_attr_key k);
/* Whether x is one of v[0..n) (a dimension list holds d). */
bool tr_ints_has(const int64_t *v, int n, int64_t x);
/* Appends an attribute; returns it for the caller to fill. */
tr_attr *tr_instr_add_attr(tr_module *m, tr_instr *in, tr_attr_key k,
                           tr_attr_kind kind, const char *name);
/* Every computation an instruction calls, in attribute order. */
int tr_instr_called(const tr_instr *in, tr_comp **out, int max);
/* The fusion computation of a fusion instruction, or NULL. */
tr_comp *tr_instr_fused(const tr_instr *in);
bool tr_comp_is_fusion_body(const tr_module *m, const tr_comp *c);
/* Async pairs (desugar.c): whether m has an <op>-start/-done pair, and
 * the rewrite that replaces each -done with the synchronous op on its
 * start's operands (one device: nothing runs concurrently). Returns the
 * number of pairs rewritten; starts and updates left unused are removed. */
bool tr_module_has_async_pairs(const tr_module *m);
/* The synchronous op of an <op>-start or <op>-done (the parser models a
 * start's attributes as that op's); *start tells which. False otherwise. */
bool tr_async_pair_op(const tr_instr *in, tr_op *base, bool *start);
int tr_desugar_async(tr_module *m);
/* A copy of m with its async pairs rewritten, or NULL when it has none to
 * rewrite (the evaluators run the copy instead of m). */
tr_module *tr_async_sync_copy(const tr_module *m);
/* set-dimension-size where its semantics are static (desugar.c): its
 * reduces get the padding masked with their init, its get-dimension-sizes
 * the clamped size. Returns how many were rewritten. */
int tr_desugar_dynamic(tr_module *m);
/* A copy of m with its async pairs and static set-dimension-sizes
 * rewritten, or NULL when nothing is to rewrite (the evaluators run the
 * copy instead of m). */
tr_module *tr_desugared_copy(const tr_module *m);

/* One instruction of m (any computation) as a module of its own
 * (extract.c): a new entry whose parameters are in's distinct non-constant
 * operands, in operand order (constants are copied with their literal),
 * whose root is a copy of in, with the computations in calls. sources
 * (in->noperands entries, may be NULL) gets m's operand behind each
 * parameter and *nsources their count. NULL when in is not in m or is a
 * parameter. */
tr_module *tr_extract_instr(const tr_module *m, const tr_instr *in, const tr_instr **sources,
                            int *nsources);
/* The same for a group of instructions of one computation, in an order
 * where operands come first; the last is the root. Operands from outside
 * the group become parameters (sources: one entry per operand of every
 * member at most). */
tr_module *tr_extract_group(const tr_module *m, const tr_instr *const *group, int ngroup,
                            const tr_instr **sources, int *nsources);
/* Removes the header's entry_computation_layout (a module whose entry
 * signature was changed must not keep the old one: XLA checks it). */
void tr_drop_entry_layout(tr_module *m);

/* ---- text ---- */
typedef struct {
  bool fill_elided;     /* give elided constants deterministic values */
  size_t arena_limit;   /* fail as out of memory once the module holds this
                           many bytes (a test of that path); 0: no limit */
} tr_parse_opts;

/* Parses HLO text. On error returns NULL and adds "file:line:col: ..."
 * diagnostics. Never aborts on malformed input; running out of memory is
 * an error too ("out of memory", at the token being read). */
tr_module *tr_parse(const char *file, const char *text, size_t len,
                    const tr_parse_opts *opts, tr_diag *d);
tr_module *tr_parse_file(const char *path, const tr_parse_opts *opts,
                         tr_diag *d);
/* Canonical HLO text that tr_parse reads back to the same module. */
void tr_print_module(tr_buf *b, const tr_module *m);
void tr_print_instr(tr_buf *b, const tr_instr *in);
void tr_print_literal(tr_buf *b, const tr_literal *lit);
void tr_print_attr_value(tr_buf *b, const tr_attr *at); /* as written after '=' */
/* Structural equality of two modules (names, shapes, attributes, literal
 * bits); on mismatch writes a reason into why when given. */
bool tr_module_equal(const tr_module *a, const tr_module *b, tr_buf *why);
/* Whether b is the same program as a with names aside (same.c): every
 * instruction of every computation matched by its structure (opcode,
 * shape, literal, attributes, operands' structure), ignoring instruction
 * and computation names, metadata, frontend attributes, statistics,
 * control predecessors, default layouts, attribute order and the order
 * of instructions. What a compiler received against what was sent. When
 * they differ and diff is given, it gets one line per instruction of a's
 * entry that b lacks ("- ...") and of b's that a lacks ("+ ..."), names
 * replaced by operand opcodes, and *dead_only tells whether every
 * difference is code the root does not use. */
bool tr_module_same_program(const tr_module *a, const tr_module *b, tr_buf *diff,
                            bool *dead_only);
/* Whether a and b compute the same values up to the canonical forms
 * XLA's HLO -> MLIR -> HLO trip writes (same.c): unused and duplicate
 * instructions, identity moves, layouts, reshape chains, splat constants
 * as broadcast scalars, nested output tuples, get-tuple-element of a
 * tuple, the operand order of commutative ops. Their entry roots get
 * the same canonical number and their side-effecting instructions match. */
bool tr_module_same_canonical(const tr_module *a, const tr_module *b);

/* ---- verification and shape inference ---- */
/* Checks every instruction: operand counts and types, attributes, called
 * computations and the declared shape against the inferred one. Adds one
 * diagnostic per problem, located at the instruction. */
tr_status tr_verify(const tr_module *m, tr_diag *d);
/* Infers the result shape of in from its operands and attributes. Ops whose
 * shape is only declared (TR_RULE_DECLARED, and rules that need a declared
 * result such as broadcast or convert) return a copy of the declared shape,
 * or NULL when none was written. Returns NULL and writes a reason into why
 * when the instruction is invalid. */
tr_shape *tr_infer_shape(tr_arena *a, const tr_instr *in, tr_buf *why);
/* Operands an instruction must have (-1: variadic); a sparse dot takes one
 * more per sparsity descriptor. */
int tr_instr_arity(const tr_instr *in);
/* Whether the verifier infers the result of op although its rule is
 * TR_RULE_DECLARED (complex, real, imag, rng-bit-generator, ...). */
bool tr_declared_inferred(tr_op op);

#endif
