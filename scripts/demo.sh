#!/usr/bin/env bash
# make demo: run an instrumented HTTP service under load, flush a trace with
# SIGUSR1 while it runs, and read it: llvm-xray's latency table, then goxray's
# own views (the same table, the hottest paths with goroutines nested under
# the call that spawned them, a goroutine-aware flame graph, a pprof profile,
# a Perfetto timeline); then build the same service from sources with no
# goxray line (`goxray build`) and trace it with XRAY_OPTIONS alone; last, a
# slow request of an OpenTelemetry-traced service as Jaeger stores it.
#
# Everything goes to $DEMO_OUT (default out/demo, ignored by git; emptied
# first) but the derived service's source, which goes to out/_autodemo
# (see step_auto), so the demo never changes tracked files. Chromium, when
# installed, renders the flame graph and pprof's web flame graph to PNGs
# (checked not to be blank); without it those two images are skipped with
# the install command. `make docs` runs it with --docs, which requires Chromium and
# afterwards copies the images to docs/, the transcript into docs/demo.md and
# an excerpt of it (see excerpt) into README.md.
#
# Adding a step: write a function step_<name> that reads and writes files in
# $OUT (the trace is $trace, its map $map, llvm-xray is $xray, built tools are
# in $BIN), appends what the user should read to $OUT/demo.txt through
# `show` or `say`, and records outputs with `artifact PATH "what it is"`;
# then add <name> to STEPS below. Steps run in order; any failure stops the
# demo with its message.
set -euo pipefail
cd "$(dirname "$0")/.."

STEPS=(tools build service account top why flame pprof timeline auto otel)
DOCS=0
[ "${1:-}" = --docs ] && DOCS=1

OUT=${DEMO_OUT:-out/demo}
BIN=$OUT/bin
artifacts=()
cleanup=()
trap 'for c in "${cleanup[@]}"; do eval "$c"; done' EXIT

say() { echo "$*" | tee -a "$OUT/demo.txt"; }
# show CMD...: print the command as the user would type it (paths relative
# to $OUT, goxray for the built tool, llvm-xray for $xray), run it, and keep
# its output in the transcript.
show() {
  local shown=${*//$BIN\/goxray/goxray}
  shown=${shown//$OUT\//}
  say "\$ ${shown//$xray/llvm-xray}"
  "$@" | tee -a "$OUT/demo.txt"
  say ""
}
artifact() { artifacts+=("$1	$2"); }
# wait_for GLOB: the first trace file matching GLOB that has its .map
# beside it (so neither a map nor a temporary file), waiting up to 20 s.
wait_for() {
  local f
  for _ in $(seq 200); do
    for f in $1; do
      case "$f" in *.map|*.tmp|*.gotrace) continue ;; esac
      [ -s "$f" ] && [ -s "$f.map" ] && { echo "$f"; return; }
    done
    sleep 0.1
  done
  echo "error: no trace file (with its .map) matching $1 appeared" >&2
  exit 1
}

step_tools() {
  xray=$(scripts/need-llvm-xray.sh)
  command -v go >/dev/null || { echo "error: go not found (https://go.dev/dl/)" >&2; exit 1; }
  chrome=""
  for c in chromium chromium-browser; do
    if command -v "$c" >/dev/null 2>&1; then chrome=$(command -v "$c"); break; fi
  done
  if [ -z "$chrome" ]; then
    if [ $DOCS = 1 ]; then
      echo "error: make docs needs chromium (it renders docs/flame.png and docs/pprof.png). Install it with:" >&2
      echo "  apt-get update && apt-get install -y chromium" >&2
      exit 1
    fi
    echo "note: chromium not found: the flame graph stays an SVG and pprof's web view is not captured" >&2
    echo "  (apt-get update && apt-get install -y chromium)" >&2
  fi
}

step_build() {
  mkdir -p "$BIN"
  # One go build for the three commands: their shared packages compile once.
  go build -o "$BIN/" ./internal/cmd/xraydemo ./cmd/goxray ./internal/cmd/pngcheck
}

# step_service: run the demo service, flush it with SIGUSR1 after 4 s, stop it.
step_service() {
  "$BIN/xraydemo" -dir "$OUT" -duration 60s &
  local pid=$!
  cleanup+=("kill $pid 2>/dev/null || true")
  sleep 4
  echo "\$ kill -USR1 $pid"
  kill -USR1 "$pid"
  trace=$(wait_for "$OUT/xray-log.xraydemo.*")
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" || true
  map=$trace.map
  artifact "$trace" "the trace (FDR version 5), written on SIGUSR1"
  artifact "$map" "its instrumentation map: llvm-xray's -instr_map"
}

# step_account: llvm-xray's latency table, then goxray's, which must agree
# row for row (goxray's reads the file in bounded memory, many times faster)
# once what goxray adds is set aside: the marks in brackets after a name
# (calls entered before the window, open at its end, shed), the rows of
# calls with no latency in the window, and the notes after the table.
step_account() {
  show "$xray" account -instr_map="$map" -sort=sum -sortorder=dsc -top=12 "$trace"
  local t0 t1 t2
  t0=$(date +%s.%N)
  "$xray" account -instr_map="$map" -sort=sum -sortorder=dsc "$trace" > "$OUT/account.llvm-xray.txt"
  t1=$(date +%s.%N)
  "$BIN/goxray" account -sort=sum -sortorder=dsc "$trace" > "$OUT/account.goxray.txt"
  t2=$(date +%s.%N)
  awk 'NR > 2 && $0 == "" { exit } NR > 2 && $2 == 0 { next } { sub(/ \[[^]]*\]$/, ""); print }' \
    "$OUT/account.goxray.txt" > "$OUT/account.goxray.llvm.txt"
  if ! cmp -s "$OUT/account.llvm-xray.txt" "$OUT/account.goxray.llvm.txt"; then
    echo "error: goxray account and llvm-xray account disagree:" >&2
    diff "$OUT/account.llvm-xray.txt" "$OUT/account.goxray.llvm.txt" >&2 || true
    exit 1
  fi
  say "\$ goxray account -sort=sum -sortorder=dsc $(basename "$trace")"
  say "$(awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "(the same numbers, row for row: checked; %.2f s here, llvm-xray %.2f s)", c - b, b - a }')"
  grep -q '\[' "$OUT/account.goxray.txt" && say "$(grep -c ' \[[^]]*\]$' "$OUT/account.goxray.txt") rows carry marks of what the window lacks; the notes under goxray's table say what they mean."
  say ""
}

step_top() {
  show "$BIN/goxray" top -lineage -n 10 "$trace"
}

# step_why: why the time went: the Go execution trace the service writes
# beside every file (Options.GoTrace) split into running, runnable and
# blocked by reason, then the slowest request explained call by call.
step_why() {
  local i
  for i in $(seq 200); do
    [ -s "$trace.gotrace" ] && break
    sleep 0.1
  done
  [ -s "$trace.gotrace" ] || { echo "error: no Go trace beside $trace" >&2; exit 1; }
  artifact "$trace.gotrace" "Go's execution trace of the same window (go tool trace reads it too)"
  show "$BIN/goxray" why -n 4 "$trace"
  show "$BIN/goxray" why -slowest 1 -func 'main.(*Server).handleUser' "$trace"
  local slowest
  slowest=$("$BIN/goxray" why -slowest 1 -func 'main.(*Server).handleUser' "$trace" 2>/dev/null)
  case "$slowest" in
    *"blocked on sync at main.(*Server).handleUser"*) ;;
    *) echo "error: goxray why does not explain the slowest request as a wait for its fan-out: $slowest" >&2; exit 1 ;;
  esac
}

# step_flame: the goroutine-aware flame graph: fan-out goroutines drawn
# under the call that spawned them ("go NAME" frames), widths in time.
step_flame() {
  "$BIN/goxray" flame -lineage -title "xraydemo: goroutine-aware flame graph" \
    -subtitle "goxray flame -lineage $(basename "$trace"): widths are goroutine time; \"go F\" frames run concurrently with their spawner" \
    -o "$OUT/flame.svg" "$trace"
  artifact "$OUT/flame.svg" "goroutine-aware flame graph (open in a browser)"
  if [ -n "$chrome" ]; then
    scripts/screenshot.sh "$OUT/flame.svg" "$OUT/flame.png"
    "$BIN/pngcheck" -min-chromatic 0.02 "$OUT/flame.png"
    artifact "$OUT/flame.png" "the same, rendered by headless Chromium"
  fi
}

# step_pprof: the same call paths as a pprof profile, read by go tool pprof;
# with Chromium, a screenshot of pprof's own web UI (its flame graph view).
step_pprof() {
  "$BIN/goxray" pprof -lineage -o "$OUT/xraydemo.pb.gz" "$trace"
  say "\$ goxray pprof -lineage -o xraydemo.pb.gz $(basename "$trace")"
  show go tool pprof -top -nodecount=12 "$OUT/xraydemo.pb.gz"
  artifact "$OUT/xraydemo.pb.gz" "pprof profile: go tool pprof -http=: $OUT/xraydemo.pb.gz"
  [ -n "$chrome" ] || return 0
  # A port from 18000-18999 (none on Chromium's unsafe list; pprof prints
  # 0 for -http=:0): another one if it is taken.
  local log=$OUT/pprof-http.log url="" pid port
  for _ in 1 2 3 4 5; do
    port=$((18000 + RANDOM % 1000))
    go tool pprof -http=127.0.0.1:$port -no_browser "$OUT/xraydemo.pb.gz" > "$log" 2>&1 &
    pid=$!
    cleanup+=("kill $pid 2>/dev/null || true")
    for _ in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      grep -q "Serving web UI" "$log" && { url=http://127.0.0.1:$port; break; }
      sleep 0.1
    done
    [ -n "$url" ] && break
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  [ -n "$url" ] || { echo "error: go tool pprof -http did not start:" >&2; cat "$log" >&2; exit 1; }
  scripts/screenshot.sh "$url/ui/flamegraph" "$OUT/pprof.png" 1400 300
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  "$BIN/pngcheck" -min-chromatic 0.02 "$OUT/pprof.png"
  artifact "$OUT/pprof.png" "pprof's web flame graph of it, captured by headless Chromium"
}

step_timeline() {
  "$BIN/goxray" perfetto -o "$OUT/timeline.perfetto-trace" "$trace"
  artifact "$OUT/timeline.perfetto-trace" "timeline, one track per goroutine: open in https://ui.perfetto.dev"
}

# step_auto: the same service with every goxray line removed, written from
# internal/cmd/xraydemo by internal/autodemo into out/_autodemo: inside the module
# whatever DEMO_OUT is, so that goxray build builds it as one of the
# module's packages, and out of ./... by its leading _. goxray build
# instruments it, XRAY_OPTIONS starts the recorder, SIGUSR1
# flushes it.
# step_otel: one slow request across three OpenTelemetry-traced services,
# as Jaeger stores it after the collector's tail sampling (the function
# spans xrayotel exported, the HTTP and gRPC client spans under the calls
# that made them, read back from Jaeger's API; scripts/demo-otel.sh; it
# builds Jaeger once, a few minutes the first time).
step_otel() {
  say "# A slow request in the tracing backend: one tree across three services, function spans and library spans"
  DEMO_OUT=$OUT GO=${GO:-go} scripts/demo-otel.sh >/dev/null
  cat "$OUT/otel/demo.txt" | tee -a "$OUT/demo.txt"
  say ""
  artifact "$OUT/otel/" "the slow request: Jaeger's copy (demo.txt), the services' and Jaeger's logs and configuration (run/)"
}

step_auto() {
  local dir=$OUT/auto
  mkdir -p "$dir"
  go run ./internal/autodemo/cmd/writeautodemo internal/cmd/xraydemo out/_autodemo
  say "# The same service without a single goxray line, built with goxray build:"
  show "$BIN/goxray" build -o "$BIN/autodemo" ./out/_autodemo
  XRAY_OPTIONS="patch_premain=true xray_mode=xray-fdr xray_logfile_base=$dir/" \
    "$BIN/autodemo" -duration 30s > "$OUT/autodemo.log" 2>&1 &
  local pid=$!
  cleanup+=("kill $pid 2>/dev/null || true")
  say "\$ XRAY_OPTIONS=\"patch_premain=true xray_mode=xray-fdr xray_logfile_base=auto/\" bin/autodemo &"
  sleep 2
  say "\$ kill -USR1 $pid"
  kill -USR1 "$pid"
  local t
  t=$(wait_for "$dir/autodemo.*")
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" || true
  show "$xray" account -instr_map="$t.map" -sort=sum -sortorder=dsc -top=10 "$t"
  artifact "$t" "the automatically instrumented service's trace (and its .map)"
}

# splice FILE MARKER TEXT: replace what lies between the lines that are
# exactly <!-- MARKER:begin --> and <!-- MARKER:end --> in FILE by a code
# block holding TEXT's lines (whole lines, so prose may name the markers).
splice() {
  local b="<!-- $2:begin -->" e="<!-- $2:end -->"
  grep -qxF "$b" "$1" && grep -qxF "$e" "$1" || { echo "error: $1 lacks the lines $b and $e" >&2; exit 1; }
  awk -v ex="$3" -v b="$b" -v e="$e" '
    $0 == b { print; print "```"; while ((getline l < ex) > 0) print l; print "```"; skip=1; next }
    $0 == e { skip=0 }
    !skip { print }
  ' "$1" > "$OUT/splice.tmp"
  cp "$OUT/splice.tmp" "$1"
  rm -f "$OUT/splice.tmp"
}

# excerpt: the README's short copy of the transcript: llvm-xray's table,
# then the head of goxray top -lineage's hottest call paths, where the
# fan-out goroutines appear nested under the call that started them.
# demo.txt's steps are paragraphs (separated by blank lines).
excerpt() {
  awk 'BEGIN { RS = ""; FS = "\n" }
    /^\$ llvm-xray account/ && !acct { acct = 1; print; print ""; next }
    /^\$ goxray top -lineage/ && !top { top = 1; print $1; print $2; print "…"; next }
    /^Hottest call paths/ && top == 1 { top = 2; for (i = 1; i <= 7 && i <= NF; i++) print $i; if (NF > 7) print "…" }
  ' "$OUT/demo.txt"
}

# docs: the --docs refresh of tracked files from this run's outputs.
docs() {
  mkdir -p docs
  cp "$OUT/flame.svg" docs/flame.svg
  cp "$OUT/flame.png" docs/flame.png
  cp "$OUT/pprof.png" docs/pprof.png
  splice docs/demo.md demo "$OUT/demo.txt"
  excerpt > "$OUT/demo-excerpt.txt"
  splice README.md demo-excerpt "$OUT/demo-excerpt.txt"
  echo "refreshed docs/flame.svg, docs/flame.png, docs/pprof.png, the transcript in docs/demo.md and its excerpt in README.md"
}

case "$OUT" in ""|/) echo "error: DEMO_OUT=$OUT" >&2; exit 1 ;; esac
start=$(date +%s)
rm -rf "$OUT"
mkdir -p "$OUT"
: > "$OUT/demo.txt"
for s in "${STEPS[@]}"; do
  "step_$s"
done
artifact "$OUT/demo.txt" "this transcript"
[ $DOCS = 1 ] && docs

echo
echo "The demo's files are in $OUT/ ($(( $(date +%s) - start )) s):"
for a in "${artifacts[@]}"; do
  printf '  %-48s %s\n' "${a%%	*}" "${a#*	}"
done
