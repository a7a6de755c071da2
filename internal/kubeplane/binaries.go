package kubeplane

import (
	"fmt"
	"os"
	"path/filepath"
)

// Versions the harness runs; build-binaries.sh builds exactly these (a test
// keeps the two in step).
const (
	KubeVersion = "v1.37.2"
	EtcdVersion = "v3.6.6"
)

// BuildScript is the script that prepares the binary cache, relative to the
// module root.
const BuildScript = "testsuite/kubeapi/build-binaries.sh"

// Binaries are the paths of the server programs the harness starts.
type Binaries struct {
	Dir               string
	Etcd              string
	APIServer         string
	ControllerManager string
	// Scheduler and Kwok are built too but needed only by clusters that
	// run them (Options.Scheduler, Options.Kwok).
	Scheduler string
	Kwok      string
}

// Names of the optional binaries, for FindBinaries.
const (
	SchedulerBinary = "kube-scheduler"
	KwokBinary      = "kwok"
)

// CacheDir is where build-binaries.sh puts the binaries of KubeVersion:
// ${VISOR_KUBE_CACHE:-$HOME/.cache/visor-fleet}/kube-<version>.
func CacheDir() string {
	root := os.Getenv("VISOR_KUBE_CACHE")
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		root = filepath.Join(home, ".cache", "visor-fleet")
	}
	return filepath.Join(root, "kube-"+KubeVersion)
}

// MissingBinariesError says which binaries are absent and how to build them.
type MissingBinariesError struct {
	Dir     string
	Missing []string
}

func (e *MissingBinariesError) Error() string {
	return fmt.Sprintf("kube test binaries %v not found in %s: run %s once (15 to 45 minutes on 2 cores; "+
		"set VISOR_KUBE_CACHE to use another cache folder)", e.Missing, e.Dir, BuildScript)
}

// FindBinaries locates the cached binaries (etcd, kube-apiserver,
// kube-controller-manager and the optional ones named), or returns a
// *MissingBinariesError naming the build script.
func FindBinaries(optional ...string) (Binaries, error) {
	dir := CacheDir()
	b := Binaries{
		Dir:               dir,
		Etcd:              filepath.Join(dir, "etcd"),
		APIServer:         filepath.Join(dir, "kube-apiserver"),
		ControllerManager: filepath.Join(dir, "kube-controller-manager"),
		Scheduler:         filepath.Join(dir, SchedulerBinary),
		Kwok:              filepath.Join(dir, KwokBinary),
	}
	need := []string{b.Etcd, b.APIServer, b.ControllerManager}
	for _, name := range optional {
		need = append(need, filepath.Join(dir, name))
	}
	var missing []string
	for _, p := range need {
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, filepath.Base(p))
		}
	}
	if len(missing) > 0 {
		return b, &MissingBinariesError{Dir: dir, Missing: missing}
	}
	return b, nil
}
