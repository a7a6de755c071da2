package devserver

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	_ "modernc.org/sqlite" // the driver the server's SQLite plugin uses
)

// forgetMembership clears the cluster membership rows a previous run left
// in the SQLite file. Each run binds its internal services to new ports;
// the old rows would look alive for a while and the new services would try
// to join hosts that no longer exist ("Not enough hosts to serve the
// request"). One process owns the file (see lockDataDir), so every row is
// stale.
func forgetMembership(dbPath string) error {
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(`DELETE FROM cluster_membership`); err != nil {
		return fmt.Errorf("clear stale cluster membership in %s: %w", dbPath, err)
	}
	return nil
}

// lockDataDir takes an exclusive lock on the data directory for the life
// of the process, so two `visor dev` never share one SQLite file.
func lockDataDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "visor.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("data directory %s is in use by another visor dev (lock %s); stop it or pick another --data-dir", dir, path)
	}
	return f, nil
}
