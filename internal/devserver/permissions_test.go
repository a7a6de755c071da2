package devserver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRestrictPermissionsMakesFilesPrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "temporal.db")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	require.NoError(t, RestrictPermissions(dir))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}

// A file listed by the walk and deleted before its chmod (SQLite's
// journal) is no error: before the fix this failed `visor dev`'s start.
func TestChmodPrivateSkipsAFileThatVanished(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "temporal.db-journal")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.NoError(t, os.Remove(path))
	assert.NoError(t, chmodPrivate(path, entries[0]))
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, nil, 0o644))
	assert.Error(t, chmodPrivate(filepath.Join(plain, "child"), dirEntry{}), "other errors (not a directory) still count")
}

// dirEntry claims to be a directory.
type dirEntry struct{ os.DirEntry }

func (dirEntry) IsDir() bool { return true }

func TestALogSentToDevNullLeavesTheDeviceAlone(t *testing.T) {
	before, err := os.Stat(os.DevNull)
	if err != nil {
		t.Skip(err)
	}
	if _, err := newLogger(Options{LogLevel: "error", LogFile: os.DevNull}); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	if after.Mode() != before.Mode() {
		t.Fatalf("%s mode changed from %v to %v", os.DevNull, before.Mode(), after.Mode())
	}
}
