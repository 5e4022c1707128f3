# Builds everything into $(BUILD). build.sh installs the toolchain and fetches
# cJSON's source first; call this Makefile directly only after that has run.

BUILD     ?= build
CJSON_DIR ?= $(BUILD)/third_party/cjson
CC        ?= cc
CLANG     ?= clang
EMCC      ?= emcc

# The project's own C is held to these; cJSON (third-party) is not.
WARN   := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
          -Wpointer-arith -Wcast-qual -Wvla -Wformat=2
CSTD   := -std=c11 -D_POSIX_C_SOURCE=200809L
INC    := -Icore/include -Icore -I$(CJSON_DIR) -DCJSON_NESTING_LIMIT=256

CORE_SRC    := $(sort $(wildcard core/*.c))
CORE_HDR    := $(wildcard core/*.h core/include/*.h)
UNIT_SRC    := $(sort $(wildcard tests/unit/*.c))
UNIT_HDR    := $(wildcard tests/unit/*.h)
# The backend's folders (docs/local-backend.md, "Folders"); runtime/init/ is
# a program of its own. core/sha256.c is shared: the backend checks the same
# v1_ signatures the core makes.
BACKEND_SRC := $(sort $(shell find backend -name '*.c' -not -path 'backend/runtime/init/*')) core/sha256.c
BACKEND_HDR := $(shell find backend -name '*.h')
BACKEND_LIB_SRC := $(filter-out backend/main.c,$(BACKEND_SRC))
# What every program built from the backend's sources links.
BACKEND_LIBS := -levent -levent_openssl -lutil -lz -lseccomp -lmnl -lnftables -larchive -lssl -lcrypto
FUZZ_SRC    := $(sort $(wildcard tests/fuzz/fuzz_*.c))
CJSON_C     := $(CJSON_DIR)/cJSON.c
# core.wasm's own printf, strstr, strlen, memchr, strtod and sscanf (wasm/libc_small.h);
# natively they are small_snprintf etc., which the unit tests and fuzz_printf
# compare with glibc's.
SMALL_SRC   := wasm/printf_small.c wasm/strstr_small.c wasm/strings_small.c wasm/numbers_small.c wasm/bignum_small.c
SMALL_HDR   := wasm/libc_small.h wasm/bignum_small.h

.PHONY: all native asan wasm backend backend-unit backend-asan backend-tsan fuzz replay clean
all: native asan wasm backend backend-unit

# --- native core + unit tests -------------------------------------------
native: $(BUILD)/native/unit_tests
asan:   $(BUILD)/asan/unit_tests

# The unit tests' builds of the core and cJSON allocate through counting
# wrappers (tests/unit/alloc_hook.h) so test_oom.c can fail any allocation.
HOOK := -include tests/unit/alloc_hook.h

$(BUILD)/native/libe2bw.a: $(CORE_SRC) $(CORE_HDR) $(CJSON_C) tests/unit/alloc_hook.h
	@mkdir -p $(BUILD)/native/obj
	rm -f $@
	for f in $(CORE_SRC); do \
	  $(CC) $(CSTD) -O2 -g $(WARN) $(INC) $(HOOK) -c $$f -o $(BUILD)/native/obj/$$(basename $$f .c).o || exit 1; done
	$(CC) $(CSTD) -O2 -g $(INC) $(HOOK) -c $(CJSON_C) -o $(BUILD)/native/obj/cJSON.o
	ar rcs $@ $(BUILD)/native/obj/*.o

$(BUILD)/native/unit_tests: $(BUILD)/native/libe2bw.a $(UNIT_SRC) $(UNIT_HDR) $(SMALL_SRC) $(SMALL_HDR)
	$(CC) $(CSTD) -O1 -g $(WARN) $(INC) -Iwasm $(UNIT_SRC) $(SMALL_SRC) $(BUILD)/native/libe2bw.a -lm -o $@

SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
$(BUILD)/asan/unit_tests: $(CORE_SRC) $(CORE_HDR) $(UNIT_SRC) $(UNIT_HDR) $(CJSON_C) $(SMALL_SRC) $(SMALL_HDR)
	@mkdir -p $(BUILD)/asan
	@mkdir -p $(BUILD)/asan/obj
	$(CC) $(CSTD) -O1 -g $(SAN) $(INC) $(HOOK) -c $(CJSON_C) -o $(BUILD)/asan/cJSON.o
	for f in $(CORE_SRC); do \
	  $(CC) $(CSTD) -O1 -g $(SAN) $(WARN) $(INC) $(HOOK) -c $$f -o $(BUILD)/asan/obj/$$(basename $$f .c).o || exit 1; done
	$(CC) $(CSTD) -O1 -g $(SAN) $(WARN) $(INC) -Iwasm $(UNIT_SRC) $(SMALL_SRC) $(BUILD)/asan/obj/*.o $(BUILD)/asan/cJSON.o -lm -o $@

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
# both behave alike.
WASM_SRC := $(CORE_SRC) wasm/abi.c $(CJSON_C)
wasm: $(BUILD)/wasm/core.wasm $(BUILD)/wasm/core-wasi.wasm

$(BUILD)/wasm/core.wasm: $(WASM_SRC) $(SMALL_SRC) $(SMALL_HDR) $(CORE_HDR)
	@mkdir -p $(BUILD)/wasm
	NODE_PATH=/usr/share/nodejs $(EMCC) $(CSTD) -Oz -flto -msimd128 -mbulk-memory -sMALLOC=emmalloc $(INC) -DE2BW_WASM \
	  -sSTANDALONE_WASM --no-entry -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=1MB \
	  -sTOTAL_STACK=262144 -sERROR_ON_UNDEFINED_SYMBOLS=1 \
	  $(WASM_SRC) $(SMALL_SRC) -o $@

$(BUILD)/wasm/core-wasi.wasm: $(WASM_SRC) wasm/wasi_noio.c $(CORE_HDR)
	@mkdir -p $(BUILD)/wasm
	$(CLANG) --target=wasm32-wasi --sysroot=/usr $(CSTD) -Oz $(INC) -DE2BW_WASM \
	  -nostartfiles -Wl,--no-entry -Wl,-z,stack-size=262144 \
	  $(WASM_SRC) wasm/wasi_noio.c -o $@

# --- local E2B-compatible backend -----------------------------------------
backend: $(BUILD)/bin/e2b-local-backend $(BUILD)/bin/e2b-sandbox-init

# The sandbox runtime's interface against real sandboxes (tests/node/backend-runtime-api.test.mjs).
backend: $(BUILD)/bin/runtime-api-check
$(BUILD)/backend/cJSON-check.o: $(CJSON_C)
	@mkdir -p $(BUILD)/backend
	$(CC) $(CSTD) -O2 -g -I$(CJSON_DIR) -c $(CJSON_C) -o $@
$(BUILD)/bin/runtime-api-check: tests/backend/runtime_api_check.c tests/backend/check_program.h $(BACKEND_LIB_SRC) $(BACKEND_HDR) $(BUILD)/backend/cJSON-check.o
	@mkdir -p $(BUILD)/bin
	$(CC) $(CSTD) -D_DEFAULT_SOURCE -O2 -g $(WARN) -Ibackend -I$(CJSON_DIR) \
	  $< $(BACKEND_LIB_SRC) $(BUILD)/backend/cJSON-check.o $(BACKEND_LIBS) -o $@

# The runtime's cgroup v2 pieces against the kernel, without controllers
# (tests/node/backend-cgroup2-parts.test.mjs).
backend: $(BUILD)/bin/cgroup2-check
$(BUILD)/bin/cgroup2-check: tests/backend/cgroup2_check.c tests/backend/check_program.h $(BACKEND_LIB_SRC) $(BACKEND_HDR) $(BUILD)/backend/cJSON-check.o
	@mkdir -p $(BUILD)/bin
	$(CC) $(CSTD) -D_DEFAULT_SOURCE -O2 -g $(WARN) -Ibackend -I$(CJSON_DIR) \
	  $< $(BACKEND_LIB_SRC) $(BUILD)/backend/cJSON-check.o $(BACKEND_LIBS) -o $@

# The layer store with the runtime's stacks of layers (tests/node/backend-store.test.mjs).
backend: $(BUILD)/bin/layers-check
$(BUILD)/bin/layers-check: tests/backend/layers_check.c tests/backend/check_program.h $(BACKEND_LIB_SRC) $(BACKEND_HDR) $(BUILD)/backend/cJSON-check.o
	@mkdir -p $(BUILD)/bin
	$(CC) $(CSTD) -D_DEFAULT_SOURCE -O2 -g $(WARN) -Ibackend -I$(CJSON_DIR) \
	  $< $(BACKEND_LIB_SRC) $(BUILD)/backend/cJSON-check.o $(BACKEND_LIBS) -o $@

# The syscall policy against each call it refuses (tests/node/backend-seccomp.test.mjs):
# the probe is static, so it also runs inside a sandbox.
backend: $(BUILD)/bin/seccomp-probe $(BUILD)/bin/seccomp-apply
$(BUILD)/bin/seccomp-probe: tests/backend/seccomp_probe.c
	@mkdir -p $(BUILD)/bin
	$(CC) -std=c11 -O2 -static $(WARN) $< -o $@
$(BUILD)/bin/seccomp-apply: tests/backend/seccomp_apply.c backend/runtime/runtime_seccomp.c backend/runtime/runtime_seccomp.h
	@mkdir -p $(BUILD)/bin
	$(CC) $(CSTD) -D_DEFAULT_SOURCE -O2 -g $(WARN) -Ibackend $< backend/runtime/runtime_seccomp.c -lseccomp -o $@

# An idmapped bind mount of a template, for the rootless tests (tests/lib/rootless.mjs).
backend: $(BUILD)/bin/idmap-mount
IDMAP_MOUNT_SRC := backend/runtime/runtime_userns.c backend/runtime/runtime_control.c backend/lib/child_stack.c
$(BUILD)/bin/idmap-mount: tests/backend/idmap_mount.c $(IDMAP_MOUNT_SRC) $(BACKEND_HDR)
	@mkdir -p $(BUILD)/bin
	$(CC) $(CSTD) -D_DEFAULT_SOURCE -O2 -g $(WARN) -Ibackend $< $(IDMAP_MOUNT_SRC) -o $@

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
# natively and under ASan+UBSan.
BACKEND_UNIT_SRC := $(sort $(wildcard tests/backend/unit/*.c))
BACKEND_UNIT_DEP := $(BACKEND_UNIT_SRC) $(wildcard tests/backend/unit/*.h) tests/unit/check.h $(BACKEND_LIB_SRC) $(BACKEND_HDR) $(CJSON_C)
BACKEND_UNIT_CC  = $(CC) $(CSTD) -D_DEFAULT_SOURCE -g $(WARN) -Ibackend -Itests/unit -I$(CJSON_DIR) \
	  $(BACKEND_UNIT_SRC) $(BACKEND_LIB_SRC) $(CJSON_C) $(BACKEND_LIBS) -lm
backend-unit: $(BUILD)/native/backend_unit_tests $(BUILD)/asan/backend_unit_tests
$(BUILD)/native/backend_unit_tests: $(BACKEND_UNIT_DEP)
	@mkdir -p $(BUILD)/native
	$(BACKEND_UNIT_CC) -O1 -o $@
$(BUILD)/asan/backend_unit_tests: $(BACKEND_UNIT_DEP)
	@mkdir -p $(BUILD)/asan
	$(BACKEND_UNIT_CC) -O1 $(SAN) -o $@

# pid 1 of every sandbox; static so it runs inside any template's root.
$(BUILD)/bin/e2b-sandbox-init: backend/runtime/init/sandbox_init.c
	@mkdir -p $(BUILD)/bin
	$(CC) -std=c11 -O2 -static $(WARN) $< -o $@

$(BUILD)/bin/e2b-local-backend: $(BACKEND_SRC) $(BACKEND_HDR) $(CJSON_C)
	@mkdir -p $(BUILD)/bin $(BUILD)/backend
	$(CC) $(CSTD) -O2 -g -I$(CJSON_DIR) -c $(CJSON_C) -o $(BUILD)/backend/cJSON.o
	$(CC) $(CSTD) -D_DEFAULT_SOURCE -O2 -g $(WARN) -Ibackend -I$(CJSON_DIR) \
	  $(BACKEND_SRC) $(BUILD)/backend/cJSON.o $(BACKEND_LIBS) -o $@

# --- the backend program under sanitizers ----------------------------------
# Not part of `all`: for the integration tests against a sanitized copy
# (docs/local-backend.md, the end of "Tests"). Each is a build
# directory of its own for E2BW_BUILD: the backend and the two check programs
# that link its sources are sanitized (object by object, so a change rebuilds
# one file); the other programs and the templates are the normal build's,
# linked. The sandbox's init stays unsanitized: it is static and runs in the
# sandbox's root.
#   backend-asan: ASan+UBSan in $(BUILD)/asan-backend/
#   backend-tsan: ThreadSanitizer in $(BUILD)/tsan-backend/
SANITIZED_LINKED := e2b-sandbox-init seccomp-probe seccomp-apply idmap-mount keys-probe spawn-floor

# $(1): the directory, $(2): the sanitizer's flags, $(3): the target that builds it,
# $(4): more objects and flags the backend links.
define SANITIZED_BACKEND
$(1)/obj/%.o: %.c $$(BACKEND_HDR)
	@mkdir -p $$(@D)
	$$(CC) $$(CSTD) -D_DEFAULT_SOURCE -O1 -g $(2) $$(WARN) -Ibackend -I$$(CJSON_DIR) -c $$< -o $$@
$(1)/obj/tests/backend/%.o: tests/backend/check_program.h
$(1)/obj/cJSON.o: $$(CJSON_C)
	@mkdir -p $$(@D)
	$$(CC) $$(CSTD) -O1 -g $(2) -I$$(CJSON_DIR) -c $$< -o $$@
$(1)/bin/e2b-local-backend: $(1)/obj/backend/main.o $(filter %.o,$(4))
$(1)/bin/runtime-api-check: $(1)/obj/tests/backend/runtime_api_check.o
$(1)/bin/layers-check: $(1)/obj/tests/backend/layers_check.o
$(1)/bin/e2b-local-backend $(1)/bin/runtime-api-check $(1)/bin/layers-check: \
	  $$(patsubst %.c,$(1)/obj/%.o,$$(BACKEND_LIB_SRC)) $(1)/obj/cJSON.o
	@mkdir -p $$(@D)
	$$(CC) -g $(2) $$^ $$(BACKEND_LIBS) $$(if $$(filter %/e2b-local-backend,$$@),$(filter-out %.o,$(4))) -o $$@
$$(SANITIZED_LINKED:%=$(1)/bin/%): $(1)/bin/%: $$(BUILD)/bin/%
	@mkdir -p $$(@D)
	ln -sfn $$(abspath $$<) $$@
$(1)/templates:
	@test -d $$(BUILD)/templates || { echo "no $$(BUILD)/templates: run ./build.sh first" >&2; exit 1; }
	@mkdir -p $$(@D)
	ln -sfn $$(abspath $$(BUILD)/templates) $$@
$(3): $(1)/bin/e2b-local-backend $(1)/bin/runtime-api-check $(1)/bin/layers-check \
	  $$(SANITIZED_LINKED:%=$(1)/bin/%) $(1)/templates
endef
$(eval $(call SANITIZED_BACKEND,$(BUILD)/asan-backend,$(SAN),backend-asan))
# Under TSan the forked children end by the system call (tests/backend/tsan_exit.c).
$(eval $(call SANITIZED_BACKEND,$(BUILD)/tsan-backend,-fsanitize=thread,backend-tsan,\
	$(BUILD)/tsan-backend/obj/tests/backend/tsan_exit.o -Xlinker --wrap=_exit))

# --- libFuzzer targets (clang) ------------------------------------------
FUZZ_BIN := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
fuzz: $(FUZZ_BIN)

# Targets of the backend's parsers name their sources here (by stem), and
# what else they link (FUZZ_LIBS_<stem>: libevent for those on evbuffers).
FUZZ_BACKEND_fuzz_image_ref := backend/images/images_ref.c
$(BUILD)/fuzz/fuzz_image_ref $(BUILD)/replay/fuzz_image_ref: backend/images/images_ref.c backend/images/images_ref.h
FUZZ_BACKEND_fuzz_layer_unpack := backend/images/images_unpack.c
FUZZ_LIBS_fuzz_layer_unpack := -larchive -lcrypto
$(BUILD)/fuzz/fuzz_layer_unpack $(BUILD)/replay/fuzz_layer_unpack: backend/images/images_unpack.c backend/images/images_unpack.h
FUZZ_BACKEND_fuzz_http_request := -D_DEFAULT_SOURCE backend/http/http_head.c backend/http/http_framing.c
FUZZ_LIBS_fuzz_http_request := -levent
FUZZ_BACKEND_fuzz_protojson := -D_DEFAULT_SOURCE backend/http/http_protojson.c backend/http/http_connect.c backend/http/http_reply.c backend/lib/text.c backend/lib/base64.c
FUZZ_LIBS_fuzz_protojson := -levent
$(BUILD)/fuzz/fuzz_protojson $(BUILD)/replay/fuzz_protojson: backend/http/http_protojson.c backend/http/http_protojson.h backend/http/http_connect.c backend/lib/base64.c
$(BUILD)/fuzz/fuzz_http_request $(BUILD)/replay/fuzz_http_request: backend/http/http_head.c backend/http/http_head.h backend/http/http_framing.c backend/http/http_framing.h
FUZZ_BACKEND_fuzz_egress_sni := backend/egress/egress_sni.c
$(BUILD)/fuzz/fuzz_egress_sni $(BUILD)/replay/fuzz_egress_sni: backend/egress/egress_sni.c backend/egress/egress_sni.h
FUZZ_BACKEND_fuzz_egress_host := backend/egress/egress_host.c
$(BUILD)/fuzz/fuzz_egress_host $(BUILD)/replay/fuzz_egress_host: backend/egress/egress_host.c backend/egress/egress_host.h
FUZZ_BACKEND_fuzz_egress_socks := backend/egress/egress_socks.c
$(BUILD)/fuzz/fuzz_egress_socks $(BUILD)/replay/fuzz_egress_socks: backend/egress/egress_socks.c backend/egress/egress_socks.h
NET_POLICY_SRC := backend/net/net_policy.c backend/net/net_rules.c backend/net/net_tunnel.c backend/net/net_name.c
FUZZ_BACKEND_fuzz_net_policy := -D_DEFAULT_SOURCE $(NET_POLICY_SRC)
$(BUILD)/fuzz/fuzz_net_policy $(BUILD)/replay/fuzz_net_policy: $(NET_POLICY_SRC) $(NET_POLICY_SRC:.c=.h)
FUZZ_BACKEND_fuzz_egress_http := backend/egress/egress_http.c backend/egress/egress_http_head.c
$(BUILD)/fuzz/fuzz_egress_http $(BUILD)/replay/fuzz_egress_http: backend/egress/egress_http.c backend/egress/egress_http.h \
	  backend/egress/egress_http_head.c backend/egress/egress_http_head.h

FUZZ_BACKEND_fuzz_cgroup_files := backend/runtime/runtime_cgroup_parse.c
$(BUILD)/fuzz/fuzz_cgroup_files $(BUILD)/replay/fuzz_cgroup_files: backend/runtime/runtime_cgroup_parse.c backend/runtime/runtime_cgroup_parse.h

FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -g -O1
$(BUILD)/fuzz/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) $(CORE_SRC) $(CORE_HDR) $(CJSON_C) $(SMALL_SRC) $(SMALL_HDR)
	@mkdir -p $(BUILD)/fuzz
	$(CLANG) $(CSTD) $(FUZZ_FLAGS) $(INC) -Iwasm -Ibackend $< $(FUZZ_BACKEND_$*) $(CORE_SRC) $(CJSON_C) $(SMALL_SRC) $(FUZZ_LIBS_$*) -lm -o $@

# The same targets as plain programs (gcc + ASan/UBSan, no libFuzzer): they
# replay the committed corpora in every test run.
REPLAY_BIN := $(patsubst tests/fuzz/%.c,$(BUILD)/replay/%,$(FUZZ_SRC))
replay: $(REPLAY_BIN)

$(BUILD)/replay/%: tests/fuzz/%.c tests/fuzz/replay_main.c $(wildcard tests/fuzz/*.h) $(CORE_SRC) $(CORE_HDR) $(CJSON_C) $(SMALL_SRC) $(SMALL_HDR)
	@mkdir -p $(BUILD)/replay
	$(CC) $(CSTD) -O1 -g $(SAN) $(INC) -Iwasm -Ibackend $< tests/fuzz/replay_main.c $(FUZZ_BACKEND_$*) $(CORE_SRC) $(CJSON_C) $(SMALL_SRC) $(FUZZ_LIBS_$*) -lm -o $@

clean:
	rm -rf $(BUILD)/native $(BUILD)/asan $(BUILD)/asan-backend $(BUILD)/tsan-backend $(BUILD)/replay $(BUILD)/wasm $(BUILD)/bin $(BUILD)/fuzz $(BUILD)/backend
