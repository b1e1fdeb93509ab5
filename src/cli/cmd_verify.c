/* cmd_verify.c - "trench verify": checks a C or CUDA kernel against an HLO
 * reference for all inputs, one output location at a time (src/verify/,
 * docs/VERIFY.md). The work needs LLVM and Z3, which only the sibling
 * binary trench-verify links (the same commands plus this one's
 * implementation, src/verify/verify_cli.c): trench itself stays small
 * and starts under tight memory limits, and hands verify over to it. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Defined in trench-verify only (weak: NULL in trench). */
int tr_verify_cli(const cli_cmd *cmd, int argc, char **argv) __attribute__((weak));

static int run(int argc, char **argv);

const cli_cmd cli_cmd_verify = {
  "verify", "check a C or CUDA kernel against a reference for all inputs",
  "Usage: trench verify --ref REF.hlo --kernel K.c|K.cu|K.py [OPTIONS]\n"
  "\n"
  "Executes the kernel symbolically over its LLVM IR (clang-14 compiles it)\n"
  "and evaluates the HLO reference symbolically, for chosen output\n"
  "locations, with every float input element a symbol. Each location gets\n"
  "a verdict: 'equivalent over the reals' (same normal form, or Z3 proves\n"
  "no input makes them differ), 'counterexample' (Z3 found inputs where\n"
  "they differ and the kernel run concretely on them fails trench's\n"
  "oracle against the reference) or 'unknown'. Out-of-bounds accesses and\n"
  "races are reported for the whole kernel, each confirmed concretely.\n"
  "The kernel is void kernel(T *in0, ..., float *out0, ...): one pointer\n"
  "per reference parameter, then one per output, shapes those of the\n"
  "reference (docs/VERIFY.md). A .py is a KernelBench-style source: its\n"
  "load_inline CUDA string is extracted, its host wrapper run natively on\n"
  "tensors of the reference's shapes to record the launch, which is checked.\n"
  "\n"
  "Options:\n"
  "      --ref FILE        the HLO reference module\n"
  "      --kernel FILE     the kernel: .c (C11), .cu (CUDA device code) or .py\n"
  "                        (load_inline CUDA with a torch host wrapper)\n"
  "      --grid X[,Y[,Z]]  CUDA grid (default: a 'trench-launch: grid=..'\n"
  "                        line in the kernel file)\n"
  "      --block X[,Y[,Z]] CUDA block (likewise 'block=..')\n"
  "      --locations L     'i,j;k,l' element indices of out0 ('outN:i,j' for\n"
  "                        others), or 'all'; default: every corner, each\n"
  "                        dim's ends, middle and tile boundaries with\n"
  "                        their neighbours, and random interior points\n"
  "      --tile N          tile size for the default locations (default: the\n"
  "                        CUDA block's x size; none for C)\n"
  "      --random-locations N  random interior points (default 8)\n"
  "      --max-locations N cap on the default set (default 64)\n"
  "      --budget S        solver seconds per location (default 10)\n"
  "      --max-paths N     paths through branches on data (default 64)\n"
  "      --seed N          seed of the base inputs (integer inputs, symbols\n"
  "                        a model leaves free) and of random locations\n"
  "      --cflags FLAGS    extra clang flags (e.g. '-DN=64')\n"
  "      --shapes K=V,...  size macros for the kernel: -DK=V each (the\n"
  "                        shapes themselves are the reference's)\n"
  "      --save DIR        write the first counterexample's bundle to DIR\n"
  "      --emitted         the kernel is C emitted by 'trench compile' for REF\n"
  "                        (its entry trench_entry is wrapped to the convention)\n"
  "      --first           stop at the first confirmed counterexample\n"
  "      --random N        instead: random differential testing on N seeds\n"
  "                        (the kernel run concretely, judged by the oracle)\n"
  "  -v, --verbose         print paths, slicing and expressions\n"
  "  -h, --help            show this help\n"
  "\n"
  "Exit codes:\n"
  "  0  no counterexample (every verdict equivalent or unknown)\n"
  "  1  a confirmed counterexample (or random: a failing seed); or the\n"
  "     reference or kernel cannot be handled\n"
  "  2  usage error, unreadable file, out of memory\n",
  run,
};

static int run(int argc, char **argv) {
  if (tr_verify_cli) return tr_verify_cli(&cli_cmd_verify, argc, argv);
  char self[4096], path[4200];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    fprintf(stderr, "trench verify: cannot find the trench binary's folder: %s\n", strerror(errno));
    return CLI_EXIT_USAGE;
  }
  self[n] = 0;
  char *slash = strrchr(self, '/');
  if (slash) *slash = 0;
  snprintf(path, sizeof path, "%s/trench-verify", self);
  char **av = calloc((size_t)argc + 2, sizeof *av);
  if (!av) return CLI_EXIT_USAGE;
  av[0] = path;
  for (int i = 0; i < argc; i++) av[1 + i] = argv[i];
  fflush(NULL);
  execv(path, av);
  fprintf(stderr, "trench verify: cannot run %s (make builds it next to trench): %s\n", path, strerror(errno));
  tr_free(av);
  return CLI_EXIT_USAGE;
}
