#!/usr/bin/env bash
# One idempotent script for e2b-wasm.
#
#   ./build.sh               install what is missing, build everything, check wasm/core.wasm
#   ./build.sh demo          build, run the lifecycle demo on the embedded local backend, then
#                            serve the browser playground and print its URL (Ctrl-C stops it)
#   ./build.sh test          build, then run every test (C unit + sanitizers, fuzzers, node,
#                            contract, official SDK, browser): one line per layer, logs in
#                            build/test-logs/, a failing layer's whole output, "N passed, N failed"
#   ./build.sh update-wasm   build, then copy the fresh module over wasm/core.wasm and the fresh bundle of js-shim/ over provider.mjs (then commit them)
#
# On a fresh Debian 12 machine it installs its toolchain with apt (as root, or through sudo).
# Third-party C source (cJSON) is fetched with `apt-get source` into build/, never committed,
# through an apt configuration of its own in build/apt (the system's apt state is untouched).
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
BUILD=$ROOT/build
CJSON_VERSION=1.7.15-1+deb12u4   # pinned: wasm/core.wasm is compared byte for byte
FUZZ_SECONDS=${FUZZ_SECONDS:-15}

say() { printf '\033[1m== %s\033[0m\n' "$*" >&2; }
die() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else die "need root to run: $*"; fi
}

APT_UPDATED=0
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]}"
  if [ $APT_UPDATED = 0 ]; then as_root apt-get update -q >/dev/null; APT_UPDATED=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

install_toolchain() {
  apt_install make gcc clang lld libclang-rt-14-dev emscripten binaryen wasi-libc \
    libclang-rt-14-dev-wasm32 libevent-dev zlib1g-dev libseccomp-dev libmnl-dev libnftables-dev libarchive-dev libssl-dev dpkg-dev ca-certificates
}

install_browser() { apt_install chromium; }

# apt with a configuration of its own under build/apt: deb-src entries derived from the
# machine's own sources, and its own package lists and cache. The system's apt state
# (/etc/apt, /var/lib/apt, /var/cache/apt) is only read, and no root is needed.
APT_DIR=$BUILD/apt
private_apt() {
  local tool=$1; shift
  "$tool" -q -o Dir::Etc::SourceList="$APT_DIR/sources.list" -o Dir::Etc::SourceParts="$APT_DIR/sources.list.d" \
    -o Dir::State::Lists="$APT_DIR/lists" -o Dir::Cache="$APT_DIR/cache" -o APT::Sandbox::User="$(id -un)" "$@"
}

private_apt_sources() {
  mkdir -p "$APT_DIR/sources.list.d" "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
  : > "$APT_DIR/sources.list"
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$APT_DIR/sources.list.d/debian-src.sources"
  elif [ -f /etc/apt/sources.list ]; then
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list > "$APT_DIR/sources.list"
  else
    die "no /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list to derive deb-src entries from"
  fi
}

# The private configuration's package lists, read (apt-get update) when they do not
# name source package $1 (at version $2, when given).
private_apt_lists() {
  private_apt apt-cache showsrc "$1" 2>/dev/null | grep -q "^Version: ${2:-.*}\$" && return 0
  private_apt_sources
  private_apt apt-get update >/dev/null || die "apt-get update (private configuration in $APT_DIR) failed"
}

# cJSON: Debian ships no .c in libcjson-dev, so take the source package (with Debian's
# security patches applied) through the private apt configuration above.
fetch_cjson() {
  local dest=$BUILD/third_party/cjson
  [ -f "$dest/cJSON.c" ] && [ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$CJSON_VERSION" ] && return 0
  say "fetching cJSON $CJSON_VERSION source (apt-get source, apt configuration in $APT_DIR)"
  private_apt_lists cjson "$CJSON_VERSION"
  local work=$BUILD/third_party/src
  rm -rf "$work" && mkdir -p "$work" "$dest"
  (cd "$work" && private_apt apt-get source "cjson=$CJSON_VERSION" >/dev/null 2>&1) || die "apt-get source cjson=$CJSON_VERSION failed"
  cp "$work"/cjson-1.7.15/cJSON.c "$work"/cjson-1.7.15/cJSON.h "$work"/cjson-1.7.15/LICENSE "$dest"/
  echo "$CJSON_VERSION" > "$dest/VERSION"
}

# busybox for the image tests' Alpine-like image (tests/sdk/e2b-sdk-image-provision.test.mjs).
# Debian's busybox packages leave out adduser and addgroup (Debian has its own), and those
# are what the provisioning's busybox branch runs; so it is built from Debian's busybox
# source with them and the few applets that image needs: static, with busybox's own
# passwd/group code (no NSS), Alpine's id ranges. Rebuilt only when this list changes.
BUSYBOX_CONFIG="STATIC=y BUSYBOX=y FEATURE_INSTALLER=y LONG_OPTS=y USE_BB_PWD_GRP=y USE_BB_SHADOW=y
  FEATURE_SHADOWPASSWDS=y ADDUSER=y ADDGROUP=y FEATURE_ADDUSER_TO_GROUP=y FIRST_SYSTEM_ID=100
  LAST_SYSTEM_ID=999 LAST_ID=60000 ASH=y SH_IS_ASH=y ASH_ECHO=y ASH_PRINTF=y ASH_TEST=y
  ASH_CMDCMD=y FEATURE_SH_MATH=y CAT=y CP=y CHMOD=y CHOWN=y MKDIR=y TAIL=y FEATURE_FANCY_TAIL=y
  ID=y WHOAMI=y LS=y STAT=y FEATURE_STAT_FORMAT=y GREP=y ECHO=y TEST=y TEST1=y TRUE=y FALSE=y"
build_busybox() {
  local dest=$BUILD/busybox work=$BUILD/third_party/busybox-src src option
  [ -x "$dest/busybox" ] && [ "$(cat "$dest/CONFIG" 2>/dev/null)" = "$BUSYBOX_CONFIG" ] && return 0
  say "building busybox with adduser (apt-get source busybox, apt configuration in $APT_DIR)"
  private_apt_lists busybox
  rm -rf "$work" "$dest" && mkdir -p "$work" "$dest"
  (cd "$work" && private_apt apt-get source busybox >/dev/null 2>&1) || die "apt-get source busybox failed"
  src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'busybox-*' | head -n 1)
  make -s -C "$src" allnoconfig >/dev/null
  for option in $BUSYBOX_CONFIG; do
    sed -i -e "/^# CONFIG_${option%%=*} is not set\$/d" -e "/^CONFIG_${option%%=*}=/d" "$src/.config"
    echo "CONFIG_$option" >> "$src/.config"
  done
  (yes "" || :) | make -s -C "$src" oldconfig >/dev/null # (yes ends on SIGPIPE: not a failure)
  for option in $BUSYBOX_CONFIG; do
    grep -qx "CONFIG_$option" "$src/.config" || die "busybox's configuration has no CONFIG_$option"
  done
  make -s -C "$src" -j"$(nproc)" busybox >/dev/null 2>&1 || die "building busybox failed (in $src)"
  cp "$src/busybox" "$src/LICENSE" "$dest/"
  echo "$BUSYBOX_CONFIG" > "$dest/CONFIG"
  rm -rf "$work"
}

npm_deps() {
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    say "npm ci"
    npm ci --no-audit --no-fund >/dev/null
  fi
}

# Sandbox templates (backend/templates/<name>.recipe) -> build/templates/<name>/rootfs,
# rebuilt only when a recipe changes. As root they belong to root and the template's
# users (full isolation). As another user they are built with mmdebstrap --mode=unshare
# from that user's subordinate ids, for the backend's rootless isolation; what that
# needs and the machine lacks is said plainly, and the build stops.
build_templates() {
  apt_install mmdebstrap
  if [ "$(id -u)" != 0 ]; then
    apt_install uidmap
    rootless_ready
  else
    apt_install e2fsprogs # mke2fs: the sandboxes' disk images (docs/backend/cgroups-and-limits.md)
    apt_install skopeo # images from registries, fromImage (docs/templates.md)
  fi
  local recipe
  for recipe in backend/templates/*.recipe; do
    backend/templates/build-template.sh "$recipe" "$BUILD/templates"
  done
}

# What a user other than root needs for templates and a rootless backend.
rootless_ready() {
  local user uid missing=()
  user=$(id -un)
  uid=$(id -u)
  grep -qE "^($user|$uid):[0-9]+:[0-9]+\$" /etc/subuid 2>/dev/null || missing+=("subordinate user ids for $user in /etc/subuid (65536 of them)")
  grep -qE "^($user|$uid):[0-9]+:[0-9]+\$" /etc/subgid 2>/dev/null || missing+=("subordinate group ids for $user in /etc/subgid (65536 of them)")
  unshare --user --map-root-user true 2>/dev/null || missing+=("user namespaces for users other than root (sysctl user.max_user_namespaces > 0, and kernel.unprivileged_userns_clone = 1 where it exists)")
  [ ${#missing[@]} -eq 0 ] && return 0
  {
    echo "build.sh: building the sandbox templates as $user (not root) needs, for rootless isolation:"
    printf '  - %s\n' "${missing[@]}"
    echo "  As root, for example: usermod --add-subuids 100000-165535 --add-subgids 100000-165535 $user"
    echo "  (pick a range no other user has), or run ./build.sh as root (full isolation)."
  } >&2
  exit 1
}

# provider.mjs, the entry hosts import, is js-shim/provider.mjs bundled with
# the rest of js-shim/ into one file (esbuild, from npm): one module for Node
# to resolve, read and compile, not four, and minified (half the bytes to
# read, decode and parse; js-shim/ is the source to read). Committed, as
# wasm/core.wasm is.
bundle_provider() {
  node_modules/.bin/esbuild js-shim/provider.mjs --bundle --minify --format=esm --platform=neutral --external:'node:*' \
    --define:E2BW_CORE_WASM='"./wasm/core.wasm"' --log-level=warning --outfile="$1" \
    --banner:js='// provider.mjs — GENERATED by ./build.sh from js-shim/ (esbuild): edit js-shim/, then ./build.sh update-wasm.'
}

# One make of the Makefile's targets $@ in parallel, after a line naming it.
make_stage() {
  local what=$1; shift
  say "make $*: $what"
  make -s -j"$(nproc)" "$@" BUILD="$BUILD" >&2
}

build_all() {
  install_toolchain
  fetch_cjson
  npm_deps
  # the Makefile's `all`, a stage at a time
  make_stage "the core and its unit tests (native; ASan + UBSan)" native asan
  make_stage "core.wasm and core-wasi.wasm" wasm
  make_stage "the backend and its programs" backend
  make_stage "the backend's unit tests (native; ASan + UBSan)" backend-unit
  make -s -j"$(nproc)" all BUILD="$BUILD" >&2 # whatever else `all` names (nothing, as it stands)
  bundle_provider "$BUILD/provider.mjs"
  build_templates
}

check_wasm() {
  cmp -s "$BUILD/wasm/core.wasm" wasm/core.wasm && cmp -s "$BUILD/provider.mjs" provider.mjs && return 0
  cat >&2 <<EOF
build.sh: wasm/core.wasm or provider.mjs is STALE: it differs from a fresh build of core/ and
          wasm/, or a fresh bundle of js-shim/. A pinned 'abx provider install' runs no build,
          so it would ship old code. Run './build.sh update-wasm' and commit both.
EOF
  exit 1
}

fuzz_target() {
  local name=$1 corpus=$BUILD/fuzz-corpus/$1
  mkdir -p "$corpus"
  "$BUILD/fuzz/$name" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
    -artifact_prefix="$BUILD/fuzz/$name-" "$corpus" "tests/fuzz/corpus/$name"
}

# A node layer that has not ended after NODE_LAYER_MINUTES (default 40; each
# takes a few minutes) is stopped, so a hung test fails its layer with its
# output instead of using up CI's time with none.
node_tests() {
  E2BW_BUILD="$BUILD" timeout --kill-after=30 "$((${NODE_LAYER_MINUTES:-40} * 60))" \
    node --test --test-concurrency=1 --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$LAYER_TAP" "$@"
}

# tests/cgroup2 in the cgroup v2 guest (tests/guest/, docs/testing.md): one boot,
# the tests run as root there and start backends as root and as a user with a
# delegated subtree; their TAP comes back through the run's $E2BW_GUEST_OUT.
# The guest is killed after GUEST_LAYER_MINUTES (default 15).
guest_tests() {
  local dir=${1:-tests/cgroup2/} out=$LAYER_LOGS/guest-out status=0
  rm -rf "$out"
  E2BW_BUILD="$BUILD" node tests/guest/run.mjs --times --timeout "$((${GUEST_LAYER_MINUTES:-15} * 60))" --out "$out" -- \
    bash -c 'exec node --test --test-concurrency=1 --test-reporter=spec --test-reporter-destination=stdout --test-reporter=tap --test-reporter-destination="$E2BW_GUEST_OUT/tests.tap" "$0"' "$dir" ||
    status=$?
  if [ -f "$out/tests.tap" ]; then mv "$out/tests.tap" "$LAYER_TAP"; fi
  rm -rf "$out"
  return "$status"
}

# One line per layer (tests/layers.sh); a failing layer's whole output; every
# log in build/test-logs/. The closing "N passed, N failed" counts layers.
run_tests() {
  install_browser
  apt_install nftables iperf3 iproute2 uidmap # the networking tests make namespaces (ip) and look at nft's tables; bench/ uses iperf3; tests/rootless maps subordinate ids (newuidmap)
  apt_install skopeo docker-registry apache2-utils zstd # the image tests fill a loopback registry (htpasswd: its bcrypt password file)
  apt_install clang-format # tests/node/format.test.mjs: every C file as .clang-format lays it out
  apt_install qemu-system-x86 kmod # the cgroup v2 guest (tests/guest/): QEMU and its virtiofsd; modprobe and depmod for the guest kernel's modules
  make_stage "the fuzz targets as plain programs (ASan + UBSan), to replay the corpora" replay
  make_stage "the fuzz targets (libFuzzer)" fuzz
  make_stage "the backend and its unit tests under ThreadSanitizer" backend-tsan
  # shellcheck source=tests/layers.sh
  . tests/layers.sh
  layers_start "$BUILD/test-logs"
  layer "C unit tests (native)" unit "$BUILD/native/unit_tests"
  layer "C unit tests (ASan + UBSan)" unit \
    env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 "$BUILD/asan/unit_tests"
  layer "backend unit tests (native)" unit "$BUILD/native/backend_unit_tests"
  layer "backend unit tests (ASan + UBSan)" unit \
    env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 "$BUILD/asan/backend_unit_tests"
  layer "backend unit tests (TSan)" unit env TSAN_OPTIONS=halt_on_error=1 "$BUILD/tsan-backend/backend_unit_tests"
  local src name
  # the committed corpora, replayed by plain (non-libFuzzer) builds of the targets
  for src in tests/fuzz/fuzz_*.c; do
    name=$(basename "$src" .c)
    layer "replay $name" replay env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 "$BUILD/replay/$name" "tests/fuzz/corpus/$name"
  done
  for src in tests/fuzz/fuzz_*.c; do
    name=$(basename "$src" .c)
    layer "fuzz $name" fuzz fuzz_target "$name"
  done
  layer "node tests/node" node node_tests tests/node
  # the backend started by a user other than root (rootless); needs root to set that user up
  layer "node tests/rootless" node node_tests tests/rootless
  layer "cgroup v2 guest (tests/cgroup2)" node guest_tests tests/cgroup2/
  # pause with checkpoints (CRIU) where Debian's criu works its kernel
  layer "checkpoint guest (tests/checkpoint)" node guest_tests tests/checkpoint/
  layer "node tests/net (world namespace)" node node_tests tests/net
  layer "node tests/contract" node node_tests tests/contract
  layer "node tests/sdk (e2b SDK)" node node_tests tests/sdk
  layer "node tests/browser (Chromium)" node node_tests tests/browser
  layers_finish
}

# Sourced (tests/node/build-script.test.mjs): the functions only.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

usage() {
  cat <<'EOF'
usage: ./build.sh [build|test|demo|update-wasm]
  build        (the default) install what is missing, build everything, check wasm/core.wasm
  test         build, then run every test layer: one line each, logs in build/test-logs/
  demo         build, walk a sandbox through its life on the local backend, then serve the playground
  update-wasm  build and copy the fresh module over wasm/core.wasm (then commit it)
  -h, --help   this text
EOF
}

case "${1:-build}" in
  build)       build_all; check_wasm ;;
  update-wasm) build_all; cp "$BUILD/wasm/core.wasm" wasm/core.wasm; cp "$BUILD/provider.mjs" provider.mjs
               say "wasm/core.wasm and provider.mjs updated; commit them" ;;
  test)        build_all; build_busybox; check_wasm; run_tests ;; # busybox: a test fixture only
  demo)        build_all; check_wasm; E2BW_BUILD="$BUILD" node demo/lifecycle.mjs
               E2BW_BUILD="$BUILD" node playground/serve.mjs --backend ;;
  -h|--help|help) usage ;;
  *) printf "build.sh: unknown command '%s'\n" "$1" >&2; usage >&2; exit 2 ;;
esac
