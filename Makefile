# trench - plain Makefile, no configure step.
#   make            build/trench, build/libtrench.a (embedding), build/embed
#   make test       build and run every test; last line "N passed, N failed"
#   make check-san  the tests under ASan+UBSan
#   make fault-san  the fault tier and a mutation run under ASan+UBSan
#   make fuzz-parser  the HLO parser under libFuzzer (FUZZ_SECONDS=600)
#   make demo       trench's main job: a short fuzz campaign against the
#                   built-in compiler with a planted defect, ending with
#                   the finding's bundle (docs/FUZZ.md)
#   make bench      evaluator benchmarks (BENCH_ARGS=DIR adds a folder of dumps)
#   make bench-builtin  built-in compiler: compile latency, speed vs reference and XLA
CC      ?= cc
BUILD   ?= build
OPT     ?= -O2 -g
WARN    = -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
          -Wmissing-prototypes -Wpointer-arith -Wformat=2 -Wvla \
          -Wno-unused-parameter -Werror=implicit-function-declaration
# WERROR=1 (what .ci/run uses) turns every warning into an error.
WERROR  ?= 0
ifeq ($(WERROR),1)
WARN    += -Werror
endif
CFLAGS  += -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) $(EXTRA_CFLAGS)
LDLIBS  += -lcjson -lm -lpthread
# libtcc (Debian libtcc-dev, runtime and headers from tcc; scripts/deps.sh):
# the JIT's fast in-memory backend (builtin:jit=tcc). Debian's libtcc.a is
# not position independent, so the programs link -no-pie. TCC=0 builds
# without it (jit=tcc then reports that it is missing).
TCC     ?= 1
ifeq ($(TCC),1)
CFLAGS  += -DTRENCH_HAVE_TCC
TCC_LIBS = -ltcc -ldl
PROG_LDFLAGS = -no-pie
endif

# Symbolic kernel verification (src/verify, docs/VERIFY.md): LLVM 14's C
# API and Z3's; only the trench binary links them, the library does not.
LLVM_CONFIG ?= llvm-config-14
VERIFY_CFLAGS = -I$(shell $(LLVM_CONFIG) --includedir 2>/dev/null)
VERIFY_LIBS = $(shell $(LLVM_CONFIG) --ldflags 2>/dev/null) \
  $(shell $(LLVM_CONFIG) --libs core irreader bitreader 2>/dev/null) -lz3 -ldl

LIB_SRC := $(sort $(wildcard src/base/*.c src/ir/*.c src/eval/*.c src/oracle/*.c \
            src/target/*.c src/comp/*.c src/fuzz/*.c src/triage/*.c))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
VERIFY_SRC := $(sort $(wildcard src/verify/*.c))
VERIFY_OBJ := $(VERIFY_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(sort $(wildcard tests/unit/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
DEPS := $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(VERIFY_OBJ:.o=.d)

all: $(BUILD)/trench $(BUILD)/libtrench.a $(BUILD)/embed
# trench-verify (trench verify) needs LLVM 14 and Z3 (make deps installs
# them): plain make builds it when they are there; the test tiers always.
ifneq ($(and $(wildcard /usr/include/z3.h),$(shell command -v $(LLVM_CONFIG) 2>/dev/null)),)
all: $(BUILD)/trench-verify
endif

# Plain `make` installs nothing (`make deps` does). The commands a fresh
# machine starts with (test, demo, the check tiers, benchmarks) install
# the missing Debian packages first, once per build folder.
ifneq ($(filter test check check-xla demo bench bench-builtin xla-suite check-torch torch-suite check-torch-releases check-iree iree-suite,$(MAKECMDGOALS)),)
DEPS_STAMP := $(BUILD)/.deps
endif
$(BUILD)/.deps: scripts/deps.sh
	@mkdir -p $(BUILD)
	@TRENCH_DEPS_TCC=$(TCC) bash scripts/deps.sh
	@touch $@

$(BUILD)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/src/verify/%.o: src/verify/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(VERIFY_CFLAGS) -MMD -MP -c $< -o $@

# libtrench.a is the embedding library: one relocatable object in which
# only tr_* and trench_* names stay global, so a program linking it meets
# none of the internal helpers (ev_*, sh_*, rule_*, ...).
# libtrench-internal.a keeps every object as it is, for the command line,
# the unit tests and the benchmarks, which reach into the layers.
$(BUILD)/libtrench.a: $(LIB_OBJ)
	@rm -f $@ $(BUILD)/libtrench.o
	ld -r -o $(BUILD)/libtrench.o $^
	objcopy -w --keep-global-symbol='tr_*' --keep-global-symbol='trench_*' $(BUILD)/libtrench.o
	ar rcs $@ $(BUILD)/libtrench.o

$(BUILD)/libtrench-internal.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/trench: $(CLI_OBJ) $(BUILD)/libtrench-internal.a
	$(CC) $(CFLAGS) $(PROG_LDFLAGS) -o $@ $^ $(LDLIBS) $(TCC_LIBS)

# trench verify runs in this sibling: the same commands plus LLVM and Z3
# (src/cli/cmd_verify.c hands over to it), so trench itself stays small.
$(BUILD)/trench-verify: $(CLI_OBJ) $(VERIFY_OBJ) $(BUILD)/libtrench-internal.a
	$(CC) $(CFLAGS) $(PROG_LDFLAGS) -o $@ $^ $(LDLIBS) $(TCC_LIBS) $(VERIFY_LIBS)

# The embedding example: include/trench.h and the library, nothing else.
$(BUILD)/embed: examples/embed.c include/trench.h $(BUILD)/libtrench.a
	$(CC) $(CFLAGS) -Iinclude $(PROG_LDFLAGS) -o $@ examples/embed.c $(BUILD)/libtrench.a $(LDLIBS) $(TCC_LIBS)

# the unit tests link the symbolic reference (no LLVM or Z3 in it) to
# check ops.def's y column (test_symref.c)
$(BUILD)/unit: $(TEST_OBJ) $(BUILD)/src/verify/ref.o $(BUILD)/src/verify/vx.o $(BUILD)/libtrench-internal.a
	$(CC) $(CFLAGS) $(PROG_LDFLAGS) -o $@ $^ $(LDLIBS) $(TCC_LIBS)

# Tiers (tests/run.sh): check = offline unit and CLI suites (under a
# minute); check-xla = real XLA through jax and the recorded findings;
# test = every tier. check-tsan: the threaded evaluator and the JIT cache
# under ThreadSanitizer.
test: $(BUILD)/.deps $(BUILD)/trench $(BUILD)/trench-verify $(BUILD)/unit $(BUILD)/embed
	@bash tests/run.sh $(BUILD) all

check: $(BUILD)/.deps $(BUILD)/trench $(BUILD)/trench-verify $(BUILD)/unit $(BUILD)/embed
	@bash tests/run.sh $(BUILD) offline

check-xla: $(BUILD)/.deps $(BUILD)/trench $(BUILD)/unit $(BUILD)/embed
	@bash tests/run.sh $(BUILD) xla

check-tsan:
	$(MAKE) BUILD=build-tsan TCC=0 OPT="-O1 -g" EXTRA_CFLAGS="-fsanitize=thread" \
	  LDLIBS="-lcjson -lm -lpthread -fsanitize=thread" build-tsan/unit
	TSAN_OPTIONS=halt_on_error=1 TRENCH_THREADS=2 build-tsan/unit tests

# Debian packages and the project virtualenv, installed on request (make
# itself never calls sudo or apt).
deps:
	TRENCH_DEPS_TCC=$(TCC) bash scripts/deps.sh
	bash scripts/venv.sh

check-san:
	$(MAKE) BUILD=build-san OPT="-O1 -g -fno-omit-frame-pointer" \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all" \
	  LDLIBS="-lcjson -lm -lpthread -fsanitize=address,undefined" test

# The fault tier under ASan+UBSan: a mutation run of parse, run and check
# (FAULT_SAN_SECONDS, default 120), the verifier's mutants with more per
# module, and tests/fault.sh.
FAULT_SAN_SECONDS ?= 120
fault-san:
	$(MAKE) BUILD=build-san OPT="-O1 -g -fno-omit-frame-pointer" \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all" \
	  LDLIBS="-lcjson -lm -lpthread -fsanitize=address,undefined" build-san/trench build-san/trench-verify build-san/unit
	FAULT_SAN_SECONDS=$(FAULT_SAN_SECONDS) bash tests/fault_san.sh build-san/trench tests
	TRENCH_MUTANTS=10 build-san/unit tests mutate
	bash tests/fault.sh build-san/trench tests
	TRENCH_OOM_STEP=5 bash tests/oom.sh build-san/trench tests

FUZZ_SECONDS ?= 600
fuzz-parser:
	@TRENCH_DEPS_FUZZ=1 bash scripts/deps.sh
	@mkdir -p build-fuzz/corpus
	clang -std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=fuzzer,address,undefined \
	  -o build-fuzz/fuzz_parser fuzz/fuzz_parser.c $(LIB_SRC) -lcjson -lm -lpthread
	cp -n tests/hlo/*.hlo build-fuzz/corpus/ 2>/dev/null || true
	build-fuzz/fuzz_parser -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	  -rss_limit_mb=4096 -max_len=65536 build-fuzz/corpus

clean:
	rm -rf build build-san build-fuzz

# The main job on the shipped examples: characterise them, then check the
# built-in compiler against the reference on each (becomes a fuzz campaign).
demo: all
	$(BUILD)/trench parse -q examples/*.hlo
	@echo "== a fuzz campaign against the built-in compiler with a planted defect"
	@echo "== (emit-tail-mask-short; trench defects lists them all): generated and"
	@echo "== mutated modules, checked against the reference, until the first finding,"
	@echo "== which is then isolated (instruction, kernel, pass) and reduced"
	@rm -rf $(BUILD)/demo-fuzz
	@$(BUILD)/trench fuzz --target builtin:jit=tcc,inject=emit-tail-mask-short --time 60s --jobs 2 \
	  --seed 1 --until-finding --triage --out $(BUILD)/demo-fuzz; test $$? -le 1
	@b=$$(ls -d $(BUILD)/demo-fuzz/findings/* 2>/dev/null | head -1); \
	  test -n "$$b" || { echo "demo: no finding"; exit 1; }; \
	  echo; echo "== the finding's bundle: $$b"; ls $$b | tr "\n" " "; echo; echo; cat $$b/README.md | sed -n '1,/^Files/p'; \
	  echo "== verdict.txt"; cat $$b/verdict.txt; echo "== fuzz.json"; cat $$b/fuzz.json; \
	  echo; echo "== module.hlo"; cat $$b/module.hlo; \
	  echo; echo "== its triage (fuzz --triage): $$b/triage/report.md"; \
	  sed -n '1,/^## Module as triaged/p' $$b/triage/report.md | sed '$$d' 

.PHONY: all test check check-xla check-tsan deps check-san fuzz-parser clean demo fault-san
-include $(DEPS)

# Speed of the reference interpreter (bench/README.md); not part of test.
# BENCH_ARGS: e.g. BENCH_ARGS="--reps 9 path/to/xla/backends/cpu/benchmarks/hlo"
BENCH_ARGS ?=
bench: $(BUILD)/.deps $(BUILD)/libtrench-internal.a
	@bash bench/run_eval_bench.sh $(BUILD) $(BENCH_ARGS)

# Speed of the built-in compiler (bench/README.md): compile latency with cc
# and libtcc, run time against the reference and XLA CPU; not part of test.
# BENCH_BUILTIN_ARGS: e.g. "--reps 5", "--quick", "--no-xla".
BENCH_BUILTIN_ARGS ?=
bench-builtin: $(BUILD)/.deps $(BUILD)/libtrench-internal.a
	@bash bench/builtin_bench.sh $(BUILD) $(BENCH_BUILTIN_ARGS)

.PHONY: bench bench-builtin

# The XLA CPU acceptance suite (tests/xla-suite, about 2-3 minutes); the
# tests run a slice of it. Not part of test.
xla-suite: $(BUILD)/.deps $(BUILD)/trench
	@bash tests/adapters/xla_suite.sh $(BUILD)

.PHONY: xla-suite

# The torch tier: torch-eager and torch-inductor on real PyTorch
# (tests/torch.sh; creates .venv-torch with scripts/venv-torch.sh). Not
# part of test. torch-suite: the acceptance suite on torch-eager
# (TORCH_SUITE_ARGS="--target torch-inductor --slice" for Inductor).
check-torch: $(BUILD)/.deps $(BUILD)/trench
	@bash tests/torch.sh $(BUILD)

torch-suite: $(BUILD)/.deps $(BUILD)/trench
	@bash tests/adapters/torch_suite.sh $(TORCH_SUITE_ARGS) $(BUILD)

# Past torch.compile bugs (tests/torch-findings): found on the broken
# release, not on the fixed one; installs those releases (GBs).
check-torch-releases: $(BUILD)/.deps $(BUILD)/trench
	@bash tests/torch_releases.sh $(BUILD)

.PHONY: check-torch torch-suite check-torch-releases

# The release sweep (tests/adapters/xla_versions.sh): the acceptance suite
# on every installed jax release (scripts/venv.sh --jax VER), findings per
# release and the modules whose verdict differs between releases.
xla-versions: $(BUILD)/.deps $(BUILD)/trench
	@bash tests/adapters/xla_versions.sh $(BUILD)

.PHONY: xla-versions

# The IREE tier (tests/iree.sh): installs IREE's compiler and runtime into
# .venv/iree (scripts/venv-iree.sh) and checks the iree-cpu target; not
# part of test. iree-suite: the whole acceptance suite on iree-cpu.
check-iree: $(BUILD)/.deps $(BUILD)/trench
	@bash tests/iree.sh $(BUILD)/trench tests

iree-suite: $(BUILD)/.deps $(BUILD)/trench
	@bash tests/adapters/iree_suite.sh $(BUILD)

.PHONY: check-iree iree-suite
