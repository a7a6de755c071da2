package devserver

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// RestrictPermissions makes everything under dir private to its owner:
// directories 0700, files 0600 (the SQLite files, logs, tokens and
// credentials are created by code that picks its own mode).
func RestrictPermissions(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return ignoreVanished(err)
		}
		return chmodPrivate(path, d)
	})
}

// chmodPrivate restricts one entry. The server is running while the walk
// goes on, so SQLite's journal can be deleted between being listed and
// chmodded (make chaos caught `visor dev` failing to start on
// "chmod temporal.db-journal: no such file or directory"): what is gone
// needs no protecting.
func chmodPrivate(path string, d fs.DirEntry) error {
	switch {
	case d.IsDir():
		return ignoreVanished(os.Chmod(path, 0o700))
	case d.Type().IsRegular():
		return ignoreVanished(os.Chmod(path, 0o600))
	}
	return nil
}

func ignoreVanished(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
