#!/bin/sh
# build-jaeger.sh: build the Jaeger all-in-one binary (v1.76.0, Apache-2.0)
# that xrayotel's integration test exports to, into a cache directory
# outside the clone, and print its path. A second run reuses the binary.
#
# Jaeger's go.mod carries a replace directive, so `go install pkg@version`
# refuses it: the module is downloaded through the module proxy, copied out
# of the read-only module cache, and built with -mod=mod.
#
# JAEGER_CACHE (default: $(go env GOCACHE)/../goxray-jaeger) holds the
# source copy and the binary. GO selects the go command.
set -eu
GO=${GO:-go}
VERSION=v1.76.0
cache=${JAEGER_CACHE:-$("$GO" env GOCACHE)/../goxray-jaeger}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
bin=$cache/jaeger-$VERSION
if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi
dir=$("$GO" mod download -json "github.com/jaegertracing/jaeger@$VERSION" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
	echo "build-jaeger.sh: go mod download gave no directory for jaeger@$VERSION" >&2
	exit 1
fi
src=$cache/src-$VERSION
rm -rf "$src" "$src.tmp"
cp -R "$dir" "$src.tmp"
chmod -R u+w "$src.tmp"
mv "$src.tmp" "$src"
echo "build-jaeger.sh: building jaeger $VERSION in $src (about 150 s cold)" >&2
(cd "$src" && GOFLAGS=-mod=mod "$GO" build -o "$bin.tmp" ./cmd/jaeger)
mv "$bin.tmp" "$bin"
echo "$bin"
