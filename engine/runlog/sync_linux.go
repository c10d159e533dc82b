package runlog

import (
	"os"

	"golang.org/x/sys/unix"
)

// closeSyncs is false: Sync makes the closed logs durable together.
const closeSyncs = false

// syncFS writes every dirty file of dir's file system to its device with
// one syncfs(2): the logs closed since the last call, whatever their
// number.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
