#!/usr/bin/env bash
# Build the compiled core for coverage-guided fuzzing: clang with libFuzzer's edge coverage
# (-fsanitize=fuzzer-no-link) plus AddressSanitizer and UndefinedBehaviorSanitizer, into a
# SEPARATE directory (default build/fuzz), never over the normal in-place build.
#
#   tools/fuzz_build.sh [DIR]          then run a target against it with tools/fuzz_run.sh
#
# The directory holds a copy of the package (consistent_hash/ with the sanitized _ring*.so);
# the fuzz targets put it first on sys.path when CONSISTENT_HASH_FUZZ_BUILD=DIR is set.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="$(realpath -m "${1:-$here/build/fuzz}")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git -C "$here" ls-files -z -- setup.py pyproject.toml README.md MANIFEST.in src consistent_hash \
  | (cd "$here" && xargs -0 cp --parents -t "$work")
cd "$work"
CC=clang CXX=clang++ LDSHARED="clang -shared" \
  CONSISTENT_HASH_SANITIZE=fuzzer-no-link,address,undefined \
  python setup.py -q build_ext --inplace 2>&1 | grep -v -E "^(warning|Compiling|\[)" || true
ls consistent_hash/_ring*.so >/dev/null
rm -rf "$out.new"
mkdir -p "$out.new"
cp -r consistent_hash "$out.new/"
rm -rf "$out"
mv "$out.new" "$out"
echo "sanitized fuzz build: $(ls "$out"/consistent_hash/_ring*.so)"
