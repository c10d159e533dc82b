// Package update keeps the questbox binaries a box can run inside its
// data directory and decides, at each start, which one runs: the one it
// committed to, a new release on trial, or — when a trial failed — the
// previous one again, with the store as it was before the trial.
//
// The layout, under the data directory (systemd's StateDirectory, the
// only place the sandboxed daemon may write):
//
//	bin/state.json              what runs (see State)
//	bin/questbox-<version>      an installed release (at most: the current, the previous, a trial)
//	bin/questbox.db.pre-<version>   the store as it was before the trial of <version> started
//
// The unit always starts the packaged binary (/usr/bin/questbox, from
// the .deb or the image). Its start-up (Dir.Launch) reads the state and
// executes the selected binary in its place (same PID, so systemd's
// Type=notify and watchdog see one process). A trial binary has Tries
// starts to become READY and feed the watchdog for the settling time;
// the daemon then calls Dir.Commit. A trial started Tries times without a
// commit is rolled back at the next start: the store snapshot taken before
// its first start is put back, and the committed binary runs. systemd's
// Restart= provides the starts; nobody needs to log in.
//
// A state written under another packaged version is void: when the .deb
// or the image's binary is upgraded, the packaged binary runs and the
// state starts over from it.
//
// One process uses a Dir at a time: the daemon's start-up, or the CLI's
// `questbox update` while the daemon runs (it writes the state with an
// atomic rename; the daemon reads it only at start and when it commits).
package update
