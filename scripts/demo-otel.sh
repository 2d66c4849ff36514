#!/usr/bin/env bash
# make demo-otel: a slow request as Jaeger stores it, then the same request
# in goxray's own views. Builds Jaeger once (scripts/build-jaeger.sh), runs
# it on loopback, runs xrayotel/internal/otdemo (ten requests, one slow,
# exported by xrayotel's span processor over OTLP/HTTP), prints the slow
# trace read back from Jaeger's API, then `goxray top -lineage -trace` on
# the trace file the service wrote. Output goes to $DEMO_OUT/otel (default
# out/demo/otel, ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
OUT=${DEMO_OUT:-out/demo}/otel
rm -rf "$OUT"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

jaeger=$(GO=$GO scripts/build-jaeger.sh)
for port in 4318 16686; do
	if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then
		echo "demo-otel: 127.0.0.1:$port is taken; stop the process on it (another Jaeger?)" >&2
		exit 1
	fi
done
JAEGER_LISTEN_HOST=127.0.0.1 "$jaeger" \
	--set=extensions.jaeger_query.http.endpoint=127.0.0.1:16686 \
	--set=extensions.jaeger_query.grpc.endpoint=127.0.0.1:16685 >"$OUT/jaeger.log" 2>&1 &
jpid=$!
trap 'kill $jpid 2>/dev/null; wait $jpid 2>/dev/null || true' EXIT
for _ in $(seq 300); do
	(exec 3<>/dev/tcp/127.0.0.1/16686) 2>/dev/null && break
	sleep 0.2
done

$GO build -o "$OUT/goxray" ./cmd/goxray
(cd xrayotel && $GO run ./internal/otdemo -dir "$OUT") | tee "$OUT/demo.txt"
id=$(sed -n 's/.*one slow: trace \([0-9a-f]*\)$/\1/p' "$OUT/demo.txt")
file=$(sed -n 's/^goxray trace file: //p' "$OUT/demo.txt")
echo
echo "\$ go tool goxray top -lineage -trace $id $(basename "$file")" | tee -a "$OUT/demo.txt"
"$OUT/goxray" top -lineage -trace "$id" "$file" | tee -a "$OUT/demo.txt"
