#!/usr/bin/env bash
# Installs everything scx_soryu needs to build, to run in a VM and to be
# tested, on Debian 12. Idempotent: a second run only checks.
#
#   build:  clang-19 + llvm-19 (BPF), libelf, zlib, zstd, pkg-config
#   VM:     qemu (software emulation), kmod, busybox-static, cpio,
#           virtme-ng (PyPI), a trixie-backports kernel (see vm/kernel.sh)
#   load:   stress-ng, rt-tests (cyclictest, hackbench)
#   tests:  systemd (systemd-analyze), make (install), python3 (harness), jq
set -euo pipefail

[ "$(id -u)" = 0 ] || { echo "install-deps: run as root (apt-get needs it)" >&2; exit 1; }

VNG_VERSION=1.42
export DEBIAN_FRONTEND=noninteractive

# trixie and trixie-backports are added pinned low, only so that vm/kernel.sh
# can `apt-get download` the guest kernel: nothing is ever installed from
# them. (Never `apt-get install -t trixie ...` here: -t raises all of trixie
# above bookworm and turns the install into a partial upgrade of libc6,
# systemd, dpkg, qemu... to Debian 13. That is what installing trixie's
# virtiofsd did, as it needs libc6 >= 2.39; the VM shares the host root over
# 9p instead, which needs no daemon.)
sources=/etc/apt/sources.list.d/soryu-trixie.sources
if [ ! -f "$sources" ]; then
  cat >"$sources" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie trixie-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  cat >/etc/apt/preferences.d/soryu-trixie <<'PIN'
Package: *
Pin: release n=trixie
Pin-Priority: 100

Package: *
Pin: release n=trixie-backports
Pin-Priority: 100
PIN
  apt-get update -q
elif [[ "$(apt-cache policy linux-image-amd64 2>/dev/null)" != *trixie-backports* ]]; then
  # Sources present but lists never fetched (fresh machine, or lists wiped).
  apt-get update -q
fi

need=()
# busybox-static: virtme-ng builds an initramfs (to load the guest kernel's
# overlay/9p/virtio modules before mounting the root) and refuses to without
# a busybox. file: virtme-ng reads the kernel version off the image with it.
for p in clang-19 llvm-19 libelf-dev zlib1g-dev libzstd-dev pkg-config \
         qemu-system-x86 kmod cpio busybox-static file stress-ng rt-tests make \
         systemd jq python3-pip; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get install -y -q --no-install-recommends "${need[@]}"
fi

# virtme-ng from PyPI (Debian 12 has none). Debian's own python3 refuses pip
# installs (PEP 668, "externally-managed-environment"); a pyenv or venv
# python does not. Try plain first, then with --break-system-packages, which
# only adds a package under /usr/local and touches no Debian package.
if ! command -v vng >/dev/null 2>&1 || [ "$(vng --version 2>/dev/null | awk '{print $NF}')" != "$VNG_VERSION" ]; then
  python3 -m pip install -q "virtme-ng==$VNG_VERSION" ||
    python3 -m pip install -q --break-system-packages "virtme-ng==$VNG_VERSION"
  # pyenv only sees a new command after a rehash of its shims.
  if command -v pyenv >/dev/null 2>&1; then pyenv rehash || true; fi
  hash -r
  command -v vng >/dev/null 2>&1 || { echo "install-deps: virtme-ng installed but vng is not in PATH" >&2; exit 1; }
fi
# The guest kernel for the VM tests (downloaded once into its cache).
"$(dirname "${BASH_SOURCE[0]}")/../vm/kernel.sh" >/dev/null

echo "install-deps: all present"
