#!/usr/bin/env bash
# deps.sh — what building and booting the image needs on this machine:
# Debian packages (through scripts/deps.sh, only when missing) and
# qemu-aarch64 registered with binfmt_misc (so that mmdebstrap can run the
# arm64 maintainer scripts).
#
#   image/deps.sh [EXTRA_DEBIAN_PACKAGE...]
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf 'image-deps: %s\n' "$*" >&2; }

CI=${CI:-} scripts/deps.sh mmdebstrap qemu-user-static binfmt-support arch-test debian-archive-keyring \
	dosfstools mtools e2fsprogs fdisk xz-utils systemd "$@"

if [[ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]]; then
	if ((EUID == 0)); then
		[[ -e /proc/sys/fs/binfmt_misc/register ]] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
		update-binfmts --enable qemu-aarch64 || true
	fi
	[[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]] || {
		log "qemu-aarch64 is not registered with binfmt_misc; as root: update-binfmts --enable qemu-aarch64"
		exit 1
	}
fi
