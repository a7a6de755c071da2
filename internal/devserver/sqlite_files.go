package devserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.temporal.io/server/common/config"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	sqliteschema "go.temporal.io/server/schema/sqlite"
)

// The data directory's SQLite files. Visibility has a file of its own:
// SQLite takes one writer per file, and a visibility row (58 indexes and
// two full-text tables) costs several times a start's own write, so in one
// file every start waited behind the visibility rows of the starts before
// it (10,000 pools applied in 106 s with one file, 71 s with two).
const (
	mainDatabase       = "temporal.db"
	visibilityDatabase = "visibility.db"
	// visibilityStore names the second data store in Temporal's config.
	visibilityStore = "sqlite-visibility"
)

// fileStore is one SQLite file of the data directory, in WAL mode.
func fileStore(dataDir, name string) *config.SQL {
	return &config.SQL{
		PluginName:   sqliteplugin.PluginName,
		DatabaseName: filepath.Join(dataDir, name),
		ConnectAttributes: map[string]string{
			"mode": "rwc",
			// Keys are pragma names as Temporal's SQLite plugin passes them
			// (`_pragma=journal_mode=wal`); an unknown name such as
			// "_journal_mode" is silently ignored by SQLite, which left the
			// file in rollback-journal mode with a sync on every commit.
			"journal_mode": "wal",
			"synchronous":  "normal",
		},
	}
}

// separateVisibility says whether the data directory keeps visibility in
// its own file: always for a new directory; a directory written before
// the split keeps its one file, or its workflows would vanish from every
// listing.
func separateVisibility(dataDir string) (bool, error) {
	_, err := os.Stat(filepath.Join(dataDir, mainDatabase))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("data directory %s: %w", dataDir, err)
	}
	_, err = os.Stat(filepath.Join(dataDir, visibilityDatabase))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("data directory %s: %w", dataDir, err)
	}
}

// prepareFiles creates the schema in each file not there yet. Temporal's
// schema package sets up both schemas in any file it is given; the unused
// half of each file stays empty.
func prepareFiles(stores ...*config.SQL) error {
	for _, s := range stores {
		if _, err := os.Stat(s.DatabaseName); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := sqliteschema.SetupSchema(s); err != nil {
			return fmt.Errorf("set up SQLite schema in %s: %w", s.DatabaseName, err)
		}
	}
	return nil
}
