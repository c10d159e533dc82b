#!/usr/bin/env bash
# build.sh — the flashable questbox image for the Raspberry Pi 3, 4 and
# Zero 2 W (arm64): dist/questbox-arm64.img.xz and its .sha256.
#
#   image/build.sh        (make image: builds dist/questbox-linux-arm64,
#                          dist/questbox-confine-linux-arm64 and
#                          dist/questbox.toml first)
#
# Layout (MBR, partitions by label; README "The SD card image"):
#   1  QBBOOT  FAT32  256 MiB  /boot/firmware: Pi firmware, kernel, initrd,
#                              config.txt, cmdline.txt and the box's settings
#                              files (questbox-README.txt)
#   2  QBROOT  ext4     2 GiB  /: Debian bookworm, questbox, its units
#   3  QBDATA  ext4   128 MiB  /var/lib/questbox: the store; grown to the end
#                              of the card at first boot; a reflash of
#                              partitions 1-2 only keeps it
#
# The root file system comes from image/rootfs.sh (cached: built once, ~15
# minutes); this script lays questbox and image/rootfs/ over it and makes
# the partitions from directories with mke2fs -d and mtools: no loop
# devices, no mounts. As a user other than root it runs itself under
# `unshare --map-root-user --map-auto`, so that the files keep their owners.
#
# Environment: BIN (dist/questbox-linux-arm64), LAUNCHER
# (dist/questbox-confine-linux-arm64, installed beside it as
# /usr/bin/questbox-confine), CONF (dist/questbox.toml),
# RELEASE_PUB (dist/release.pub, installed as /etc/questbox/release.pub),
# OUT (dist/questbox-arm64.img), KEEP_RAW=1 keeps the uncompressed .img,
# XZ_LEVEL (-3: a minute or two; -9 is a few MiB smaller and much slower),
# QUESTBOX_IMAGE_CACHE and REFRESH (see rootfs.sh).
set -euo pipefail

cd "$(dirname "$0")/.."
log() { printf 'image: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

BIN=${BIN:-dist/questbox-linux-arm64}
LAUNCHER=${LAUNCHER:-dist/questbox-confine-linux-arm64}
CONF=${CONF:-dist/questbox.toml}
RELEASE_PUB=${RELEASE_PUB:-dist/release.pub}
OUT=${OUT:-dist/questbox-arm64.img}
BOOT_MIB=256
# Fixed, so that the data partition starts at the same place in every
# build: writing only the first FIRST+BOOT+ROOT MiB of a new image keeps
# the data (README, "Updating"). Unused blocks cost nothing in the .xz.
ROOT_MIB=2048
DATA_MIB=128
FIRST_MIB=4 # the first partition starts here (SD erase-block aligned)

[[ -x $BIN ]] || die "$BIN missing: make dist/questbox-linux-arm64"
[[ -x $LAUNCHER ]] || die "$LAUNCHER missing: make dist/questbox-confine-linux-arm64"
[[ -f $CONF ]] || die "$CONF missing: make dist/questbox.toml"

image/deps.sh

if ((EUID != 0)) && [[ -z ${QUESTBOX_IMAGE_USERNS:-} ]]; then
	# The root file system is laid out in a user namespace where this
	# user is root and its subordinate ids are the others.
	tarball=$(image/rootfs.sh)
	export QUESTBOX_IMAGE_USERNS=1 QUESTBOX_IMAGE_TARBALL=$tarball
	exec unshare --map-root-user --map-auto -- "$0" "$@"
fi

start=$(date +%s)
tarball=${QUESTBOX_IMAGE_TARBALL:-$(image/rootfs.sh)}
work=$(mktemp -d "${TMPDIR:-/tmp}/questbox-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"
tar --numeric-owner -xpf "$tarball" -C "$root"

# --- questbox and the image's own files ---------------------------------
cp -a image/rootfs/. "$root/"
install -m 0644 image/base/etc/fstab "$root/etc/fstab" # also in the cached tree (its initramfs checks /)
chown -R 0:0 "$root/etc/systemd" "$root/usr/lib/questbox" "$root/etc/avahi/services" "$root/etc/ssh/sshd_config.d"
install -m 0755 "$BIN" "$root/usr/bin/questbox"
install -m 0755 "$LAUNCHER" "$root/usr/bin/questbox-confine"
install -m 0644 systemd/questbox.service "$root/usr/lib/systemd/system/questbox.service"
install -m 0644 systemd/60-questbox.rules "$root/usr/lib/udev/rules.d/60-questbox.rules"
install -d -m 0755 "$root/usr/share/doc/questbox"
install -m 0644 README.md "$root/usr/share/doc/questbox/README.md"
# The pages the README links to, so that its links resolve on the box.
cp -R docs "$root/usr/share/doc/questbox/docs"
find "$root/usr/share/doc/questbox/docs" -type d -exec chmod 0755 {} + -o -type f -exec chmod 0644 {} +
# The man page, for `man questbox` (man-db is in packages.txt). The cached
# root file system leaves out every package's man pages (rootfs.sh,
# path-exclude), so questbox's is the one page the box has; `questbox -h`
# and `questbox VERB -h` say the same.
install -d -m 0755 "$root/usr/share/man/man1"
gzip -9n <docs/reference/questbox.1 >"$root/usr/share/man/man1/questbox.1.gz"
chmod 0644 "$root/usr/share/man/man1/questbox.1.gz"
uid=$(awk -F: '$1 == "questbox" {print $3}' "$root/etc/passwd")
gid=$(awk -F: '$1 == "questbox" {print $3}' "$root/etc/group")
[[ -n $uid && -n $gid ]] || die "the cached root file system has no questbox user: REFRESH=1 make image"
# The box serves its dashboard to the network (it has no other screen);
# the socket lives in the service's RuntimeDirectory (CONF sets it).
install -d -m 0755 "$root/etc/questbox"
sed 's|^listen = "127.0.0.1:8080"$|listen = ":8080"|' "$CONF" >"$root/etc/questbox/questbox.toml"
grep -q '^listen = ":8080"$' "$root/etc/questbox/questbox.toml" || die "$CONF has no listen line to open"
chown "0:$gid" "$root/etc/questbox/questbox.toml"
chmod 0640 "$root/etc/questbox/questbox.toml"
# The release key `questbox update` checks releases against (README,
# "Releases"); an image without one refuses every update.
if [[ -f $RELEASE_PUB ]]; then
	install -m 0644 "$RELEASE_PUB" "$root/etc/questbox/release.pub"
else
	log "warning: $RELEASE_PUB missing: the image has no release key, questbox update will refuse every release"
fi
install -d -m 0750 -o "$uid" -g "$gid" "$root/var/lib/questbox"
install -d -m 2755 -g "$(awk -F: '$1 == "systemd-journal" {print $3}' "$root/etc/group")" "$root/var/log/journal"
systemctl --root="$root" --quiet enable questbox.service questbox-setup.service questbox-data.service \
	systemd-networkd.service systemd-resolved.service systemd-timesyncd.service avahi-daemon.service
systemctl --root="$root" --quiet disable ssh.service 2>/dev/null || true # questbox-setup enables it with a key
# No prompts on the first boot's console, and no two-minute wait for a
# network the box may not have.
systemctl --root="$root" --quiet mask systemd-firstboot.service systemd-networkd-wait-online.service

# --- partition 1: the boot partition -------------------------------------
fw=$root/boot/firmware
ls "$fw"/vmlinuz-* "$fw"/initrd.img-* "$fw"/config.txt "$fw"/cmdline.txt "$fw"/start4.elf >/dev/null ||
	die "the cached root file system has no Pi boot files in /boot/firmware: REFRESH=1 make image"
cp image/boot/* "$fw/"
# The root file system is mounted read-only first (ro comes after the
# hook's rw, and the last one wins), so that systemd-fsck-root checks it
# before systemd remounts it read-write; /etc/default/raspi-extra-cmdline
# (image/rootfs/) keeps it so when a kernel update writes cmdline.txt again.
sed -i 's/ quiet$/ ro quiet/' "$fw/cmdline.txt"
grep -q ' rw .* ro quiet$' "$fw/cmdline.txt" || die "cmdline.txt is not what raspi-firmware writes: $(cat "$fw/cmdline.txt")"
cp "$root/etc/questbox/questbox.toml" "$fw/questbox.toml.example"
boot=$work/boot.img
mkfs.vfat -F 32 -n QBBOOT -C "$boot" $((BOOT_MIB * 1024)) >/dev/null
mcopy -s -p -m -i "$boot" "$fw"/* ::/
# The mount point stays empty on the root partition.
find "$fw" -mindepth 1 -delete

# --- partitions 2 and 3 --------------------------------------------------
used=$(du -sm "$root" | cut -f1)
((used * 10 < ROOT_MIB * 7)) || die "the root file system ($used MiB) leaves less than 30% of its $ROOT_MIB MiB partition free"
rootimg=$work/root.img
mke2fs -q -t ext4 -L QBROOT -d "$root" -E root_owner=0:0 "$rootimg" "${ROOT_MIB}M"
dataimg=$work/data.img
mke2fs -q -t ext4 -L QBDATA -m 1 -E root_owner="$uid:$gid" "$dataimg" "${DATA_MIB}M"

# --- the disk ------------------------------------------------------------
mkdir -p "$(dirname "$OUT")"
rm -f "$OUT" "$OUT.xz" "$OUT.xz.sha256"
total=$((FIRST_MIB + BOOT_MIB + ROOT_MIB + DATA_MIB))
truncate -s "${total}M" "$OUT"
mib=2048 # sectors
sfdisk --quiet "$OUT" <<EOF
label: dos
unit: sectors
start=$((FIRST_MIB * mib)), size=$((BOOT_MIB * mib)), type=c, bootable
start=$(((FIRST_MIB + BOOT_MIB) * mib)), size=$((ROOT_MIB * mib)), type=83
start=$(((FIRST_MIB + BOOT_MIB + ROOT_MIB) * mib)), size=$((DATA_MIB * mib)), type=83
EOF
dd if="$boot" of="$OUT" bs=1M seek=$FIRST_MIB conv=notrunc,sparse status=none
dd if="$rootimg" of="$OUT" bs=1M seek=$((FIRST_MIB + BOOT_MIB)) conv=notrunc,sparse status=none
dd if="$dataimg" of="$OUT" bs=1M seek=$((FIRST_MIB + BOOT_MIB + ROOT_MIB)) conv=notrunc,sparse status=none
log "$OUT: ${total} MiB (boot $BOOT_MIB, root $ROOT_MIB with $used used, data $DATA_MIB), system partitions end at $((FIRST_MIB + BOOT_MIB + ROOT_MIB)) MiB"

xz -T2 "${XZ_LEVEL:--3}" --keep --force "$OUT"
(cd "$(dirname "$OUT")" && sha256sum "$(basename "$OUT").xz" >"$(basename "$OUT").xz.sha256")
[[ -n ${KEEP_RAW:-} ]] || rm -f "$OUT"
log "$OUT.xz: $(du -h "$OUT.xz" | cut -f1) in $(($(date +%s) - start))s (rootfs from the cache)"
