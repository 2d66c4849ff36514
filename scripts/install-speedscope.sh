#!/bin/sh
# install-speedscope.sh: install speedscope (1.25.0, MIT) from the npm
# registry into a cache directory outside the clone, and print the
# directory whose node_modules/speedscope holds it. A second run reuses it.
# cmd/goxray's TestStackFoldedInSpeedscope reads goxray stack's output with
# speedscope's own importer (cmd/goxray/testdata/speedscope_tree.js).
#
# SPEEDSCOPE_CACHE (default: $(go env GOCACHE)/../goxray-npm) holds it. GO
# selects the go command. Exits non-zero, saying why, when npm is missing
# or the registry does not answer.
set -eu
GO=${GO:-go}
VERSION=1.25.0
cache=${SPEEDSCOPE_CACHE:-$("$GO" env GOCACHE)/../goxray-npm}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
dir=$cache/speedscope-$VERSION
if [ -f "$dir/node_modules/speedscope/package.json" ]; then
	echo "$dir"
	exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
	echo "install-speedscope.sh: npm is missing; install it with: apt-get install -y npm" >&2
	exit 1
fi
tmp=$(mktemp -d "$cache/.speedscope-$VERSION.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# --prefix: npm would otherwise install beside the nearest package.json
# above the working directory.
if ! npm install --prefix "$tmp" --no-audit --no-fund --ignore-scripts --no-save --no-package-lock \
	--loglevel=error --fetch-retries=1 "speedscope@$VERSION" >&2; then
	echo "install-speedscope.sh: npm could not install speedscope@$VERSION" >&2
	exit 1
fi
# Another run may have finished first: its copy will do.
[ -e "$dir" ] || mv "$tmp" "$dir"
if [ ! -f "$dir/node_modules/speedscope/package.json" ]; then
	echo "install-speedscope.sh: no speedscope in $dir" >&2
	exit 1
fi
echo "$dir"
