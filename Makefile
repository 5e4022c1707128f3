# Builds everything into $(BUILD). build.sh installs the toolchain and fetches
# cJSON's source first; call this Makefile directly only after that has run.
#
# Each C file is compiled on its own into an object at its source's path
# under the object directory of its build flavour, with a dependency file
# (-MMD -MP) naming the headers it read: `make -j` compiles in parallel, and
# a second `make` recompiles only the objects a change reaches. The flavours:
#   native/obj  asan/obj         the core and the unit tests (ASan+UBSan)
#   backend/obj asan-backend/obj tsan-backend/obj   the backend's programs
#   fuzz/obj    replay/obj       the fuzz targets (libFuzzer; gcc + ASan+UBSan)
#   wasm/obj    wasm/obj-wasi    core.wasm's bitcode (emcc -flto); core-wasi.wasm's
# The core with cJSON (libe2bw.a) and the backend without main.c
# (libbackend.a) are archives: a program takes only the members it needs.
# New .c files are found by wildcard; nothing here lists them.

BUILD     ?= build
# One spelling of every path under it, however BUILD is given (relative to
# this directory when inside it, else absolute): the dependency files (-MMD)
# name their objects as the compile did, and make matches them only under the
# same spelling.
override BUILD := $(patsubst $(CURDIR)/%,%,$(abspath $(BUILD)))
CJSON_DIR ?= $(BUILD)/third_party/cjson
CC        ?= cc
CLANG     ?= clang
EMCC      ?= emcc

# The project's own C is held to these; cJSON (third-party) is not.
WARN   := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
          -Wpointer-arith -Wcast-qual -Wvla -Wformat=2
CSTD   := -std=c11 -D_POSIX_C_SOURCE=200809L
INC    := -Icore/include -Icore -I$(CJSON_DIR) -DCJSON_NESTING_LIMIT=256
DEPS   := -MMD -MP

CORE_SRC    := $(sort $(wildcard core/*.c))
UNIT_SRC    := $(sort $(wildcard tests/unit/*.c))
# The backend's folders (docs/local-backend.md, "Folders"); runtime/init/ is
# a program of its own. core/sha256.c is shared: the backend checks the same
# v1_ signatures the core makes.
BACKEND_SRC := $(sort $(shell find backend -name '*.c' -not -path 'backend/runtime/init/*')) core/sha256.c
BACKEND_LIB_SRC := $(filter-out backend/main.c,$(BACKEND_SRC))
# What every program built from the backend's sources links.
BACKEND_LIBS := -levent -levent_openssl -lutil -lz -lseccomp -lmnl -lnftables -larchive -lssl -lcrypto
FUZZ_SRC    := $(sort $(wildcard tests/fuzz/fuzz_*.c))
CJSON_C     := $(CJSON_DIR)/cJSON.c
# core.wasm's own printf, strstr, strlen, memchr, strtod and sscanf (wasm/libc_small.h);
# natively they are small_snprintf etc., which the unit tests and fuzz_printf
# compare with glibc's.
SMALL_SRC   := wasm/printf_small.c wasm/strstr_small.c wasm/strings_small.c wasm/numbers_small.c wasm/bignum_small.c

# The objects of sources $(2) in object directory $(1), in their order (the
# link's); cJSON's is $(1)/cjson/cJSON.o.
objects = $(foreach c,$(2),$(if $(filter $(CJSON_C),$(c)),$(1)/cjson/cJSON.o,$(patsubst %.c,$(1)/%.o,$(c))))
# An archive of its prerequisites' objects (q: two members may share a name).
define ARCHIVE
	@mkdir -p $(@D)
	rm -f $@
	ar qcs $@ $(filter %.o,$^)
endef
LINKED = $(filter %.o %.a,$^)
# No built-in rules (none is used; make would try them on every .d file), and
# no half-written object after a failed compile.
MAKEFLAGS += --no-builtin-rules
.DELETE_ON_ERROR:

.PHONY: all native asan wasm backend backend-unit backend-asan backend-tsan fuzz replay clean
all: native asan wasm backend backend-unit

# --- native core + unit tests -------------------------------------------
native: $(BUILD)/native/unit_tests
asan:   $(BUILD)/asan/unit_tests

# The unit tests' builds of the core and cJSON allocate through counting
# wrappers (tests/unit/alloc_hook.h) so test_oom.c can fail any allocation.
HOOK := -include tests/unit/alloc_hook.h
SAN  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# $(1): the flavour's directory, $(2): the compiler and flags for the core
# and cJSON, $(3): for the unit tests and $(SMALL_SRC), $(4): link flags.
define UNIT_FLAVOUR
$(1)/obj/core/%.o: core/%.c
	@mkdir -p $$(@D)
	$(2) $$(WARN) $$(INC) $$(HOOK) $$(DEPS) -c $$< -o $$@
$(1)/obj/cjson/cJSON.o: $$(CJSON_C)
	@mkdir -p $$(@D)
	$(2) $$(INC) $$(HOOK) $$(DEPS) -c $$< -o $$@
$(1)/obj/%.o: %.c
	@mkdir -p $$(@D)
	$(3) $$(WARN) $$(INC) -Iwasm $$(DEPS) -c $$< -o $$@
$(1)/libe2bw.a: $$(call objects,$(1)/obj,$$(CORE_SRC) $$(CJSON_C))
	$$(ARCHIVE)
$(1)/unit_tests: $$(call objects,$(1)/obj,$$(UNIT_SRC) $$(SMALL_SRC)) $(1)/libe2bw.a
	$$(CC) $(4) $$(LINKED) -lm -o $$@
endef
$(eval $(call UNIT_FLAVOUR,$(BUILD)/native,$$(CC) $$(CSTD) -O2 -g,$$(CC) $$(CSTD) -O1 -g,-g))
$(eval $(call UNIT_FLAVOUR,$(BUILD)/asan,$$(CC) $$(CSTD) -O1 -g $$(SAN),$$(CC) $$(CSTD) -O1 -g $$(SAN),-g $$(SAN)))

# --- WebAssembly -------------------------------------------------------
# core.wasm: Emscripten, no imports (wasm/abi.c defines the one hook the
# allocator would otherwise import). core-wasi.wasm: the same sources through
# clang + wasi-libc, to prove the core does not depend on one toolchain.
# core.wasm is built for size and streaming speed: SIMD and bulk memory
# (every current engine), emmalloc, and $(SMALL_SRC) instead of musl's printf
# family, strstr, strtod and sscanf (9.6 KB less: musl formats doubles as
# long double, with binary128 soft-float; its strtod is arbitrary-precision).
# They are exact, and tests/unit/test_printf.c and test_strtod.c compare them
# with glibc's. core-wasi.wasm keeps the plain scalar code and libc's
# allocator, printf and strtod, and tests/node/wasm-modules.test.mjs checks
# both behave alike. core.wasm's objects are LLVM bitcode, optimised whole
# at the link (-flto), in the order of the sources: its bytes are those of
# one emcc call over all of them. Binaryen inlines a function with one
# caller only when it is under 100 bytes (its default: at any size): V8
# compiles each function at its first call, and one function the size of
# every method's dispatch made the first initialize compile them all
# (docs/PERFORMANCE.md, "Start-up").
WASM_SRC := $(CORE_SRC) wasm/abi.c $(CJSON_C)
wasm: $(BUILD)/wasm/core.wasm $(BUILD)/wasm/core-wasi.wasm

EMCC_CC := NODE_PATH=/usr/share/nodejs $(EMCC) $(CSTD) -Oz -flto -msimd128 -mbulk-memory
WASI_CC := $(CLANG) --target=wasm32-wasi --sysroot=/usr $(CSTD) -Oz
$(BUILD)/wasm/obj/%.o: %.c
	@mkdir -p $(@D)
	$(EMCC_CC) $(INC) -DE2BW_WASM $(DEPS) -c $< -o $@
$(BUILD)/wasm/obj/cjson/cJSON.o: $(CJSON_C)
	@mkdir -p $(@D)
	$(EMCC_CC) $(INC) -DE2BW_WASM $(DEPS) -c $< -o $@
$(BUILD)/wasm/obj-wasi/%.o: %.c
	@mkdir -p $(@D)
	$(WASI_CC) $(INC) -DE2BW_WASM $(DEPS) -c $< -o $@
$(BUILD)/wasm/obj-wasi/cjson/cJSON.o: $(CJSON_C)
	@mkdir -p $(@D)
	$(WASI_CC) $(INC) -DE2BW_WASM $(DEPS) -c $< -o $@

$(BUILD)/wasm/core.wasm: $(call objects,$(BUILD)/wasm/obj,$(WASM_SRC) $(SMALL_SRC))
	$(EMCC_CC) -sMALLOC=emmalloc -sBINARYEN_EXTRA_PASSES=--one-caller-inline-max-function-size=100 \
	  -sSTANDALONE_WASM --no-entry -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=1MB \
	  -sTOTAL_STACK=262144 -sERROR_ON_UNDEFINED_SYMBOLS=1 \
	  $^ -o $@

$(BUILD)/wasm/core-wasi.wasm: $(call objects,$(BUILD)/wasm/obj-wasi,$(WASM_SRC) wasm/wasi_noio.c)
	$(WASI_CC) -nostartfiles -Wl,--no-entry -Wl,-z,stack-size=262144 $^ -o $@

# --- local E2B-compatible backend -----------------------------------------
# The check programs, tests/backend/<name>_check.c -> bin/<name>-check, link
# the backend as the program does (runtime-api-check: the sandbox runtime's
# interface against real sandboxes, tests/node/backend-runtime-api.test.mjs;
# layers-check: the layer store with the runtime's stacks of layers,
# tests/node/backend-store.test.mjs).
CHECK_SRC := $(sort $(wildcard tests/backend/*_check.c))
CHECKS    := $(subst _,-,$(patsubst tests/backend/%.c,%,$(CHECK_SRC)))
backend: $(BUILD)/bin/e2b-local-backend $(BUILD)/bin/e2b-sandbox-init $(CHECKS:%=$(BUILD)/bin/%)

# $(1): the objects' directory, $(2): the programs' directory, $(3): the
# optimisation and sanitizer flags, $(4): more objects and flags the backend
# program links.
define BACKEND_FLAVOUR
$(1)/obj/%.o: %.c
	@mkdir -p $$(@D)
	$$(CC) $$(CSTD) -D_DEFAULT_SOURCE $(3) -g $$(WARN) -Ibackend -I$$(CJSON_DIR) $$(DEPS) -c $$< -o $$@
# The unit tests at -O1 whatever the flavour's level (at -O2 GCC sees paths
# it cannot prove initialised).
$(1)/obj/tests/backend/unit/%.o: tests/backend/unit/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(CSTD) -D_DEFAULT_SOURCE $(3) -O1 -g $$(WARN) -Ibackend -Itests/unit -I$$(CJSON_DIR) $$(DEPS) -c $$< -o $$@
$(1)/obj/cjson/cJSON.o: $$(CJSON_C)
	@mkdir -p $$(@D)
	$$(CC) $$(CSTD) $(3) -g -I$$(CJSON_DIR) $$(DEPS) -c $$< -o $$@
$(1)/libbackend.a: $$(call objects,$(1)/obj,$$(BACKEND_LIB_SRC))
	$$(ARCHIVE)
# The program links every object; the others take what they use from the archive.
$(2)/e2b-local-backend: $$(call objects,$(1)/obj,$$(BACKEND_SRC) $$(CJSON_C)) $(filter %.o,$(4))
	@mkdir -p $$(@D)
	$$(CC) -g $(3) $$(LINKED) $$(BACKEND_LIBS) $(filter-out %.o,$(4)) -o $$@
$$(foreach c,$$(CHECK_SRC),$$(eval $$(call CHECK_PROGRAM,$(1),$(2),$(3),$$(c))))
endef
# $(1) to $(3) as above, $(4): the check program's source.
define CHECK_PROGRAM
$(2)/$(subst _,-,$(basename $(notdir $(4)))): $(1)/obj/$(4:.c=.o) $(1)/libbackend.a $(1)/obj/cjson/cJSON.o
	@mkdir -p $$(@D)
	$$(CC) -g $(3) $$(LINKED) $$(BACKEND_LIBS) -o $$@
endef
$(eval $(call BACKEND_FLAVOUR,$(BUILD)/backend,$(BUILD)/bin,-O2))

# The syscall policy against each call it refuses (tests/node/backend-seccomp.test.mjs):
# the probe is static, so it also runs inside a sandbox.
backend: $(BUILD)/bin/seccomp-probe $(BUILD)/bin/seccomp-apply
$(BUILD)/bin/seccomp-probe: tests/backend/seccomp_probe.c
	@mkdir -p $(BUILD)/bin
	$(CC) -std=c11 -O2 -static $(WARN) $< -o $@
$(BUILD)/bin/seccomp-apply: $(call objects,$(BUILD)/backend/obj,tests/backend/seccomp_apply.c backend/runtime/runtime_seccomp.c backend/lib/err.c)
	@mkdir -p $(@D)
	$(CC) -g $^ -lseccomp -o $@

# An idmapped bind mount of a template, for the rootless tests (tests/lib/rootless.mjs).
backend: $(BUILD)/bin/idmap-mount
IDMAP_MOUNT_SRC := backend/runtime/runtime_userns.c backend/runtime/runtime_control.c backend/lib/child_stack.c
$(BUILD)/bin/idmap-mount: $(call objects,$(BUILD)/backend/obj,tests/backend/idmap_mount.c $(IDMAP_MOUNT_SRC))
	@mkdir -p $(@D)
	$(CC) -g $^ -o $@

# The kernel key calls of the keyring tests, static: it runs inside sandboxes too.
backend: $(BUILD)/bin/keys-probe
$(BUILD)/bin/keys-probe: tests/backend/keys_probe.c
	@mkdir -p $(BUILD)/bin
	$(CC) -std=c11 -O2 -static $(WARN) $< -o $@

# The floor under a sandbox's command, for bench/sandbox-runtime.mjs: a bare
# spawn in a template's root, and what one CPUID costs.
backend: $(BUILD)/bin/spawn-floor
$(BUILD)/bin/spawn-floor: bench/spawn_floor.c
	@mkdir -p $(BUILD)/bin
	$(CC) $(CSTD) -D_DEFAULT_SOURCE -O2 $(WARN) $< -o $@

# The backend's unit tests (tests/backend/unit/, on the core's check.h),
# natively and under ASan+UBSan, on the objects of bin/e2b-local-backend and
# of backend-asan.
BACKEND_UNIT_SRC := $(sort $(wildcard tests/backend/unit/*.c))
backend-unit: $(BUILD)/native/backend_unit_tests $(BUILD)/asan/backend_unit_tests
$(BUILD)/native/backend_unit_tests: $(call objects,$(BUILD)/backend/obj,$(BACKEND_UNIT_SRC)) \
	  $(BUILD)/backend/libbackend.a $(BUILD)/backend/obj/cjson/cJSON.o
	@mkdir -p $(@D)
	$(CC) -g $(LINKED) $(BACKEND_LIBS) -lm -o $@
$(BUILD)/asan/backend_unit_tests: $(call objects,$(BUILD)/asan-backend/obj,$(BACKEND_UNIT_SRC)) \
	  $(BUILD)/asan-backend/libbackend.a $(BUILD)/asan-backend/obj/cjson/cJSON.o
	@mkdir -p $(@D)
	$(CC) -g $(SAN) $(LINKED) $(BACKEND_LIBS) -lm -o $@

# pid 1 of every sandbox; static so it runs inside any template's root.
INIT_SRC := $(sort $(wildcard backend/runtime/init/*.c)) backend/lib/fd_pass.c
$(BUILD)/bin/e2b-sandbox-init: $(INIT_SRC) $(wildcard backend/runtime/init/*.h) backend/lib/init_wire.h backend/lib/fd_pass.h
	@mkdir -p $(BUILD)/bin
	$(CC) -std=c11 -O2 -static $(WARN) -Ibackend $(INIT_SRC) -o $@

# --- the backend program under sanitizers ----------------------------------
# Not part of `all`: for the integration tests against a sanitized copy
# (docs/local-backend.md, the end of "Tests"). Each is a build
# directory of its own for E2BW_BUILD: the backend and the check programs
# that link its sources are sanitized; the other programs and the templates
# are the normal build's, linked. The sandbox's init stays unsanitized: it
# is static and runs in the sandbox's root.
#   backend-asan: ASan+UBSan in $(BUILD)/asan-backend/
#   backend-tsan: ThreadSanitizer in $(BUILD)/tsan-backend/
SANITIZED_LINKED := e2b-sandbox-init seccomp-probe seccomp-apply idmap-mount keys-probe spawn-floor

# $(1): the directory, $(2): the target that builds it.
define SANITIZED_LINKS
$$(SANITIZED_LINKED:%=$(1)/bin/%): $(1)/bin/%: $$(BUILD)/bin/%
	@mkdir -p $$(@D)
	ln -sfn $$(abspath $$<) $$@
$(1)/templates:
	@test -d $$(BUILD)/templates || { echo "no $$(BUILD)/templates: run ./build.sh first" >&2; exit 1; }
	@mkdir -p $$(@D)
	ln -sfn $$(abspath $$(BUILD)/templates) $$@
$(2): $(1)/bin/e2b-local-backend $$(CHECKS:%=$(1)/bin/%) \
	  $$(SANITIZED_LINKED:%=$(1)/bin/%) $(1)/templates
endef
$(eval $(call BACKEND_FLAVOUR,$(BUILD)/asan-backend,$(BUILD)/asan-backend/bin,-O1 $$(SAN)))
$(eval $(call SANITIZED_LINKS,$(BUILD)/asan-backend,backend-asan))
# Under TSan the forked children end by the system call (tests/backend/tsan_exit.c).
$(eval $(call BACKEND_FLAVOUR,$(BUILD)/tsan-backend,$(BUILD)/tsan-backend/bin,-O1 -fsanitize=thread,\
	$(BUILD)/tsan-backend/obj/tests/backend/tsan_exit.o -Xlinker --wrap=_exit))
$(eval $(call SANITIZED_LINKS,$(BUILD)/tsan-backend,backend-tsan))
# The backend's unit tests (the worker thread's among them) under TSan too.
backend-tsan: $(BUILD)/tsan-backend/backend_unit_tests
$(BUILD)/tsan-backend/backend_unit_tests: $(call objects,$(BUILD)/tsan-backend/obj,$(BACKEND_UNIT_SRC)) \
	  $(BUILD)/tsan-backend/libbackend.a $(BUILD)/tsan-backend/obj/cjson/cJSON.o \
	  $(BUILD)/tsan-backend/obj/tests/backend/tsan_exit.o
	@mkdir -p $(@D)
	$(CC) -g -fsanitize=thread $(LINKED) $(BACKEND_LIBS) -lm -Xlinker --wrap=_exit -o $@

# --- libFuzzer targets (clang) ------------------------------------------
FUZZ_BIN := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
fuzz: $(FUZZ_BIN)

# Targets of the backend's parsers name their sources here (by stem), with
# the flags their harness is compiled with, and what else they link
# (FUZZ_LIBS_<stem>: libevent for those on evbuffers). Every target links
# the core and cJSON (libe2bw.a) and $(SMALL_SRC) (libsmall.a) as archives:
# only the members it uses.
FUZZ_BACKEND_fuzz_image_ref := backend/images/images_ref.c backend/lib/err.c
FUZZ_BACKEND_fuzz_layer_unpack := backend/images/images_unpack.c backend/lib/err.c
FUZZ_LIBS_fuzz_layer_unpack := -larchive -lcrypto
FUZZ_BACKEND_fuzz_http_request := -D_DEFAULT_SOURCE backend/http/http_head.c backend/http/http_framing.c
FUZZ_LIBS_fuzz_http_request := -levent
FUZZ_BACKEND_fuzz_protojson := -D_DEFAULT_SOURCE backend/http/http_protojson.c backend/http/http_connect.c backend/http/http_reply.c backend/lib/text.c backend/lib/base64.c backend/lib/err.c
FUZZ_LIBS_fuzz_protojson := -levent
FUZZ_BACKEND_fuzz_egress_sni := backend/egress/egress_sni.c
FUZZ_BACKEND_fuzz_egress_host := backend/egress/egress_host.c
FUZZ_BACKEND_fuzz_egress_socks := backend/egress/egress_socks.c backend/lib/err.c
NET_POLICY_SRC := backend/net/net_policy.c backend/net/net_rules.c backend/net/net_tunnel.c backend/net/net_name.c
FUZZ_BACKEND_fuzz_net_policy := -D_DEFAULT_SOURCE $(NET_POLICY_SRC) backend/lib/err.c
FUZZ_BACKEND_fuzz_egress_http := backend/egress/egress_http.c backend/egress/egress_http_head.c backend/lib/err.c

FUZZ_BACKEND_fuzz_cgroup_files := backend/runtime/runtime_cgroup_parse.c
$(BUILD)/fuzz/fuzz_cgroup_files $(BUILD)/replay/fuzz_cgroup_files: backend/runtime/runtime_cgroup_parse.c backend/runtime/runtime_cgroup_parse.h
FUZZ_BACKEND_fuzz_init_command := -D_DEFAULT_SOURCE backend/runtime/init/init_command.c
$(BUILD)/fuzz/fuzz_init_command $(BUILD)/replay/fuzz_init_command: backend/runtime/init/init_command.c backend/runtime/init/init_command.h backend/lib/init_wire.h

FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -g -O1

# $(1): the flavour's directory, $(2): the compiler and its flags.
define FUZZ_FLAVOUR
$(1)/obj/%.o: %.c
	@mkdir -p $$(@D)
	$(2) $$(INC) -Iwasm -Ibackend $$(DEPS) -c $$< -o $$@
# The backend's sources, as the backend compiles them.
$(1)/obj/backend/%.o: backend/%.c
	@mkdir -p $$(@D)
	$(2) $$(INC) -Iwasm -Ibackend -D_DEFAULT_SOURCE $$(DEPS) -c $$< -o $$@
$(1)/obj/tests/fuzz/%.o: tests/fuzz/%.c
	@mkdir -p $$(@D)
	$(2) $$(INC) -Iwasm -Ibackend $$(filter-out %.c,$$(FUZZ_BACKEND_$$*)) $$(DEPS) -c $$< -o $$@
$(1)/obj/cjson/cJSON.o: $$(CJSON_C)
	@mkdir -p $$(@D)
	$(2) $$(INC) $$(DEPS) -c $$< -o $$@
$(1)/libe2bw.a: $$(call objects,$(1)/obj,$$(CORE_SRC) $$(CJSON_C))
	$$(ARCHIVE)
$(1)/libsmall.a: $$(call objects,$(1)/obj,$$(SMALL_SRC))
	$$(ARCHIVE)
endef
$(eval $(call FUZZ_FLAVOUR,$(BUILD)/fuzz,$$(CLANG) $$(CSTD) $$(FUZZ_FLAGS)))
# The same targets as plain programs (gcc + ASan/UBSan, no libFuzzer): they
# replay the committed corpora in every test run.
REPLAY_BIN := $(patsubst tests/fuzz/%.c,$(BUILD)/replay/%,$(FUZZ_SRC))
replay: $(REPLAY_BIN)
$(eval $(call FUZZ_FLAVOUR,$(BUILD)/replay,$$(CC) $$(CSTD) -O1 -g $$(SAN)))

# $(1): the flavour's directory, $(2): the target's stem, $(3): the linker
# and its flags, $(4): more objects.
define FUZZ_TARGET
$(1)/$(2): $(1)/obj/tests/fuzz/$(2).o $(4) $$(call objects,$(1)/obj,$$(filter %.c,$$(FUZZ_BACKEND_$(2)))) \
	  $(1)/libe2bw.a $(1)/libsmall.a
	$(3) $$(LINKED) $$(FUZZ_LIBS_$(2)) -lm -o $$@
endef
$(foreach f,$(FUZZ_SRC:tests/fuzz/%.c=%), \
  $(eval $(call FUZZ_TARGET,$(BUILD)/fuzz,$(f),$$(CLANG) $$(FUZZ_FLAGS))) \
  $(eval $(call FUZZ_TARGET,$(BUILD)/replay,$(f),$$(CC) -g $$(SAN),$(BUILD)/replay/obj/tests/fuzz/replay_main.o)))

# The headers each object read, from its last compile.
OBJ_DIRS := $(wildcard $(BUILD)/*/obj $(BUILD)/*/obj-*)
-include $(if $(OBJ_DIRS),$(shell find $(OBJ_DIRS) -name '*.d'))

clean:
	rm -rf $(BUILD)/native $(BUILD)/asan $(BUILD)/asan-backend $(BUILD)/tsan-backend $(BUILD)/replay $(BUILD)/wasm $(BUILD)/bin $(BUILD)/fuzz $(BUILD)/backend
