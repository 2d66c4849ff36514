#!/usr/bin/env bash
# screenshot.sh IN.svg OUT.png [WIDTH HEIGHT]
# screenshot.sh http://HOST:PORT/PAGE OUT.png WIDTH HEIGHT
#
# Renders an SVG (or a web page, such as pprof's -http UI) to a PNG with
# headless Chromium, the way a person would see it in a browser. For an SVG
# the window size defaults to its own width and height attributes (rounded
# up), so the whole image is captured; a page is given 5 s of virtual time
# for its scripts to draw. Chromium gets a
# fresh, empty profile each time and is told not to touch the network.
#
# Chromium is started as root by this project's demo, which needs
# --no-sandbox; its stderr is kept in a log and shown only on failure.
set -euo pipefail

usage() { echo "usage: $0 IN.svg OUT.png [WIDTH HEIGHT] | $0 URL OUT.png WIDTH HEIGHT" >&2; exit 2; }
[ $# -eq 2 ] || [ $# -eq 4 ] || usage
svg=$1 png=$2

chrome=""
for c in chromium chromium-browser; do
  if command -v "$c" >/dev/null 2>&1; then chrome=$(command -v "$c"); break; fi
done
if [ -z "$chrome" ]; then
  echo "error: chromium not found. Install it with:" >&2
  echo "  apt-get update && apt-get install -y chromium" >&2
  exit 1
fi

url=""
case "$svg" in
  http://*|https://*)
    url=$svg
    [ $# -eq 4 ] || { echo "error: a URL needs WIDTH HEIGHT" >&2; usage; } ;;
  *)
    # A missing file would make Chromium screenshot its error page, which is
    # not blank; stop here instead.
    [ -r "$svg" ] && [ -s "$svg" ] || { echo "error: $svg is missing or empty" >&2; exit 1; } ;;
esac

if [ $# -eq 4 ]; then
  w=$3 h=$4
else
  # The root element's width="…" and height="…", rounded up to whole pixels.
  root=$(grep -m1 -o '<svg [^>]*>' "$svg" || true)
  w=$(printf '%s' "$root" | sed -n 's/.* width="\([0-9.]*\)".*/\1/p')
  h=$(printf '%s' "$root" | sed -n 's/.* height="\([0-9.]*\)".*/\1/p')
  [ -n "$w" ] && [ -n "$h" ] || { echo "error: no width/height on the <svg> element of $svg; pass WIDTH HEIGHT" >&2; exit 1; }
  w=$(awk -v v="$w" 'BEGIN { printf "%d", (v == int(v)) ? v : int(v) + 1 }')
  h=$(awk -v v="$h" 'BEGIN { printf "%d", (v == int(v)) ? v : int(v) + 1 }')
fi
case "$w$h" in *[!0-9]*|"") usage ;; esac
# Headless Chromium 156 captures only the top (height - 87 px) of windows
# shorter than 144 px, so never ask for less: the PNG then shows the page
# background under a short image instead of losing most of it.
if [ "$h" -lt 160 ]; then
  echo "note: window height $h raised to 160 (chromium clips shorter windows)" >&2
  h=160
fi

extra=()
if [ -n "$url" ]; then
  # Chromium refuses ports on its unsafe list (ERR_UNSAFE_PORT) unless told.
  port=$(printf '%s' "$url" | sed -n 's|^[a-z]*://[^/:]*:\([0-9]*\).*|\1|p')
  extra=(--virtual-time-budget=5000 ${port:+--explicitly-allowed-ports=$port})
else
  url=file://$(cd "$(dirname "$svg")" && pwd)/$(basename "$svg")
fi
abs_png=$(mkdir -p "$(dirname "$png")" && cd "$(dirname "$png")" && pwd)/$(basename "$png")
profile=$(mktemp -d /tmp/chromium-profile.XXXXXX)
log=$(mktemp /tmp/chromium-log.XXXXXX)
trap 'rm -rf "$profile" "$log"' EXIT
rm -f "$abs_png"

start=$(date +%s.%N)
# timeout: a wedged browser must not hang `make demo`.
if ! timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --disable-quic \
    --no-first-run --disable-background-networking --disable-component-update \
    --disable-sync --disable-dev-shm-usage --hide-scrollbars \
    --user-data-dir="$profile" --screenshot="$abs_png" --window-size="$w,$h" \
    "${extra[@]}" "$url" >"$log" 2>&1; then
  echo "error: chromium failed; its output:" >&2
  cat "$log" >&2
  exit 1
fi
end=$(date +%s.%N)
if [ ! -s "$abs_png" ]; then
  echo "error: chromium wrote no screenshot; its output:" >&2
  cat "$log" >&2
  exit 1
fi
awk -v s="$start" -v e="$end" -v p="$png" -v w="$w" -v h="$h" \
  'BEGIN { printf "%s: %dx%d, rendered by chromium in %.1fs\n", p, w, h, e - s }'
