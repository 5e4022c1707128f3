# layers.sh — the test layers' runner for `./build.sh test` (sourced, bash 5).
# Each layer's whole output goes to its own log file; the terminal gets one
# line per layer (name, counts, time, ok or FAILED; the name is printed as
# the layer starts, the rest when it ends), the whole output of a layer only
# when it fails, and a closing `N passed, N failed` that counts layers.
# Every layer runs even after one failed; layers_finish then fails.
#
#   layers_start DIR              logs go to DIR/<layer>.log, the layer's name in
#                                 lower case with dashes (DIR is emptied first)
#   layer NAME COUNT COMMAND...   COUNT: how to read the log's counts
#                                 (unit, replay, fuzz, node; node layers write
#                                 TAP to $LAYER_TAP for the counts)
#   layers_finish                 the closing line; status 1 when a layer failed

LAYER_LOGS=
LAYER_TAP=
LAYERS_PASSED=0
LAYERS_FAILED=0

layers_start() {
  LAYER_LOGS=$1
  rm -rf "$LAYER_LOGS" && mkdir -p "$LAYER_LOGS"
  LAYERS_PASSED=0
  LAYERS_FAILED=0
  printf 'test layers (each log in %s/):\n' "$(display_path "$LAYER_LOGS")"
}

display_path() { local p=$1; [ "${p#"$PWD"/}" != "$p" ] && p=${p#"$PWD"/}; printf '%s' "$p"; }

# C unit tests: "<suite> ok|FAILED" lines, then "N checks, N failed".
count_unit() {
  local checks
  checks=$(grep -E '^[0-9]+ checks, [0-9]+ failed$' "$1" | tail -1)
  printf '%s suites passed, %s failed; %s' "$(grep -cE '^[^ ].* +ok$' "$1")" "$(grep -cE '^[^ ].* +FAILED$' "$1")" \
    "${checks:-no check count (it crashed?)}"
}
count_replay() {
  local replayed
  replayed=$(grep -oE 'replayed [0-9]+ inputs' "$1" | tail -1)
  printf '%s' "${replayed:-no count (it crashed?)}"
}
count_fuzz() {
  local runs
  runs=$(grep -oE 'Done [0-9]+ runs' "$1" | tail -1)
  printf '%s' "${runs#Done }"
}
# node --test: the top-level TAP summary of the run ("# pass N", ...).
tap_count() { grep -E "^# $1 [0-9]+$" "$LAYER_TAP" 2>/dev/null | tail -1 | grep -oE '[0-9]+$' || echo 0; }
count_node() {
  [ -s "$LAYER_TAP" ] || { printf 'no TAP summary (it crashed?)'; return; }
  printf '%s passed, %s failed, %s skipped' "$(tap_count pass)" "$(($(tap_count fail) + $(tap_count cancelled)))" "$(tap_count skipped)"
}

layer() {
  local name=$1 count=$2; shift 2
  local slug
  slug=$(printf '%s' "$name" | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9._]+/-/g; s/^-+|-+$//g')
  local log=$LAYER_LOGS/$slug.log
  LAYER_TAP=$LAYER_LOGS/$slug.tap
  local start=$EPOCHREALTIME status=0
  printf '  %-34s ' "$name"
  "$@" >"$log" 2>&1 || status=$?
  local secs
  secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  local verdict=ok
  [ "$status" = 0 ] || verdict="FAILED (exit $status)"
  printf '%-58s %7s s  %s\n' "$("count_$count" "$log")" "$secs" "$verdict"
  if [ "$status" = 0 ]; then
    LAYERS_PASSED=$((LAYERS_PASSED + 1))
    return 0
  fi
  LAYERS_FAILED=$((LAYERS_FAILED + 1))
  printf -- '----- %s: its whole output (also in %s) -----\n' "$name" "$(display_path "$log")"
  cat "$log"
  printf -- '----- end of %s -----\n' "$name"
}

layers_finish() {
  printf '%d passed, %d failed\n' "$LAYERS_PASSED" "$LAYERS_FAILED"
  [ "$LAYERS_FAILED" = 0 ]
}
