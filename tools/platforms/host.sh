#!/usr/bin/env bash
# What the platform tools need on the host (Debian): debootstrap, qemu-user, binfmt_misc and
# a Python >= 3.11 with venv.
set -euo pipefail
need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
[ -x /usr/bin/qemu-aarch64-static ] && [ -x /usr/bin/qemu-s390x-static ] || need+=(qemu-user-static)
command -v update-binfmts >/dev/null || need+=(binfmt-support)
python3 -c "import ensurepip" 2>/dev/null || need+=(python3-venv)  # the tools' venv
if [ "${#need[@]}" -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
