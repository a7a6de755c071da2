package devserver

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sqliteschema "go.temporal.io/server/schema/sqlite"
)

// A new data directory keeps visibility in a file of its own, and a
// started workflow's visibility row lands there, not in temporal.db.
func TestANewDataDirectoryKeepsVisibilityInItsOwnFile(t *testing.T) {
	dir := t.TempDir()
	startListAndStop(t, dir)
	if n := visibilityRows(t, filepath.Join(dir, visibilityDatabase), "listed"); n != 1 {
		t.Fatalf("%s holds %d visibility rows of the workflow, want 1", visibilityDatabase, n)
	}
	// Not the server's own system workflows either.
	if n := visibilityRows(t, filepath.Join(dir, mainDatabase), ""); n != 0 {
		t.Fatalf("%s holds %d visibility rows, want 0 (they belong in %s)", mainDatabase, n, visibilityDatabase)
	}
}

// A data directory written before the split (one temporal.db) keeps its
// one file: its workflows stay listed, and no visibility.db appears.
func TestADataDirectoryOfOneFileKeepsItsVisibility(t *testing.T) {
	dir := t.TempDir()
	if err := sqliteschema.SetupSchema(fileStore(dir, mainDatabase)); err != nil {
		t.Fatal(err)
	}
	startListAndStop(t, dir)
	if _, err := os.Stat(filepath.Join(dir, visibilityDatabase)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s appeared in a one-file data directory (err %v)", visibilityDatabase, err)
	}
	if n := visibilityRows(t, filepath.Join(dir, mainDatabase), "listed"); n != 1 {
		t.Fatalf("%s holds %d visibility rows of the workflow, want 1", mainDatabase, n)
	}
}

// startListAndStop starts a server on dir, starts one workflow (no worker
// needed), waits until the listing shows it, and stops the server.
func startListAndStop(t *testing.T, dir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{DataDir: dir, GRPCPort: freeTestPort(t), UIPort: -1, LogLevel: "error", LogFile: dir + "/temporal.log"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	}()
	c, err := client.Dial(client.Options{HostPort: s.Address()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "listed", TaskQueue: "nobody"}, "Nothing"); err != nil {
		t.Fatal(err)
	}
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"})
		if err == nil && len(resp.Executions) == 1 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the started workflow was never listed (last error %v)", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// visibilityRows counts the file's visibility rows of workflow id, or
// all of them when id is empty.
func visibilityRows(t *testing.T, file, id string) int {
	t.Helper()
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM executions_visibility WHERE ? = '' OR workflow_id = ?", id, id).Scan(&n); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return n
}
