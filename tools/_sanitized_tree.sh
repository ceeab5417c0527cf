# Sourced by tools/asan.sh and tools/tsan.sh: sanitized_tree SANITIZERS copies the tracked tree
# (and tests/) into a scratch directory that is removed on exit, builds the compiled core
# there with CONSISTENT_HASH_SANITIZE=SANITIZERS (gcc unless CC says otherwise), and leaves
# the shell in it, so the working tree and its normal build are untouched.
sanitized_tree() {
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  git -C "$here" ls-files -z | (cd "$here" && xargs -0 cp --parents -t "$work")
  cp -r "$here/tests" "$work/" 2>/dev/null || true
  cd "$work"
  CC=${CC:-gcc} CONSISTENT_HASH_SANITIZE="$1" \
    python setup.py -q build_ext --inplace 2>&1 | grep -v -E "^(warning|Compiling|\[)" || true
}
