#!/usr/bin/env bash
# rootfs.sh — the cached base of the questbox image: a minimal Debian
# bookworm arm64 root file system (image/packages.txt) with its kernel,
# initramfs and Raspberry Pi boot files, as a tarball.
#
#   image/rootfs.sh            prints the tarball's path, building it when the
#                              cache has none for these inputs
#
# The tarball is kept in $QUESTBOX_IMAGE_CACHE (default
# ~/.cache/questbox-image), named after a hash of everything that goes
# into it: this script, image/packages.txt and image/base/. Nothing else
# (the questbox binary, its units, the first-boot scripts) is in it, so a
# code change reuses it and `make image` takes minutes. REFRESH=1 builds
# it again anyway (for security updates).
#
# mmdebstrap runs the arm64 maintainer scripts under qemu-user-static
# (binfmt_misc). As root it uses its root mode; as another user, its
# unshare mode (needs user namespaces and a subuid range): no step needs
# real root. The package archive is the one this machine's apt uses.
#
# Environment: QUESTBOX_IMAGE_CACHE, REFRESH, SUITE (bookworm).
set -euo pipefail

cd "$(dirname "$0")/.."
log() { printf 'rootfs: %s\n' "$*" >&2; }

SUITE=${SUITE:-bookworm}
CACHE=${QUESTBOX_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/questbox-image}
mkdir -p "$CACHE"

# Comments do not count: rewording one does not rebuild the tree.
key=$( (echo "$SUITE"; grep -hv '^[[:space:]]*#' image/rootfs.sh image/packages.txt; cd image/base && find . -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -c1-16)
tarball=$CACHE/rootfs-$SUITE-arm64-$key.tar
if [[ -s $tarball && -z ${REFRESH:-} ]]; then
	log "cached: $tarball"
	echo "$tarball"
	exit 0
fi

# The archive this machine's apt uses (deb822 or one-line sources), so a
# local mirror is used when there is one; mmdebstrap's default otherwise.
archive() { # $1: suite to look for (bookworm or bookworm-security)
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -e $f ]] || continue
		awk -v want="$1" '
			/^URIs:/ { uri = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == want) hit = 1 }
			/^$/ { if (hit && uri) { print uri; exit } hit = 0; uri = "" }
			END { if (hit && uri) print uri }' "$f"
	done | head -1
	grep -hs "^deb .* $1 " /etc/apt/sources.list /etc/apt/sources.list.d/*.list | awk '{print $2}' | head -1
	return 0
}
main=$(archive "$SUITE" | head -1) || true
security=$(archive "$SUITE-security" | head -1) || true
components="main non-free-firmware"
mirrors=()
if [[ -n $main ]]; then
	mirrors+=("deb $main $SUITE $components" "deb $main $SUITE-updates $components")
	[[ -n $security ]] && mirrors+=("deb $security $SUITE-security $components")
fi

packages=$(grep -v '^#' image/packages.txt | grep -v '^$' | paste -sd, -)
log "building $tarball (about 15 minutes under emulation)"
start=$(date +%s)
tmp=$CACHE/.building-$key.tar # mmdebstrap picks the format by the extension
# essential-hook: the initramfs settings must be there before the kernel
# package runs update-initramfs (MODULES=list: a minute instead of fifteen);
# fstab too, for the tools that read it. (The initramfs does not check the
# root file system: its fsck hook probes the real device, absent here. The
# kernel command line says ro instead, and systemd-fsck-root checks it
# before systemd remounts it read-write; see image/build.sh.)
# customize-hook: the questbox user and group, the Pi's boot files written
# again with the image's settings, no ssh host keys (each box makes its
# own), first-boot machine id, and no apt lists.
mmdebstrap --mode=auto --arch=arm64 --variant=minbase \
	--components="${components// /,}" --include="$packages" \
	--aptopt='APT::Install-Recommends "false"' \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
	--essential-hook='mkdir -p "$1/etc/initramfs-tools"' \
	--essential-hook='sync-in image/base/etc/initramfs-tools /etc/initramfs-tools' \
	--essential-hook='upload image/base/etc/fstab /etc/fstab' \
	--customize-hook='sync-in image/base/etc/default /etc/default' \
	--customize-hook='chroot "$1" sh -ec "
		addgroup --system gpio
		adduser --system --group --home /var/lib/questbox --no-create-home --shell /usr/sbin/nologin --gecos questbox questbox
		adduser questbox gpio
		DEB_MAINT_PARAMS=configure /etc/kernel/postinst.d/z50-raspi-firmware
		systemctl disable ssh.service || true
		rm -f /etc/ssh/ssh_host_*
		printf \"uninitialized\n\" > /etc/machine-id
		rm -f /var/lib/dbus/machine-id
	"' \
	--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
	"$SUITE" "$tmp" "${mirrors[@]}"
mv "$tmp" "$tarball"
# Older tarballs of other inputs are dead weight.
find "$CACHE" -maxdepth 1 -name "rootfs-$SUITE-arm64-*.tar" ! -name "$(basename "$tarball")" -delete
log "built in $(($(date +%s) - start))s: $(du -h "$tarball" | cut -f1)"
echo "$tarball"
