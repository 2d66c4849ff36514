#!/usr/bin/env bash
# bench-otel: what xrayotel's processor costs a service with slow requests.
# xrayotel/internal/slowsvc (a net/http service on loopback, a hand-made
# span per request through the OpenTelemetry SDK with a batcher, three
# functions under Enter/Exit, one request in 500 sleeping 35 ms, 4
# keep-alive connections) runs with OpenTelemetry alone and with goxray
# and the processor, in interleaved rounds (ROUNDS, default 8, of D,
# default 5s, each), so that a noisy spell on a shared machine lands in
# both. It prints every round and the ratios of the medians: of the
# request rates, and of the CPU time per request (what the rate would be
# on a machine of its own; on a shared one the rate swings with the
# neighbours' load, the CPU per request much less).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-8}
d=${D:-5s}
mkdir -p bin
go build -C xrayotel -o ../bin/slowsvc ./internal/slowsvc
out=bin/bench-otel.txt
: > "$out"
for r in $(seq "$rounds"); do
  for mode in otel xray; do
    bin/slowsvc -mode "$mode" -d "$d" "$@" | tee -a "$out"
  done
done
awk '$1 == "MODE" { rps[$2] = rps[$2] " " $4; cpu[$2] = cpu[$2] " " $10 }
function median(s,   a, n, i, j, t) {
  n = split(s, a, " ")
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
  o = median(rps["otel"]); x = median(rps["xray"])
  printf "median req/s: OpenTelemetry alone %.0f, with goxray and xrayotel %.0f: %.3f ×\n", o, x, x / o
  o = median(cpu["otel"]); x = median(cpu["xray"])
  printf "median CPU per request (server and load generator): OpenTelemetry alone %.2f µs, with goxray and xrayotel %.2f µs: throughput at equal CPU %.3f ×\n", o, x, o / x
}' "$out"
