/* kbench.c - KernelBench-style Python sources for trench verify (vk.h):
 * a .py file whose load_inline(...) call takes CUDA source (device
 * kernels and a host wrapper taking torch::Tensor) as a Python string.
 * The string is extracted; the host wrapper is compiled natively by clang++-14
 * against stub torch headers trench writes (a Tensor is a shape and a
 * host buffer), with every kernel<<<grid, block, smem>>>(args) rewritten
 * into a call that records the launch, and run on tensors of the
 * reference's parameter shapes. The one recorded launch becomes a CUDA
 * kernel in the verify convention: the device functions and a
 * kernel(in..., out) that calls the launched one with the recorded
 * arguments (tensors mapped to buffers, scalars as constants). */
#include "vk.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The stand-in for torch/extension.h and the CUDA runtime on the host:
 * enough of torch::Tensor for a host wrapper to run and print its
 * allocations ("alloc ID zero|empty"), launches ("launch NAME gx gy gz bx
 * by bz smem ARGS", each argument T<id>+<byte offset>, I<int>, F<float>
 * or P? for a pointer into no tensor). */
static const char *const torch_stub[] = {
  "// trench's stand-in for the torch C++ extension API (trench verify)\n"
  "#pragma once\n"
  "#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <cmath>\n"
  "#include <vector>\n#include <algorithm>\n#include <string>\n#include <type_traits>\n"
  "#define __global__\n#define __device__\n#define __host__\n#define __forceinline__ inline\n"
  "#define __launch_bounds__(...)\n"
  "struct dim3 { unsigned x, y, z; dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {} };\n"
  "typedef int cudaError_t;\nenum { cudaSuccess = 0 };\ntypedef void *cudaStream_t;\n"
  "static inline cudaError_t cudaGetLastError() { return 0; }\n"
  "static inline cudaError_t cudaDeviceSynchronize() { return 0; }\n"
  "static inline const char *cudaGetErrorString(cudaError_t) { return \"no error\"; }\n"
  "namespace c10 { enum class ScalarType { Float, Double, Int, Long, Half, BFloat16, Bool, Byte }; }\n"
  "namespace torch {\n",
  "using c10::ScalarType;\n"
  "constexpr ScalarType kFloat32 = ScalarType::Float, kFloat = ScalarType::Float, kFloat64 = ScalarType::Double,\n"
  "  kDouble = ScalarType::Double, kInt32 = ScalarType::Int, kInt = ScalarType::Int, kInt64 = ScalarType::Long,\n"
  "  kLong = ScalarType::Long;\n"
  "enum DeviceType { kCUDA, kCPU };\n"
  "struct Device { Device(DeviceType = kCUDA) {} bool is_cuda() const { return true; } };\n"
  "struct TensorOptions {\n"
  "  ScalarType st = ScalarType::Float;\n"
  "  TensorOptions dtype(ScalarType s) const { TensorOptions o = *this; o.st = s; return o; }\n"
  "  TensorOptions device(Device) const { return *this; }\n"
  "  TensorOptions requires_grad(bool) const { return *this; }\n"
  "};\n"
  "inline size_t esize(ScalarType s) {\n"
  "  switch (s) { case ScalarType::Double: case ScalarType::Long: return 8; case ScalarType::Half:\n"
  "  case ScalarType::BFloat16: return 2; case ScalarType::Bool: case ScalarType::Byte: return 1; default: return 4; }\n"
  "}\n"
  "struct Buf { int id; size_t bytes; unsigned char *data; };\n"
  "inline std::vector<Buf> &bufs() { static std::vector<Buf> b; return b; }\n"
  "class Tensor {\n",
  " public:\n"
  "  std::vector<int64_t> shape; ScalarType st = ScalarType::Float; int id = -1; unsigned char *ptr = nullptr;\n"
  "  int64_t numel() const { int64_t n = 1; for (auto d : shape) n *= d; return n; }\n"
  "  int64_t size(int64_t i) const { return shape[i < 0 ? i + (int64_t)shape.size() : i]; }\n"
  "  std::vector<int64_t> sizes() const { return shape; }\n"
  "  int64_t dim() const { return (int64_t)shape.size(); }\n"
  "  int64_t stride(int64_t i) const { int64_t s = 1; for (size_t k = (size_t)(i < 0 ? i + dim() : i) + 1; k < shape.size(); k++) s *= shape[k]; return s; }\n"
  "  template <typename T> T *data_ptr() const { return (T *)ptr; }\n"
  "  void *data_ptr() const { return ptr; }\n"
  "  TensorOptions options() const { TensorOptions o; o.st = st; return o; }\n"
  "  ScalarType scalar_type() const { return st; }\n"
  "  ScalarType dtype() const { return st; }\n"
  "  Device device() const { return Device(); }\n"
  "  bool is_cuda() const { return true; }\n"
  "  bool is_contiguous() const { return true; }\n"
  "  Tensor contiguous() const { return *this; }\n"
  "  Tensor cuda() const { return *this; }\n"
  "  int64_t element_size() const { return (int64_t)esize(st); }\n"
  "  Tensor view(std::vector<int64_t> s) const { return reshape(s); }\n"
  "  Tensor reshape(std::vector<int64_t> s) const {\n"
  "    Tensor t = *this; int64_t k = 1, at = -1;\n"
  "    for (size_t i = 0; i < s.size(); i++) { if (s[i] < 0) at = (int64_t)i; else k *= s[i]; }\n"
  "    if (at >= 0) s[(size_t)at] = numel() / (k ? k : 1);\n"
  "    t.shape = s; return t;\n"
  "  }\n"
  "};\n"
  ,"inline Tensor alloc(std::vector<int64_t> shape, ScalarType st, const char *how) {\n"
  "  Tensor t; t.shape = shape; t.st = st; t.id = (int)bufs().size();\n"
  "  size_t n = (size_t)t.numel() * esize(st);\n"
  "  t.ptr = (unsigned char *)calloc(n ? n : 1, 1);\n"
  "  bufs().push_back(Buf{t.id, n, t.ptr});\n"
  "  if (how) printf(\"alloc %d %s\\n\", t.id, how);\n"
  "  return t;\n"
  "}\n"
  "inline Tensor zeros(std::vector<int64_t> s, TensorOptions o = TensorOptions()) { return alloc(s, o.st, \"zero\"); }\n"
  "inline Tensor empty(std::vector<int64_t> s, TensorOptions o = TensorOptions()) { return alloc(s, o.st, \"empty\"); }\n"
  "inline Tensor zeros_like(const Tensor &t) { return alloc(t.shape, t.st, \"zero\"); }\n"
  "inline Tensor zeros_like(const Tensor &t, TensorOptions o) { return alloc(t.shape, o.st, \"zero\"); }\n"
  "inline Tensor empty_like(const Tensor &t) { return alloc(t.shape, t.st, \"empty\"); }\n"
  "inline Tensor empty_like(const Tensor &t, TensorOptions o) { return alloc(t.shape, o.st, \"empty\"); }\n"
  "}\n"
  "namespace at { using torch::Tensor; namespace cuda { inline cudaStream_t getCurrentCUDAStream() { return 0; } } }\n"
  "#define TORCH_CHECK(c, ...) do { if (!(c)) { fprintf(stderr, \"TORCH_CHECK failed: %s\\n\", #c); exit(3); } } while (0)\n"
  "#define AT_ASSERTM(c, ...) TORCH_CHECK(c, \"\")\n"
  "inline void trench_argp(const void *p) {\n"
  "  for (auto &b : torch::bufs())\n"
  "    if ((const unsigned char *)p >= b.data && (const unsigned char *)p < b.data + (b.bytes ? b.bytes : 1)) {\n"
  "      printf(\" T%d+%lld\", b.id, (long long)((const unsigned char *)p - b.data)); return;\n"
  "    }\n"
  "  printf(\" P?\");\n"
  "}\n"
  "template <typename T> typename std::enable_if<std::is_pointer<T>::value>::type trench_arg(T p) { trench_argp((const void *)p); }\n"
  "template <typename T> typename std::enable_if<std::is_integral<T>::value || std::is_enum<T>::value>::type trench_arg(T v) { printf(\" I%lld\", (long long)v); }\n"
  "template <typename T> typename std::enable_if<std::is_floating_point<T>::value>::type trench_arg(T v) { printf(\" F%.17g\", (double)v); }\n"
  "template <typename... A> void trench_launch(const char *name, dim3 g, dim3 b, size_t smem, A... a) {\n"
  "  printf(\"launch %s %u %u %u %u %u %u %zu\", name, g.x, g.y, g.z, b.x, b.y, b.z, smem);\n"
  "  (trench_arg(a), ...);\n"
  "  printf(\"\\n\");\n"
  "}\n",
  NULL};

/* ---- the Python file ---- */

static bool is_id(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

/* The Python string literal starting at p (an optional r prefix, then
 * triple or single quotes), unescaped unless raw; NULL if none. */
static char *py_string(const char *p, const char **end) {
  bool raw = false;
  if (*p == 'r' || *p == 'R') { raw = true; p++; }
  char q = *p;
  if (q != '"' && q != '\'') return NULL;
  bool triple = p[1] == q && p[2] == q;
  p += triple ? 3 : 1;
  tr_buf b = {0};
  for (;;) {
    if (!*p) { tr_buf_free(&b); return NULL; }
    if (triple ? (p[0] == q && p[1] == q && p[2] == q) : *p == q) break;
    if (*p == '\\' && !raw && p[1]) {
      char c = p[1];
      tr_buf_putc(&b, c == 'n' ? '\n' : c == 't' ? '\t' : c == '\n' ? 0 : c);
      if (c == '\n') b.n--; /* a line continuation */
      p += 2;
      continue;
    }
    tr_buf_putc(&b, *p++);
  }
  if (end) *end = p + (triple ? 3 : 1);
  char *r = tr_xstrdup(b.n ? tr_buf_str(&b) : " ");
  tr_buf_free(&b);
  return r;
}

/* The value of keyword argument key in the load_inline call: a string
 * literal, a list's first string, or a variable assigned a string. */
static char *kwarg_string(const char *src, const char *call, const char *key) {
  const char *p = strstr(call, key);
  if (!p) return NULL;
  p += strlen(key);
  while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '[' || *p == '(') p++;
  char *s = py_string(p, NULL);
  if (s) return s;
  char name[128];
  int n = 0;
  while (is_id(*p) && n < 127) name[n++] = *p++;
  name[n] = 0;
  if (!n) return NULL;
  /* the assignment name = "..." (the last one before the call) */
  char *found = NULL;
  for (const char *q = src; (q = strstr(q, name)) && q < call; q += n) {
    if (q > src && (is_id(q[-1]) || q[-1] == '.')) continue;
    const char *r = q + n;
    while (*r == ' ') r++;
    if (*r != '=' || r[1] == '=') continue;
    r++;
    while (*r == ' ' || *r == '(' || *r == '\n') r++;
    char *v = py_string(r, NULL);
    if (v) { tr_free(found); found = v; }
  }
  return found;
}

/* ---- splitting the CUDA string ---- */

/* The end (one past the closing brace) of the function whose header
 * starts at p, or NULL. */
static const char *func_end(const char *p) {
  const char *b = strchr(p, '{'), *semi = strchr(p, ';');
  if (!b || (semi && semi < b)) return semi ? semi + 1 : NULL; /* a declaration */
  int depth = 0;
  for (const char *q = b; *q; q++) {
    if (*q == '{') depth++;
    else if (*q == '}' && --depth == 0) return q + 1;
  }
  return NULL;
}

/* Where a __global__ or __device__ definition starting at or after p
 * begins (including a template<...> line before it), or NULL. */
static const char *next_device(const char *p, const char **kw) {
  const char *g = strstr(p, "__global__"), *dv = strstr(p, "__device__");
  const char *k = !g ? dv : !dv ? g : g < dv ? g : dv;
  if (!k) return NULL;
  *kw = k;
  const char *ls = k;
  while (ls > p && ls[-1] != '\n') ls--;
  /* qualifiers before the keyword on the same line (static, extern "C") */
  return ls;
}

/* Splits the CUDA string into device code (the __global__/__device__
 * definitions, with #define lines) and host code (the rest, with every
 * launch rewritten into trench_launch). */
static bool split_source(const char *cu, tr_buf *dev, tr_buf *host, tr_diag *d) {
  const char *p = cu;
  for (const char *l = cu; *l;) {
    const char *e = strchr(l, '\n');
    size_t n = e ? (size_t)(e - l) : strlen(l);
    const char *t = l;
    while (*t == ' ' || *t == '\t') t++;
    if (!strncmp(t, "#define", 7)) tr_buf_printf(dev, "%.*s\n", (int)n, l);
    l += n + (e ? 1 : 0);
  }
  tr_buf h = {0};
  for (;;) {
    const char *kw;
    const char *s = next_device(p, &kw);
    if (!s) { tr_buf_puts(&h, p); break; }
    const char *e = func_end(kw);
    if (!e) { tr_diag_errorf(d, "kernel: a __global__ or __device__ definition without its end"); tr_buf_free(&h); return false; }
    tr_buf_printf(&h, "%.*s", (int)(s - p), p);
    tr_buf_printf(dev, "%.*s\n", (int)(e - s), s);
    p = e;
  }
  /* launches: NAME<<<G, B[, S[, stream]]>>>(ARGS) */
  const char *t = tr_buf_str(&h);
  for (;;) {
    const char *l = strstr(t, "<<<");
    if (!l) { tr_buf_puts(host, t); break; }
    const char *ne = l;
    while (ne > t && (ne[-1] == ' ')) ne--;
    const char *ns = ne;
    while (ns > t && (is_id(ns[-1]) || ns[-1] == ':')) ns--;
    const char *r = strstr(l, ">>>");
    if (ns == ne || !r) { tr_diag_errorf(d, "kernel: a launch <<<...>>> without a kernel name or its end"); tr_buf_free(&h); return false; }
    char *cfg[4] = {0};
    int nc = 0, depth = 0;
    const char *a = l + 3;
    for (const char *q = a; q <= r; q++) {
      if (q == r || (*q == ',' && depth == 0)) {
        if (nc < 4) cfg[nc++] = strndup(a, (size_t)(q - a));
        a = q + 1;
      } else if (*q == '(' || *q == '{' || *q == '[') depth++;
      else if (*q == ')' || *q == '}' || *q == ']') depth--;
    }
    const char *o = r + 3;
    while (*o == ' ' || *o == '\n') o++;
    if (nc < 2 || *o != '(') {
      for (int i = 0; i < nc; i++) tr_free(cfg[i]);
      tr_diag_errorf(d, "kernel: a launch needs <<<grid, block>>>(arguments)");
      tr_buf_free(&h);
      return false;
    }
    tr_buf_printf(host, "%.*strench_launch(\"%.*s\", dim3(%s), dim3(%s), (size_t)(%s)", (int)(ns - t), t, (int)(ne - ns), ns,
                  cfg[0], cfg[1], nc > 2 ? cfg[2] : "0");
    for (int i = 0; i < nc; i++) tr_free(cfg[i]);
    o++;
    const char *sp = o;
    while (*sp == ' ' || *sp == '\n') sp++;
    if (*sp != ')') tr_buf_puts(host, ", ");
    t = o;
  }
  tr_buf_free(&h);
  return true;
}

/* ---- running the host wrapper ---- */

static int run_capture(char *const *argv, const char *outpath, const char *errpath, unsigned timeout_s,
                       const char *workdir) {
  char **env = vk_env(workdir);
  pid_t p = fork();
  if (p < 0) {
    vk_env_free(env);
    return -1;
  }
  if (p == 0) {
    if (outpath && !freopen(outpath, "w", stdout)) _exit(126);
    if (errpath && !freopen(errpath, "w", stderr)) _exit(126);
    alarm(timeout_s);
    execvpe(argv[0], argv, env);
    _exit(127);
  }
  vk_env_free(env);
  int st;
  while (waitpid(p, &st, 0) < 0 && errno == EINTR) {}
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char *ctype(tr_dtype dt) {
  switch (dt) {
  case TR_DT_F32: return "float";
  case TR_DT_F64: return "double";
  case TR_DT_S32: return "int";
  case TR_DT_S64: return "long long";
  default: return NULL;
  }
}
static const char *torch_type(tr_dtype dt) {
  switch (dt) {
  case TR_DT_F32: return "torch::kFloat32";
  case TR_DT_F64: return "torch::kFloat64";
  case TR_DT_S32: return "torch::kInt32";
  case TR_DT_S64: return "torch::kInt64";
  default: return NULL;
  }
}

static char *first_line_of(const char *path) {
  char *txt = NULL;
  size_t len = 0;
  tr_diag dd = {0};
  if (tr_read_file(path, &txt, &len, &dd) != TR_OK) { tr_diag_clear(&dd); return NULL; }
  for (char *q = txt; *q; q++) if (*q == '\n') { *q = 0; break; }
  return txt;
}

tr_status vk_kbench_prepare(const char *py, const vk_kbench_io *io, vk_kbench_launch *L, tr_diag *d) {
  memset(L, 0, sizeof *L);
  char *src = NULL;
  size_t len = 0;
  if (tr_read_file(py, &src, &len, d) != TR_OK) return TR_ERR_IO;
  tr_status st = TR_ERR_INVALID;
  char *cu = NULL, *fn = NULL;
  tr_buf dev = {0}, host = {0}, txt = {0};
  const char *call = strstr(src, "load_inline(");
  if (!call) { tr_diag_errorf(d, "%s: no load_inline(...) call", py); goto out; }
  cu = kwarg_string(src, call, "cuda_sources=");
  if (!cu) { tr_diag_errorf(d, "%s: load_inline: expected cuda_sources= a string (or a variable assigned one)", py); goto out; }
  fn = kwarg_string(src, call, "functions=");
  if (!fn) { tr_diag_errorf(d, "%s: load_inline: expected functions=[\"NAME\", ...]", py); goto out; }
  if (!split_source(cu, &dev, &host, d)) goto out;
  /* the host program: the stub, the host code, a main on the shapes */
  char stub[600], hpp[600], exe[600], outp[600], errp[600];
  snprintf(stub, sizeof stub, "%s/torch", io->workdir);
  if (mkdir(stub, 0777) != 0 && errno != EEXIST) { tr_diag_errorf(d, "kernel: cannot create %s", stub); st = TR_ERR_IO; goto out; }
  const char *heads[] = {"torch/extension.h", "cuda_runtime.h", "cuda.h", "ATen/cuda/CUDAContext.h", "c10/cuda/CUDAStream.h"};
  snprintf(stub, sizeof stub, "%s/ATen", io->workdir); mkdir(stub, 0777);
  snprintf(stub, sizeof stub, "%s/ATen/cuda", io->workdir); mkdir(stub, 0777);
  snprintf(stub, sizeof stub, "%s/c10", io->workdir); mkdir(stub, 0777);
  snprintf(stub, sizeof stub, "%s/c10/cuda", io->workdir); mkdir(stub, 0777);
  for (size_t i = 0; i < sizeof heads / sizeof *heads; i++) {
    snprintf(stub, sizeof stub, "%s/%s", io->workdir, heads[i]);
    FILE *f = fopen(stub, "w");
    if (!f) { tr_diag_errorf(d, "kernel: cannot write %s", stub); st = TR_ERR_IO; goto out; }
    if (i == 0) for (int j = 0; torch_stub[j]; j++) fputs(torch_stub[j], f);
    else fputs("#pragma once\n#include <torch/extension.h>\n", f);
    fclose(f);
  }
  snprintf(hpp, sizeof hpp, "%s/host.cpp", io->workdir);
  tr_buf_printf(&txt, "#include <torch/extension.h>\n%s\nint main() {\n", tr_buf_str(&host));
  for (int p = 0; p < io->nin; p++) {
    const char *tt = torch_type(io->dtype[p]);
    if (!tt) { tr_diag_errorf(d, "%s: parameter %d has dtype %s (host wrappers: f32, f64, s32, s64)", py, p, tr_dtypes[io->dtype[p]].name); goto out; }
    tr_buf_printf(&txt, "  torch::Tensor a%d = torch::alloc({", p);
    for (int k = 0; k < io->shape[p]->rank; k++) tr_buf_printf(&txt, "%s%lld", k ? ", " : "", (long long)io->shape[p]->dims[k]);
    tr_buf_printf(&txt, "}, %s, nullptr);\n", tt);
  }
  char fname[128];
  int fl = 0;
  while (is_id(fn[fl]) && fl < 127) { fname[fl] = fn[fl]; fl++; }
  fname[fl] = 0;
  tr_buf_printf(&txt, "  torch::Tensor r = %s(", fname);
  for (int p = 0; p < io->nin; p++) tr_buf_printf(&txt, "%sa%d", p ? ", " : "", p);
  tr_buf_puts(&txt, ");\n  printf(\"result %d\\n\", r.id);\n  return 0;\n}\n");
  FILE *f = fopen(hpp, "w");
  if (!f) { tr_diag_errorf(d, "kernel: cannot write %s", hpp); st = TR_ERR_IO; goto out; }
  fputs(tr_buf_str(&txt), f);
  fclose(f);
  snprintf(exe, sizeof exe, "%s/host", io->workdir);
  snprintf(outp, sizeof outp, "%s/host.out", io->workdir);
  snprintf(errp, sizeof errp, "%s/host.err", io->workdir);
  char inc[620];
  snprintf(inc, sizeof inc, "-I%s", io->workdir);
  char *cc[] = {"clang++-14", "-std=c++17", "-O0", "-w", inc, hpp, "-o", exe, NULL};
  if (run_capture(cc, NULL, errp, 120, io->workdir) != 0) {
    char *why = first_line_of(errp);
    tr_diag_errorf(d, "%s: the host wrapper '%s' does not build against trench's torch stub: %s", py, fname, why ? why : "clang++-14 failed");
    tr_free(why);
    goto out;
  }
  char *rn[] = {exe, NULL};
  int rc = run_capture(rn, outp, errp, 20, io->workdir);
  if (rc != 0) {
    char *why = first_line_of(errp);
    tr_diag_errorf(d, "%s: the host wrapper '%s' failed on the reference's shapes (status %d)%s%s", py, fname, rc, why ? ": " : "", why ? why : "");
    tr_free(why);
    goto out;
  }
  /* the record */
  char *rec = NULL;
  size_t rl = 0;
  if (tr_read_file(outp, &rec, &rl, d) != TR_OK) { st = TR_ERR_IO; goto out; }
  int result = -1, nl = 0;
  bool zero[64] = {0};
  char lname[128] = "", args[4096] = "";
  for (char *line = strtok(rec, "\n"); line; line = strtok(NULL, "\n")) {
    int id;
    char how[16];
    if (sscanf(line, "alloc %d %15s", &id, how) == 2) { if (id >= 0 && id < 64) zero[id] = !strcmp(how, "zero"); }
    else if (sscanf(line, "result %d", &id) == 1) result = id;
    else if (!strncmp(line, "launch ", 7)) {
      nl++;
      int used = 0;
      if (sscanf(line, "launch %127s %u %u %u %u %u %u %u%n", lname, &L->grid[0], &L->grid[1], &L->grid[2], &L->block[0],
                 &L->block[1], &L->block[2], &L->smem, &used) >= 8)
        snprintf(args, sizeof args, "%s", line + used);
    }
  }
  tr_free(rec);
  if (nl != 1) {
    tr_diag_errorf(d, "%s: the host wrapper '%s' made %d kernel launches (verify takes exactly one)", py, fname, nl);
    goto out;
  }
  if (result < io->nin) {
    tr_diag_errorf(d, "%s: the host wrapper '%s' does not return a tensor it allocated", py, fname);
    goto out;
  }
  if (L->smem) {
    tr_diag_errorf(d, "%s: the launch of %s asks for %u bytes of dynamic shared memory (not modelled)", py, lname, L->smem);
    goto out;
  }
  L->zero_out = zero[result < 64 ? result : 0];
  /* the kernel in the convention */
  snprintf(L->cu_path, sizeof L->cu_path, "%s/kbench_kernel.cu", io->workdir);
  f = fopen(L->cu_path, "w");
  if (!f) { tr_diag_errorf(d, "kernel: cannot write %s", L->cu_path); st = TR_ERR_IO; goto out; }
  fprintf(f, "// trench-launch: grid=%u,%u,%u block=%u,%u,%u\n// trench-outputs: %s\n", L->grid[0], L->grid[1], L->grid[2],
          L->block[0], L->block[1], L->block[2], L->zero_out ? "zero" : "arbitrary");
  fprintf(f, "// the device code of %s, launched as the host wrapper %s launches it\n", py, fname);
  /* the launched kernel becomes a device function the entry calls */
  const char *dv = tr_buf_str(&dev);
  char pat[160];
  snprintf(pat, sizeof pat, " %s(", lname);
  const char *at = strstr(dv, pat);
  const char *g = at ? at : dv;
  while (g > dv && strncmp(g, "__global__", 10)) g--;
  if (!at || strncmp(g, "__global__", 10)) {
    fclose(f);
    tr_diag_errorf(d, "%s: the launched kernel %s is not a __global__ function of the CUDA source", py, lname);
    goto out;
  }
  fprintf(f, "%.*s__device__%s\n", (int)(g - dv), dv, g + 10);
  fprintf(f, "extern \"C\" __global__ void kernel(");
  for (int p = 0; p <= io->nin; p++) {
    tr_dtype dt = p < io->nin ? io->dtype[p] : io->out_dtype;
    if (!ctype(dt)) { fclose(f); tr_diag_errorf(d, "%s: a buffer of dtype %s (f32, f64, s32, s64)", py, tr_dtypes[dt].name); goto out; }
    fprintf(f, "%s%s *b%d", p ? ", " : "", ctype(dt), p);
  }
  fprintf(f, ") {\n  %s(", lname);
  int na = 0;
  for (char *a = strtok(args, " "); a; a = strtok(NULL, " ")) {
    fprintf(f, "%s", na++ ? ", " : "");
    int id;
    long long off;
    if (sscanf(a, "T%d+%lld", &id, &off) == 2) {
      int b = id < io->nin ? id : id == result ? io->nin : -1;
      if (b < 0 || off != 0) {
        fclose(f);
        tr_diag_errorf(d, "%s: argument %d of the launch of %s is %s (verify maps inputs and the returned tensor, from their start)",
                       py, na - 1, lname, b < 0 ? "a tensor that is neither an input nor the result" : "a pointer inside a tensor");
        goto out;
      }
      fprintf(f, "b%d", b);
    } else if (a[0] == 'I') fprintf(f, "%s", a + 1);
    else if (a[0] == 'F') fprintf(f, "%s", a + 1);
    else {
      fclose(f);
      tr_diag_errorf(d, "%s: argument %d of the launch of %s points into no tensor", py, na - 1, lname);
      goto out;
    }
  }
  fprintf(f, ");\n}\n");
  fclose(f);
  snprintf(L->kernel_name, sizeof L->kernel_name, "%s", lname);
  st = TR_OK;
out:
  tr_free(src);
  tr_free(cu);
  tr_free(fn);
  tr_buf_free(&dev);
  tr_buf_free(&host);
  tr_buf_free(&txt);
  return st;
}
