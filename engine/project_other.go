//go:build !unix

package engine

// checkAccess has no access(2) to ask: a project the daemon cannot use
// fails at its first run instead.
func checkAccess(string) string { return "" }
