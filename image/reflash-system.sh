#!/usr/bin/env bash
# reflash-system.sh — write a new questbox image to a card that already
# runs questbox, keeping its data partition (the store, the dashboard
# password): only the partition table, the boot and the root partitions
# are written.
#
#   sudo image/reflash-system.sh dist/questbox-arm64.img.xz /dev/sdX
#
# It refuses unless the card's third partition is labelled QBDATA and
# starts where the image's does (every image has the same layout; see
# image/build.sh). The boot partition is rewritten: put your settings files
# (questbox-wifi.txt, questbox-ssh.pub, ...) back on it before booting. At
# the next boot the data partition is grown back to the end of the card.
set -euo pipefail
log() { printf 'reflash-system: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

(($# == 2)) || die "usage: reflash-system.sh IMAGE.img.xz DEVICE"
img=$1 dev=$2
[[ -f $img ]] || die "$img: no such image"
[[ -b $dev || -f $dev ]] || die "$dev is not a block device"

# Where partition 3 starts, in sectors, in a partition table dump.
p3start() { sfdisk -d "$1" 2>/dev/null | awk -F'[=,]' '/3 :/ {gsub(/ /, "", $2); print $2}'; }
mbr=$(mktemp)
trap 'rm -f "$mbr"' EXIT
xz -dc "$img" 2>/dev/null | head -c 1048576 >"$mbr" || true # head closes the pipe early
want=$(p3start "$mbr")
[[ -n $want ]] || die "$img has no third partition"
have=$(p3start "$dev")
[[ $have == "$want" ]] || die "$dev's third partition starts at sector ${have:-none}, the image's at $want: not a questbox card of this layout; flash the whole image instead"
if [[ -b $dev ]]; then
	part=$(lsblk -lnpo NAME "$dev" | sed -n 4p)
	[[ $(blkid -s LABEL -o value "$part" 2>/dev/null) == QBDATA ]] || die "$part is not labelled QBDATA"
	grep -q "^$dev" /proc/mounts && die "$dev has mounted partitions: unmount them first"
fi
mib=$((want / 2048))
log "writing the first $mib MiB of $img to $dev (partition table, boot, root); the data partition is kept"
xz -dc "$img" | dd of="$dev" bs=1M count="$mib" iflag=fullblock conv=fsync,notrunc status=progress
log "done: put your settings files back on the boot partition, then boot the card"
