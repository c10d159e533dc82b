// Package soak is the crash-loop proof that nothing is lost (docs/design.md,
// "Light and nothing lost"): an integration test, behind the build tag soak,
// that runs the real `questbox run` binary with a fast tick, a
// command-provider agent that answers PASS, FAIL, REVIEW or hangs (and votes
// as a council member in the team quests that have a council), and a real
// mosquitto, kills the daemon with SIGKILL hundreds of times at random
// moments (a third of them in the middle of follow-up chains: Team stages,
// council members and merges, retries dispatched as results commit), and
// checks the store's invariants after every restart.
//
//	make soak                      # SOAK_KILLS=300 by default
//	go test -tags soak -run TestSoak -v -timeout 30m ./bench/soak
//
// It is kept out of `make test` (it takes minutes); see soak_test.go for
// what is checked.
package soak
