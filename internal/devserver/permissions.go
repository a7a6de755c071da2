package devserver

import (
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
			return err
		}
		switch {
		case d.IsDir():
			return os.Chmod(path, 0o700)
		case d.Type().IsRegular():
			return os.Chmod(path, 0o600)
		}
		return nil
	})
}
