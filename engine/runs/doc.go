// Package runs is how people read the agents' runs: a quest's or a
// node's runs in the order they started ([OfQuest]), each named as the
// node's k-th run ([Name]); one run found by its id, its name or its node
// ([Find]); and its log, copied or followed while the run is in flight
// ([Log]).
//
// It reads the run records through engine/records over one of the
// store's transactions, which the engine opens, and the logs through
// engine/runlog; it writes nothing. See docs/design.md, "Runs and their
// logs".
package runs
