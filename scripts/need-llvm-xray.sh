#!/usr/bin/env bash
# Prints the llvm-xray binary to use ($LLVM_XRAY or llvm-xray), or stops with
# the command that installs it.
set -euo pipefail
bin=${LLVM_XRAY:-llvm-xray}
if ! command -v "$bin" >/dev/null 2>&1; then
  case "$bin" in
    *-19) pkg=llvm-19 ;;
    *) pkg=llvm ;;
  esac
  echo "error: $bin not found. Install it with:" >&2
  echo "  apt-get update && apt-get install -y $pkg" >&2
  exit 1
fi
command -v "$bin"
