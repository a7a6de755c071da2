package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUpWatcherSeesTheLineAcrossWrites(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	defer f.Close()
	up := make(chan struct{})
	w := &upWatcher{w: f, up: up}
	for _, part := range []string{"starting…\nvisor dev i", "s up in 3.5s\n", "visor dev is up again\n"} {
		_, err := w.Write([]byte(part))
		require.NoError(t, err)
	}
	select {
	case <-up:
	default:
		t.Fatal("the up line split over two writes was not seen")
	}
	raw, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	assert.Equal(t, "starting…\nvisor dev is up in 3.5s\nvisor dev is up again\n", string(raw), "output passes through whole")
}

func TestUpWatcherWaitsForTheLine(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	defer f.Close()
	up := make(chan struct{})
	w := &upWatcher{w: f, up: up}
	_, err = w.Write([]byte("visor dev is starting\n"))
	require.NoError(t, err)
	select {
	case <-up:
		t.Fatal("up before visor dev said so")
	default:
	}
}
