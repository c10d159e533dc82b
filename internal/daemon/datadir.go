package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/ui/api"
)

// mayCreateStore refuses a writing verb that, with no daemon answering,
// would create a new store at the built-in default data directory: nobody
// chose that place (no --data, no QUESTBOX_DATA, no config file), so the
// store is most likely elsewhere (./data under `make run`), and a second
// one there would quietly take the writes and hand out ids that clash
// with the real one's. A store that exists, or a directory somebody
// chose, is used as it is.
func (e *Env) mayCreateStore() error {
	if e.DataFrom != "" {
		return nil
	}
	db := filepath.Join(e.Data, engine.StoreFile)
	if _, err := os.Stat(db); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return &api.Error{Code: api.CodeUnavailable, Message: fmt.Sprintf(
		"no questbox daemon answers on %s and there is no store in %s: this command would create a new, empty one (%s). "+
			"Choose the store with --data DIR or QUESTBOX_DATA=DIR (next to `make run`: --data ./data), or daemon.data in a config file; "+
			"--data %s creates it there on purpose",
		e.Cfg.SocketPath(), e.Data, db, e.Data)}
}
