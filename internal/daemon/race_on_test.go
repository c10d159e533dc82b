//go:build race

package daemon

// raceEnabled says the race detector is on: it allocates of its own and
// drops sync.Pool items at random, so allocation counts are not checked.
const raceEnabled = true
