#!/usr/bin/env bash
# make demo-otel: one request, one tree, across three services. Builds
# Jaeger once (scripts/build-jaeger.sh) and goxray, then runs
# xrayotel/internal/otdemo: the services gateway → api (HTTP) → store
# (gRPC, fsync), each built with `go tool goxray build` and running
# xrayotel with the Go trace, export OTLP to Jaeger v2 with the
# Collector's tail_sampling processor
# (xrayotel/internal/otdemo/jaeger-tail-sampling.yaml); a few fast
# requests and a slow one later it prints the slow request's tree as
# Jaeger's API returns it. Everything listens on loopback, on free ports.
# Output goes to $DEMO_OUT/otel (default out/demo/otel, ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
OUT=${DEMO_OUT:-out/demo}/otel
rm -rf "$OUT"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

jaeger=$(GO=$GO scripts/build-jaeger.sh)
$GO build -o "$OUT/goxray" ./cmd/goxray
(cd xrayotel && $GO run ./internal/otdemo -jaeger "$jaeger" -goxray "$OUT/goxray" -out "$OUT/run") | tee "$OUT/demo.txt"
