package kubeapi

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestBuildScriptBuildsTheVersionsTheHarnessRuns(t *testing.T) {
	script, err := os.ReadFile("build-binaries.sh")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"KUBE_VERSION": KubeVersion, "ETCD_VERSION": EtcdVersion} {
		m := regexp.MustCompile(`(?m)^` + name + `=(\S+)`).FindSubmatch(script)
		if m == nil {
			t.Fatalf("build-binaries.sh sets no %s", name)
		}
		if string(m[1]) != want {
			t.Errorf("build-binaries.sh %s=%s, harness runs %s", name, m[1], want)
		}
	}
}

func TestFindBinariesNamesWhatIsMissingAndTheScript(t *testing.T) {
	root := t.TempDir()
	t.Setenv("VISOR_KUBE_CACHE", root)
	dir := filepath.Join(root, "kube-"+KubeVersion)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// etcd present, and a non-executable kube-apiserver counts as missing.
	if err := os.WriteFile(filepath.Join(dir, "etcd"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kube-apiserver"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	_, err := FindBinaries()
	var missing *MissingBinariesError
	if !errors.As(err, &missing) {
		t.Fatalf("FindBinaries() error = %v, want *MissingBinariesError", err)
	}
	if got := strings.Join(missing.Missing, ","); got != "kube-apiserver,kube-controller-manager" {
		t.Errorf("missing = %s, want kube-apiserver,kube-controller-manager", got)
	}
	for _, want := range []string{BuildScript, dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestFindBinariesFindsACompleteCache(t *testing.T) {
	root := t.TempDir()
	t.Setenv("VISOR_KUBE_CACHE", root)
	dir := filepath.Join(root, "kube-"+KubeVersion)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, err := FindBinaries()
	if err != nil {
		t.Fatal(err)
	}
	if b.APIServer != filepath.Join(dir, "kube-apiserver") {
		t.Errorf("APIServer = %s", b.APIServer)
	}
}

func TestFindBinariesNamesAMissingSchedulerOrKwok(t *testing.T) {
	root := t.TempDir()
	t.Setenv("VISOR_KUBE_CACHE", root)
	dir := filepath.Join(root, "kube-"+KubeVersion)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", SchedulerBinary} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := FindBinaries(); err != nil {
		t.Fatalf("the core binaries are there, but: %v", err)
	}
	_, err := FindBinaries(Options{Scheduler: true, Kwok: true}.OptionalBinaries()...)
	var missing *MissingBinariesError
	if !errors.As(err, &missing) || strings.Join(missing.Missing, ",") != KwokBinary {
		t.Fatalf("FindBinaries(scheduler, kwok) = %v, want kwok missing", err)
	}
	if !strings.Contains(err.Error(), BuildScript) {
		t.Errorf("error %q does not name %s", err, BuildScript)
	}
}
