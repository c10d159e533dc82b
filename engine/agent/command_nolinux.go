//go:build !linux

package agent

import "os"

// prefill never writes ahead where the pipe's size cannot be known: a
// goroutine writes the prompt while the child reads it.
func prefill(*os.File, string) bool { return false }

// waitExited returns at once: Wait blocks until the exit.
func waitExited(int) {}
