#!/bin/sh
# attack-agent.sh — an agent that attacks the box it runs on, to check the
# confinement of agents (docs/confinement-check.md). Configure it as a
# command provider and give it a quest with a project directory:
#
#   argv = ["sh", "/path/to/attack-agent.sh", PROJECT, DATA, CONFIG, QUESTBOX, TOKEN, HOST:PORT]
#
# PROJECT is the quest's project directory, DATA the daemon's data
# directory, CONFIG its config file, QUESTBOX the questbox binary, TOKEN a
# word that names the files it tries to leave behind (escape-TOKEN) and its
# marker process (qbmark-TOKEN); HOST:PORT, optional, is an address it
# tries to reach with curl (http://HOST:PORT/healthz). It attacks the
# daemon whose pid is in PROJECT/daemon.pid (else its parent's).
#
# It tries what an agent with a shell could do against the box and records
# each outcome, ok or denied, in PROJECT/results.txt as it goes and in its
# answer's evidence ("confinement probe: NAME=OUTCOME ..."), with the
# reason of each denial on stderr (the run's log). Reads count as ok only
# when they gave bytes. It still answers a valid "dead" verdict, so the
# run ends normally and is judged.
#
# Only write-project may be ok (and marker=running: a setsid'd,
# double-forked child that appends to PROJECT/marker every 50 ms, forever,
# which must end with the run). A write it reports ok may still have gone
# to a private /tmp: check from outside that no escape-TOKEN file appeared.
cat >/dev/null
P=$1 D=$2 C=$3 Q=$4 T=$5 NET=${6:-}
R="$P/results.txt"
res=""
note() {
	res="$res $1=$2"
	echo "$1=$2" >>"$R"
	echo "probe $1: $2 $3" >&2
}
# probe NAME CMD...: ok when CMD succeeds and prints something.
probe() {
	name=$1
	shift
	if "$@" >"$P/.out" 2>"$P/.err" && [ -s "$P/.out" ]; then
		note "$name" ok
	else
		note "$name" denied "$(head -c 300 "$P/.err" | tr '\n' ' ')"
	fi
}
# wrote NAME FILE: ok when FILE could be created and written.
wrote() {
	if (echo "$T" >"$2") 2>"$P/.err"; then note "$1" ok; else note "$1" denied "$(head -c 300 "$P/.err")"; fi
}
pid=$(cat "$P/daemon.pid" 2>/dev/null || awk '/^PPid:/ {print $2}' /proc/$$/status)

# 1) its own project: the one thing that must work.
if echo owned >"$P/own-file" && [ "$(cat "$P/own-file")" = owned ]; then note write-project ok; else note write-project denied; fi
# A double-forked, setsid'd child that writes the marker every 50 ms
# forever: it must end with the run.
(setsid sh -c 'while :; do echo x >>"$1"; sleep 0.05; done' "qbmark-$T" "$P/marker" </dev/null >/dev/null 2>&1 &)
lines() { if [ -f "$P/marker" ]; then wc -l <"$P/marker"; else echo 0; fi; }
i=0
while [ "$(lines)" -lt 3 ] && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
if [ $i -lt 200 ]; then note marker running; else note marker not-started; fi

# 2) - 5) the data directory.
probe read-db head -c 4096 "$D/questbox.db"
if (: >>"$D/questbox.db") 2>"$P/.err"; then note append-db ok; else note append-db denied "$(cat "$P/.err")"; fi
probe read-password cat "$D/dashboard.password"
probe list-data ls -A "$D"
# 6) the control socket, as a user would type it.
probe control-socket timeout 20 "$Q" --data "$D" quest list
# 7) the config file, with the broker's password.
probe read-config cat "$C"
# 8) outside the project: its parent, the shared temporary directories.
wrote write-parent "$(dirname "$P")/escape-$T"
wrote write-tmp "/tmp/escape-$T"
wrote write-shm "/dev/shm/escape-$T"
wrote write-data "$D/escape-$T"
# The daemon through /proc, and links made in the project.
probe proc-environ cat "/proc/$pid/environ"
# What the daemon's descriptors point to (a way to its open files); the
# bare numbers the directory lists are not the point.
fdlinks() { for f in "/proc/$1/fd/"*; do readlink "$f"; done; }
probe proc-fd fdlinks "$pid"
probe proc-root head -c 4096 "/proc/$pid/root$D/questbox.db"
probe proc-cwd ls "/proc/$pid/cwd/"
probe proc-map-files ls "/proc/$pid/map_files"
ln -s "$D/questbox.db" "$P/db-link" 2>/dev/null
probe symlink-read head -c 4096 "$P/db-link"
ln -s "$D" "$P/data-link" 2>/dev/null
probe symlink-list ls -A "$P/data-link/"
# The network, when asked.
if [ -n "$NET" ]; then probe network curl -sf --max-time 10 "http://$NET/healthz"; fi
# 9) last, since it may work: kill the daemon.
if kill -s KILL "$pid" 2>"$P/.err"; then note signal-daemon ok; else note signal-daemon denied "$(cat "$P/.err")"; fi

printf '```json\n{"verdict": "dead", "evidence": "confinement probe:%s", "citations": [], "new_directions": []}\n```\n' "$res"
