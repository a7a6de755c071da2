package kubeplane

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTokenFileLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.csv")
	users := []staticUser{{Name: "a", Token: "t1", Groups: []string{"system:masters", "g2"}}, {Name: "b", Token: "t2"}}
	if err := writeTokenFile(path, users); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := "t1,a,a,\"system:masters,g2\"\nt2,b,b\n"
	if string(got) != want {
		t.Errorf("token file = %q, want %q", got, want)
	}
}
