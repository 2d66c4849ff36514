#!/usr/bin/env bash
# make demo: run an instrumented HTTP service under load, flush a trace with
# SIGUSR1 while it runs, and show what llvm-xray makes of it: the latency
# table, the hottest stacks, a Chrome/Perfetto timeline and a flame graph
# (SVG, rendered to PNG by headless Chromium and checked not to be blank).
#
# Everything goes to $DEMO_OUT (default out/demo, ignored by git; emptied
# first), so the demo never changes tracked files. `make docs` runs it with
# --docs, which afterwards copies the flame graph to docs/ and the
# transcript into README.md.
#
# Adding a step: write a function step_<name> that reads and writes files in
# $OUT (the trace is $trace, its map $map, llvm-xray is $xray, built tools are
# in $BIN), appends what the user should read to $OUT/demo.txt through
# `show` or `say`, and records outputs with `artifact PATH "what it is"`;
# then add <name> to STEPS below. Steps run in order; any failure stops the
# demo with its message.
set -euo pipefail
cd "$(dirname "$0")/.."

STEPS=(tools build service account stack timeline flame)
DOCS=0
[ "${1:-}" = --docs ] && DOCS=1

OUT=${DEMO_OUT:-out/demo}
BIN=$OUT/bin
artifacts=()

say() { echo "$*" | tee -a "$OUT/demo.txt"; }
# show CMD...: print the command as the user would type it (paths relative
# to $OUT), run it, and keep its output in the transcript.
show() {
  local shown=${*//$OUT\//}
  say "\$ ${shown//$xray/llvm-xray}"
  "$@" | tee -a "$OUT/demo.txt"
  say ""
}
artifact() { artifacts+=("$1	$2"); }

step_tools() {
  xray=$(scripts/need-llvm-xray.sh)
  command -v go >/dev/null || { echo "error: go not found (https://go.dev/dl/)" >&2; exit 1; }
  if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
    echo "error: chromium not found (it renders the flame graph). Install it with:" >&2
    echo "  apt-get update && apt-get install -y chromium" >&2
    exit 1
  fi
}

step_build() {
  mkdir -p "$BIN"
  go build -o "$BIN/xraydemo" ./cmd/xraydemo
  go build -o "$BIN/xrayflame" ./cmd/xrayflame
  go build -o "$BIN/pngcheck" ./cmd/pngcheck
}

# step_service: run the demo service, flush it with SIGUSR1 after 4 s, stop it.
step_service() {
  "$BIN/xraydemo" -dir "$OUT" -duration 60s &
  local pid=$!
  trap "kill $pid 2>/dev/null || true" EXIT
  sleep 4
  echo "\$ kill -USR1 $pid"
  kill -USR1 "$pid"
  trace=""
  for _ in $(seq 200); do
    trace=$(ls "$OUT"/xray-log.xraydemo.* 2>/dev/null | grep -v -e '\.tmp$' -e '\.map$' | head -1 || true)
    [ -n "$trace" ] && break
    sleep 0.1
  done
  [ -n "$trace" ] || { echo "error: no trace file appeared in $OUT" >&2; exit 1; }
  kill -TERM "$pid"
  wait "$pid" || true
  trap - EXIT
  map=$trace.map
  [ -s "$map" ] || { echo "error: $map (the instrumentation map) is missing" >&2; exit 1; }
  artifact "$trace" "the trace (FDR version 5), written on SIGUSR1"
  artifact "$map" "its instrumentation map: llvm-xray's -instr_map"
}

step_account() {
  show "$xray" account -instr_map="$map" -sort=sum -sortorder=dsc -top=12 "$trace"
}

# step_stack: the hottest stacks, cut after whole stacks (each ends with a
# blank line), never inside one.
step_stack() {
  show_stack() {
    "$xray" stack "$@" | awk '/^Sum:/ { n++ } n <= 4 { print }'
  }
  local shown=${trace#"$OUT"/}
  say "\$ llvm-xray stack -instr_map=$shown.map $shown   (the 4 hottest stacks)"
  show_stack -instr_map="$map" "$trace" | tee -a "$OUT/demo.txt"
}

step_timeline() {
  "$xray" convert -symbolize -instr_map="$map" -output-format=trace_event -o "$OUT/timeline.json" "$trace"
  artifact "$OUT/timeline.json" "timeline: open in https://ui.perfetto.dev or chrome://tracing"
}

step_flame() {
  "$xray" stack -instr_map="$map" -all-stacks -stack-format=flame "$trace" \
    | "$BIN/xrayflame" -merge-threads -title "xraydemo: where the time goes" \
        -subtitle "llvm-xray stack -all-stacks -stack-format=flame, $(basename "$trace")" -o "$OUT/flame.svg"
  scripts/screenshot.sh "$OUT/flame.svg" "$OUT/flame.png"
  "$BIN/pngcheck" -min-chromatic 0.02 "$OUT/flame.png"
  artifact "$OUT/flame.svg" "flame graph (open in a browser)"
  artifact "$OUT/flame.png" "the same, rendered by headless Chromium"
}

# docs: the --docs refresh of tracked files from this run's outputs.
docs() {
  mkdir -p docs
  cp "$OUT/flame.svg" docs/flame.svg
  cp "$OUT/flame.png" docs/flame.png
  awk -v ex="$OUT/demo.txt" '
    /<!-- demo:begin -->/ { print; print "```"; while ((getline l < ex) > 0) print l; print "```"; skip=1; next }
    /<!-- demo:end -->/ { skip=0 }
    !skip { print }
  ' README.md > "$OUT/README.md"
  cp "$OUT/README.md" README.md
  echo "refreshed docs/flame.svg, docs/flame.png and the demo excerpt in README.md"
}

case "$OUT" in ""|/) echo "error: DEMO_OUT=$OUT" >&2; exit 1 ;; esac
rm -rf "$OUT"
mkdir -p "$OUT"
: > "$OUT/demo.txt"
for s in "${STEPS[@]}"; do
  "step_$s"
done
artifact "$OUT/demo.txt" "this transcript"
[ $DOCS = 1 ] && docs

echo
echo "The demo's files are in $OUT/:"
for a in "${artifacts[@]}"; do
  printf '  %-44s %s\n' "${a%%	*}" "${a#*	}"
done
