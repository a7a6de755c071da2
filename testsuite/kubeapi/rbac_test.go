package kubeapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadClusterRolesKeepsOnlyClusterRoles(t *testing.T) {
	roles, err := ReadClusterRoles("testdata/clusterrole.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(roles) != 1 || roles[0].Name != "harness-test-reader" {
		t.Fatalf("roles = %+v, want only harness-test-reader", roles)
	}
	if got := roles[0].Rules[1].Resources[0]; got != "pods/eviction" {
		t.Errorf("second rule resource = %s, want pods/eviction", got)
	}
}

func TestReadClusterRolesRejectsAManifestWithoutOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sa.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadClusterRoles(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "no ClusterRole") {
		t.Fatalf("error = %v, want one naming %s and saying it has no ClusterRole", err, path)
	}
}

func TestReadClusterRolesRejectsUnknownFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "role.yaml")
	doc := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: x\nrules:\n  - apiGroups: [\"\"]\n    resource: [pods]\n    verbs: [get]\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadClusterRoles(path); err == nil || !strings.Contains(err.Error(), "resource") {
		t.Fatalf("error = %v, want one naming the misspelt field", err)
	}
}
