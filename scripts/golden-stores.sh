#!/bin/sh
# golden-stores.sh COMMIT SCHEMA — make the golden store of a released store
# schema (docs/design.md, "Service, image and updates"): build questbox at
# COMMIT in a temporary git worktree, run a fixed script of CLI verbs with it (a quest, scanned
# hypotheses, answers that pass and lock nodes, a dead end, a FAIL, an
# export), and write into engine/testdata/golden/schemaSCHEMA/:
#
#   questbox.db   the store that version made (compacted, a few tens of KB)
#   quests.json   `quest list --json`, by that version
#   show.json     `quest show q1 --json`, by that version
#   verify.json   `verify --json`, by that version
#   export.jsonl  what `export q1 --out` wrote
#   device.key    from schema 10, the key that signed the store's ledger
#                 head and the export (a test fixture, no box's key)
#
# engine's TestGoldenStores opens each with today's code, verifies it,
# migrates it and compares what it reads with these files. Run from the
# repository's root; it refuses a COMMIT whose store.go says another schema.
set -eu
commit=${1:?usage: scripts/golden-stores.sh COMMIT SCHEMA}
schema=${2:?usage: scripts/golden-stores.sh COMMIT SCHEMA}
root=$(git rev-parse --show-toplevel)
out="$root/engine/testdata/golden/schema$schema"
tmp=$(mktemp -d)
tree="$tmp/tree"
cleanup() { git -C "$root" worktree remove --force "$tree" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

git -C "$root" worktree add --detach "$tree" "$commit" >/dev/null
if ! grep -Eq "SchemaVersion *= *$schema\$" "$tree/engine/store.go"; then
	echo "golden-stores: $commit's engine/store.go does not say SchemaVersion = $schema" >&2
	exit 1
fi
(cd "$tree" && go build -o "$tmp/questbox" ./cmd/questbox)

data="$tmp/data"
mkdir -p "$data"
: > "$tmp/questbox.toml"
qb() { "$tmp/questbox" --data "$data" --config "$tmp/questbox.toml" "$@"; }
ans() { # verdict evidence
	printf 'My findings.\n```json\n{"verdict":"%s","evidence":"%s","citations":[],"new_directions":[]}\n```\n' "$1" "$2"
}

qb quest new golden --direction "find the most accurate free OCR for Japanese invoices" --provider external --mode solo >/dev/null
qb scan q1 "tesseract with the jpn model" "PaddleOCR japan" "manga-ocr on invoice crops" "a commercial API" >/dev/null
# n1 passes (locked), n2 is a dead end (locked), n3 FAILs once, n4 stays pending.
ans promising "tesseract jpn reads all twenty sample invoices at 97 percent." | qb submit q1 --node n1 --in - >/dev/null || true
ans dead "PaddleOCR japan misreads the vertical columns on every sample." | qb submit q1 --node n2 --in - >/dev/null || true
printf 'no json here\n' | qb submit q1 --node n3 --in - >/dev/null || true
mkdir -p "$out"
rm -f "$out/export.jsonl"
qb export q1 --out "$out/export.jsonl" >/dev/null
qb quest list --json > "$out/quests.json"
qb quest show q1 --json > "$out/show.json"
qb verify --json > "$out/verify.json"
cp "$data/questbox.db" "$out/questbox.db"
if [ -f "$data/device.key" ]; then
	cp "$data/device.key" "$out/device.key"
	chmod 600 "$out/device.key"
fi
echo "golden-stores: schema $schema from $commit: $(wc -c < "$out/questbox.db") bytes in $out"
