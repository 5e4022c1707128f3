#!/usr/bin/env bash
# One idempotent script for e2b-wasm.
#
#   ./build.sh               install what is missing, build everything, check wasm/core.wasm
#   ./build.sh demo          build, run the lifecycle demo on the embedded local backend, then
#                            serve the browser playground and print its URL (Ctrl-C stops it)
#   ./build.sh test          build, then run every test (C unit + sanitizers, fuzzers, node,
#                            contract, official SDK, browser)
#   ./build.sh update-wasm   build and copy the fresh module over wasm/core.wasm (then commit it)
#
# On a fresh Debian 12 machine it installs its toolchain with apt (as root, or through sudo).
# Third-party C source (cJSON) is fetched with `apt-get source` into build/, never committed.
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
    libclang-rt-14-dev-wasm32 libevent-dev zlib1g-dev dpkg-dev ca-certificates
}

install_browser() { apt_install chromium; }

# cJSON: Debian ships no .c in libcjson-dev, so take the source package (with Debian's
# security patches applied) through a deb-src copy of the machine's own apt sources.
fetch_cjson() {
  local dest=$BUILD/third_party/cjson
  [ -f "$dest/cJSON.c" ] && [ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$CJSON_VERSION" ] && return 0
  say "fetching cJSON $CJSON_VERSION source (apt-get source)"
  if ! apt-cache showsrc cjson 2>/dev/null | grep -q "^Version: $CJSON_VERSION\$"; then
    local src=/etc/apt/sources.list.d/debian.sources
    [ -f "$src" ] || die "no $src to derive a deb-src entry from"
    sed 's/^Types: deb$/Types: deb-src/' "$src" | as_root tee /etc/apt/sources.list.d/e2b-wasm-src.sources >/dev/null
    as_root apt-get update -q >/dev/null
  fi
  local work=$BUILD/third_party/src
  rm -rf "$work" && mkdir -p "$work" "$dest"
  (cd "$work" && apt-get source -q "cjson=$CJSON_VERSION" >/dev/null 2>&1) || die "apt-get source cjson=$CJSON_VERSION failed"
  cp "$work"/cjson-1.7.15/cJSON.c "$work"/cjson-1.7.15/cJSON.h "$work"/cjson-1.7.15/LICENSE "$dest"/
  echo "$CJSON_VERSION" > "$dest/VERSION"
}

npm_deps() {
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    say "npm ci"
    npm ci --no-audit --no-fund >/dev/null
  fi
}

# Sandbox templates (backend/templates/<name>.recipe) -> build/templates/<name>/rootfs,
# rebuilt only when a recipe changes. mmdebstrap needs root; without it the backend
# runs with --isolation none (auto falls back and says so).
build_templates() {
  if [ "$(id -u)" != 0 ]; then
    say "not root: skipping sandbox templates (the backend will run without isolation)"
    return 0
  fi
  apt_install mmdebstrap
  local recipe
  for recipe in backend/templates/*.recipe; do
    backend/templates/build-template.sh "$recipe" "$BUILD/templates"
  done
}

build_all() {
  install_toolchain
  fetch_cjson
  npm_deps
  say "make"
  make -s -j"$(nproc)" all BUILD="$BUILD" >&2
  build_templates
}

check_wasm() {
  cmp -s "$BUILD/wasm/core.wasm" wasm/core.wasm && return 0
  cat >&2 <<EOF
build.sh: wasm/core.wasm is STALE: it differs from a fresh build of core/ and wasm/.
          A pinned 'abx provider install' runs no build, so it would ship old code.
          Run './build.sh update-wasm' and commit wasm/core.wasm.
EOF
  exit 1
}

run_fuzzers() {
  make -s -j"$(nproc)" fuzz BUILD="$BUILD" >&2
  local src f name corpus
  for src in tests/fuzz/fuzz_*.c; do
    name=$(basename "$src" .c)
    f=$BUILD/fuzz/$name
    corpus=$BUILD/fuzz-corpus/$name
    mkdir -p "$corpus"
    say "fuzz $name (${FUZZ_SECONDS}s)"
    "$f" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
      -artifact_prefix="$BUILD/fuzz/$name-" "$corpus" "tests/fuzz/corpus/$name" >"$BUILD/fuzz/$name.log" 2>&1 \
      || { tail -40 "$BUILD/fuzz/$name.log" >&2; die "fuzzer $name found a failure"; }
  done
}

# The committed corpora, replayed by plain (non-libFuzzer) builds of the targets.
run_replay() {
  make -s -j"$(nproc)" replay BUILD="$BUILD" >&2
  local src name
  for src in tests/fuzz/fuzz_*.c; do
    name=$(basename "$src" .c)
    say "replay corpus of $name"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 "$BUILD/replay/$name" "tests/fuzz/corpus/$name"
  done
}

run_tests() {
  install_browser
  say "C unit tests (native)"
  "$BUILD/native/unit_tests"
  say "C unit tests (ASan + UBSan)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 "$BUILD/asan/unit_tests"
  say "backend unit tests (native, then ASan + UBSan)"
  "$BUILD/native/backend_unit_tests"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 "$BUILD/asan/backend_unit_tests"
  run_replay
  run_fuzzers
  say "node tests (wasm modules, contract suite, official SDK, browser)"
  E2BW_BUILD="$BUILD" node --test --test-concurrency=1 tests/node tests/contract tests/sdk tests/browser
}

case "${1:-build}" in
  build)       build_all; check_wasm ;;
  update-wasm) build_all; cp "$BUILD/wasm/core.wasm" wasm/core.wasm; say "wasm/core.wasm updated; commit it" ;;
  test)        build_all; check_wasm; run_tests; say "all tests passed" ;;
  demo)        build_all; check_wasm; E2BW_BUILD="$BUILD" node demo/lifecycle.mjs
               E2BW_BUILD="$BUILD" node playground/serve.mjs --backend ;;
  *) die "usage: ./build.sh [build|test|demo|update-wasm]" ;;
esac
