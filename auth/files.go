package auth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hanzoai/visor-fleet/connectors/credentials"
)

// resolveRef reads what a reference (file:/path or env:NAME) names, the way
// provider credentials are resolved. Kubernetes secret references need a
// reader and are not supported here.
func resolveRef(ref string) ([]byte, error) {
	v, err := credentials.Ref(ref).Resolve(context.Background(), nil)
	if err != nil {
		return nil, err
	}
	return []byte(v), nil
}

// writePrivateFile writes data to path with mode 0600, its directory 0700,
// replacing any old file (and its mode) through a rename.
func writePrivateFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
