package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLastFatalExplainsAStartThatDied(t *testing.T) {
	path := filepath.Join(t.TempDir(), "temporal.log")
	log := `{"level":"info","ts":"2026-12-01T09:35:20.000Z","msg":"starting"}
{"level":"fatal","ts":"2026-12-01T09:30:00.000Z","msg":"an older start's fatal"}
{"level":"fatal","ts":"2026-12-01T09:35:25.290Z","msg":"Failed to start ringpop listener","error":"listen tcp 127.0.0.1:46595: bind: address already in use"}
`
	require.NoError(t, os.WriteFile(path, []byte(log), 0o600))
	started := time.Date(2026, 12, 1, 9, 35, 24, 0, time.UTC)
	assert.Equal(t, "server fatal: Failed to start ringpop listener: listen tcp 127.0.0.1:46595: bind: address already in use", lastFatal(path, started))
	assert.Empty(t, lastFatal(path, started.Add(time.Minute)), "a fatal before the start is not this start's")
	assert.Empty(t, lastFatal(filepath.Join(t.TempDir(), "missing.log"), started))
}

func TestWhyExitedQuotesVisorDevsLastLine(t *testing.T) {
	dir := t.TempDir()
	devLog := filepath.Join(dir, "dev.log")
	require.NoError(t, os.WriteFile(devLog, []byte("visor: chmod temporal.db-journal: no such file or directory\n"), 0o600))
	assert.Equal(t, "last output: visor: chmod temporal.db-journal: no such file or directory",
		whyExited(devLog, filepath.Join(dir, "temporal.log"), time.Now()))
}
