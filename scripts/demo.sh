#!/usr/bin/env bash
# make demo: run an instrumented HTTP service under load, flush a trace with
# SIGUSR1 while it runs, and show what llvm-xray makes of it: the latency
# table, the hottest stacks, a Chrome/Perfetto timeline and a flame graph
# (SVG, rendered to PNG by headless Chromium and checked not to be blank).
# It refreshes docs/flame.{svg,png} and the demo excerpt in README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
xray=$(scripts/need-llvm-xray.sh)
command -v go >/dev/null || { echo "error: go not found (https://go.dev/dl/)" >&2; exit 1; }
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  echo "error: chromium not found (it renders the flame graph). Install it with:" >&2
  echo "  apt-get update && apt-get install -y chromium" >&2
  exit 1
fi

mkdir -p bin docs
go build -o bin/xraydemo ./cmd/xraydemo
go build -o bin/xrayflame ./cmd/xrayflame
go build -o bin/pngcheck ./cmd/pngcheck
dir=$(mktemp -d /tmp/xraydemo.XXXXXX)
out=$dir/demo.txt

./bin/xraydemo -dir "$dir" -duration 60s &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
sleep 4
echo "\$ kill -USR1 $pid"
kill -USR1 "$pid"
trace=""
for _ in $(seq 200); do
  trace=$(ls "$dir"/xray-log.xraydemo.* 2>/dev/null | grep -v -e '\.tmp$' -e '\.map$' | head -1 || true)
  [ -n "$trace" ] && break
  sleep 0.1
done
[ -n "$trace" ] || { echo "error: no trace file appeared in $dir" >&2; exit 1; }
kill -TERM "$pid"
wait "$pid" || true
trap - EXIT
map=$trace.map
[ -s "$map" ] || { echo "error: $map (the instrumentation map) is missing" >&2; exit 1; }
name=$(basename "$trace")

{
  echo "\$ llvm-xray account -instr_map=$name.map -sort=sum -sortorder=dsc -top=12 $name"
  "$xray" account -instr_map="$map" -sort=sum -sortorder=dsc -top=12 "$trace"
  echo
  echo "\$ llvm-xray stack -instr_map=$name.map $name   (hottest stacks)"
  "$xray" stack -instr_map="$map" "$trace" | sed -n '1,/^Top 10 Stacks by leaf count/p' | head -40
} > "$out"
cat "$out"

"$xray" convert -symbolize -instr_map="$map" -output-format=trace_event -o "$dir/timeline.json" "$trace"
"$xray" stack -instr_map="$map" -all-stacks -stack-format=flame "$trace" \
  | bin/xrayflame -merge-threads -title "xraydemo: where the time goes" \
      -subtitle "llvm-xray stack -all-stacks -stack-format=flame, $name" -o docs/flame.svg
scripts/screenshot.sh docs/flame.svg docs/flame.png
bin/pngcheck -min-chromatic 0.02 docs/flame.png

# Refresh the README's excerpt (between the demo markers).
head -60 "$out" > "$dir/excerpt.txt"
awk -v ex="$dir/excerpt.txt" '
  /<!-- demo:begin -->/ { print; print "```"; while ((getline l < ex) > 0) print l; print "```"; skip=1; next }
  /<!-- demo:end -->/ { skip=0 }
  !skip { print }
' README.md > "$dir/README.md" && cp "$dir/README.md" README.md

echo
echo "Files in $dir:"
ls -l "$dir"
echo
echo "Timeline: load $dir/timeline.json in https://ui.perfetto.dev or chrome://tracing"
echo "Flame graph: docs/flame.svg (open it in a browser), rendered to docs/flame.png"
