/* vk.h - kernels for trench verify: a C or CUDA source compiled by clang
 * 14 to LLVM IR, read through LLVM's C API and decoded into a compact form
 * (kernel.c), and the executor over it (exec.c): concrete control flow,
 * integers and addresses; float data as vx expressions; branches on data
 * forked by replaying the run with recorded decisions; a GPU model of
 * blocks, threads, shared memory, barriers, warp shuffles and atomics. */
#ifndef TR_VK_H
#define TR_VK_H

#include "../ir/ir.h"
#include "../ir/tensor.h"
#include "vx.h"

typedef struct vk_kernel vk_kernel;

typedef struct {
  bool cuda;             /* compile as CUDA device code */
  const char *workdir;   /* scratch folder for the IR and prelude */
  const char *cflags;    /* extra flags for clang (may be NULL) */
  void **llvm_ctx;       /* when not NULL: set to the kernel's LLVM context
                            as soon as it exists (LLVM's memory is no heap
                            frame's: the frame's owner disposes of it with
                            vk_llvm_dispose after an out-of-memory unwind) */
} vk_compile_opts;

/* Compiles path and loads its function "kernel" (the first defined
 * function when there is none so named). */
tr_status vk_load(const char *path, const vk_compile_opts *o, vk_kernel **out, tr_diag *d);
void vk_free(vk_kernel *k);
/* Disposes of an LLVM context (and the module in it) that vk_load made;
 * only after an unwind freed its kernel (vk_compile_opts.llvm_ctx). */
void vk_llvm_dispose(void *ctx);
/* Pointer parameters of the kernel (every parameter must be one). */
int vk_nparams(const vk_kernel *k);
/* The LLVM IR text (for --dump). */
char *vk_ir_text(const vk_kernel *k);

/* What one run found beside values. */
typedef enum {
  VK_ISSUE_OOB_READ, VK_ISSUE_OOB_WRITE, VK_ISSUE_RACE_WW, VK_ISSUE_RACE_RW,
  VK_ISSUE_UNINIT_SHARED
} vk_issue_kind;
const char *vk_issue_name(vk_issue_kind k);

typedef struct {
  vk_issue_kind kind;
  int buf;               /* parameter index, or -1 for shared/local memory */
  int64_t off;           /* byte offset of the access */
  int64_t elem;          /* offset / element size (buffers) */
  char msg[200];
} vk_issue;

typedef struct {
  int nbufs;                 /* = vk_nparams */
  const int64_t *count;      /* elements per buffer */
  const tr_dtype *dtype;     /* F32 or S32 (S64 too) per buffer */
  const bool *is_out;        /* written by the kernel (entry contents arbitrary) */
  bool zero_out;             /* ...unless the outputs start zeroed */
  /* Concrete contents per buffer or NULL: integer inputs always; in
   * concrete mode every buffer, outputs included (their entry values). */
  tr_tensor *const *conc;
  bool concrete;             /* float data concrete too, rounded as f32 */
  unsigned grid[3], block[3];/* CUDA launch; {1,1,1} for C */
  const unsigned char *block_mask; /* run only blocks with a nonzero entry */
  bool reverse_threads;      /* schedule the threads of a block last-first */
  int quantum;               /* > 0: threads take turns of this many
                                instructions (1: lockstep) instead of
                                running to the next barrier */
  const int *dec;            /* decisions for branches on data, in order */
  int ndec;
  int64_t max_steps;         /* instruction budget (0: 200 million) */
  /* Concrete mode: the value of memory never written (buffer, byte
   * offset; buffers >= 1000 are shared or local ones); NULL gives 7777. */
  double (*undef_value)(void *ctx, int64_t buf, int64_t off);
  void *undef_ctx;
} vk_run_cfg;

typedef struct {
  tr_status st;              /* non-OK: diag says why (unsupported, budget) */
  vx ***val;                 /* per buffer (outputs): value per element; NULL
                                where the run never wrote it */
  int32_t **writer_block;    /* per output buffer, per element: last block
                                that wrote it, -1 none */
  int32_t **writer_first;    /* the same, first block */
  int *dec;                  /* decisions taken, in order */
  vx **conds;                /* the condition of each decision */
  int ndec;
  vx *pc;                    /* path condition */
  vk_issue *issues;
  int nissues;
  int64_t steps;
} vk_result;

tr_status vk_run(const vk_kernel *k, vx_ctx *cx, const vk_run_cfg *cfg, vk_result *r, tr_diag *d);
void vk_result_free(vk_result *r, int nbufs);

/* Native execution of a C kernel in a forked child (native.c): bufs are
 * the buffers in parameter order; outputs come back in place. guard: 1
 * places every buffer against an inaccessible page after its end, -1
 * before its start, 0 none. Returns 0 on success, the signal number when
 * the child died of one, -1 when it could not run (diag). */
int vk_native_run(const char *so_path, tr_tensor **bufs, int n, int guard, double timeout_s,
                  tr_diag *d);
/* Compiles a C kernel natively into so_path. */
/* The environment for a tool trench verify runs (clang, a host wrapper):
 * the process's with TMPDIR set to dir (the scratch folder), so the tool's
 * own temporary files (clang's objects) go with the folder even when an
 * interrupt kills the tool midway. NULL-terminated; vk_env_free. */
char **vk_env(const char *dir);
void vk_env_free(char **env);
tr_status vk_native_build(const char *src, const char *so_path, const char *cflags, tr_diag *d);

/* KernelBench-style Python sources (kbench.c): the CUDA string of a
 * load_inline call; its host wrapper (functions=[...]) built natively by
 * clang++-14 against stub torch headers and run on tensors of the reference's
 * parameter shapes to record its launch; the launch written as a CUDA
 * kernel in the verify convention (cu_path, with its launch line). */
typedef struct {
  int nin;
  const tr_dtype *dtype;
  const tr_shape *const *shape;
  tr_dtype out_dtype;
  const char *workdir;
} vk_kbench_io;
typedef struct {
  char cu_path[700];
  char kernel_name[128];
  unsigned grid[3], block[3], smem;
  bool zero_out;             /* the returned tensor came from torch::zeros */
} vk_kbench_launch;
tr_status vk_kbench_prepare(const char *py, const vk_kbench_io *io, vk_kbench_launch *L, tr_diag *d);

#endif
