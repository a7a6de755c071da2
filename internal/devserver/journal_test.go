package devserver

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// The data directory's SQLite file runs in WAL mode: the setting reached
// SQLite (a misspelt pragma name is ignored without an error, and the
// file then syncs a rollback journal on every commit, several times
// slower under a fleet's writes). WAL mode persists in the file, so it is
// read back after the server stopped.
func TestDataDirectoryDatabaseIsInWALMode(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{DataDir: dir, GRPCPort: freeTestPort(t), UIPort: -1, LogLevel: "error", LogFile: dir + "/temporal.log"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "temporal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Fatalf("journal_mode = %q, want wal", mode)
	}
}
