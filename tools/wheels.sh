#!/usr/bin/env bash
# Release files into OUT: the sdist and manylinux2014 / manylinux_2_17 wheels for CPython 3.11,
# 3.13 and 3.14 on x86-64 and aarch64 (zig cross-compiles; each interpreter's headers come from
# the Debian tree of that version and architecture), repaired and checked by auditwheel, their
# contents checked, `twine check --strict` on all. Needs root (debootstrap, chroot, mount) and
# debootstrap, qemu-user-static and binfmt-support; the trees are kept in
# /var/cache/consistent-hash-platforms (CONSISTENT_HASH_PLATFORMS_CACHE) and reused.
# See tools/platforms/wheels.py.
set -euo pipefail
if [ $# -ne 1 ]; then echo "usage: bash tools/wheels.sh OUT" >&2; exit 2; fi
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/platforms/host.sh"
exec python3 "$here/platforms/wheels.py" "$1"
