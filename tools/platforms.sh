#!/usr/bin/env bash
# .ci/run's platforms stage: the Debian trees (built from Debian's packages, or reused from
# /var/cache/consistent-hash-platforms while their package versions are unchanged), the sdist
# and manylinux2014 wheels (tools/wheels.sh), each installed and tested in a fresh venv of
# bookworm amd64 3.11, trixie 3.13, sid 3.14, bookworm arm64 3.11 and sid s390x 3.14 (the last
# two under qemu-user), and routers' bytes written on each checked on the others.
# Usage: bash tools/platforms.sh [OUT]   (OUT defaults to a temporary directory, removed after)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/platforms/host.sh"
if [ $# -ge 1 ]; then
  exec python3 "$here/platforms/run.py" "$1"
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
python3 "$here/platforms/run.py" "$out"
