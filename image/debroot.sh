# debroot.sh — the scratch Debian root of the .deb tests, sourced by
# image/deb-test.sh and image/deb-upgrade-test.sh once they have defined
# log and set arch. The root is a minimal Debian bookworm for arch
# (mmdebstrap, with adduser and systemd for the maintainer scripts), cached
# as a tarball beside the image's rootfs ($QUESTBOX_IMAGE_CACHE).

# debroot_userns runs the calling script again, with the arguments given,
# under `unshare --map-root-user --map-auto` when it runs as a user other
# than root (and not already so).
debroot_userns() {
	if ((EUID != 0)) && [[ -z ${QUESTBOX_DEB_USERNS:-} ]]; then
		export QUESTBOX_DEB_USERNS=1
		exec unshare --map-root-user --map-auto -- "$0" "$@"
	fi
}

# debroot_unpack builds the cached root once, unpacks it into a new
# temporary directory, sets root to that directory and removes it on exit.
debroot_unpack() {
	local cache=${QUESTBOX_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/questbox-image}
	mkdir -p "$cache"
	local base=$cache/debroot-bookworm-$arch.tar
	if [[ ! -s $base ]]; then
		log "building the scratch root $base (once)"
		mmdebstrap --variant=minbase --include=adduser,systemd,procps bookworm "$cache/.building-debroot.tar"
		mv "$cache/.building-debroot.tar" "$base"
	fi
	root=$(mktemp -d)
	trap 'rm -rf "$root"' EXIT
	tar --numeric-owner -xpf "$base" -C "$root"
}
