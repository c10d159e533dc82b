//go:build !updatefault

package daemon

// updateFault is a broken release's fault point in the update tests'
// builds (fault_update.go, -tags updatefault); in every other build it
// does nothing.
func updateFault(stage, data string) {}
