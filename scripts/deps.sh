#!/usr/bin/env bash
# deps.sh — install what the build and the tests need, only if it is missing.
#
#   scripts/deps.sh [DEBIAN_PACKAGE...]
#
# Always: downloads the Go modules in go.mod (a no-op when they are cached).
# Then, for each Debian package named that is not installed, installs it with
# apt-get (running `apt-get update` once, only if something is missing). It
# prints what it installs and nothing else when all is there, so it is cheap to
# run before every `make test`.
#
# `make test` names chromium (Debian's, for the dashboard's browser tests):
# never a browser build downloaded by a test tool.
#
# Runs as root directly, otherwise through sudo. On a machine without apt-get
# (or without root and sudo) it lists what is missing and fails when CI=true;
# elsewhere it warns and carries on, so tests that need the package can skip.
#
# Environment: GO (default: go), CI.
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}

log() { printf 'deps: %s\n' "$*" >&2; }

"$GO" mod download

missing=()
for pkg in "$@"; do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	if [[ $status != "install ok installed" ]]; then
		missing+=("$pkg")
	fi
done
((${#missing[@]} == 0)) && exit 0

give_up() {
	if [[ ${CI:-} == true ]]; then
		log "missing ${missing[*]}: $1"
		exit 1
	fi
	log "warning: missing ${missing[*]}: $1; tests that need them will skip or fail"
	exit 0
}

command -v apt-get >/dev/null || give_up "no apt-get here; install them with your package manager"

as_root=()
if ((EUID != 0)); then
	command -v sudo >/dev/null || give_up "not root and no sudo"
	as_root=(sudo)
fi

export DEBIAN_FRONTEND=noninteractive
log "installing ${missing[*]}"
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
log "installed ${missing[*]}"
