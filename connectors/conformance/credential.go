package conformance

import (
	"os"
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// Environment variables the credential behaviour points references at.
const (
	unsetEnv = "VISOR_CONFORMANCE_UNSET_CREDENTIAL"
	wrongEnv = "VISOR_CONFORMANCE_WRONG_CREDENTIAL"
)

// credentialReferenceResolvedInside: the connector resolves its credential
// reference itself; a reference with nothing behind it, or to a secret the
// provider refuses, is a Permanent error that names the reference and
// never the value.
func credentialReferenceResolvedInside(t *testing.T, s *subject) {
	if s.Rebuild == nil {
		t.Skipf("%s takes no credential", s.p.Name())
	}
	t.Setenv(unsetEnv, "") // restored after the test; unset meanwhile
	if err := os.Unsetenv(unsetEnv); err != nil {
		t.Fatal(err)
	}
	if err := s.firstCall(connectors.CredentialRef("env:" + unsetEnv)); !namesRefPermanently(err, "env:"+unsetEnv) {
		t.Errorf("a reference to an empty variable: %v, want a Permanent error naming env:%s", err, unsetEnv)
	}
	if s.WrongSecret == "" {
		t.Log("the double accepts any credential: a refused one is checked by Refused/auth only")
		return
	}
	t.Setenv(wrongEnv, s.WrongSecret)
	err := s.firstCall(connectors.CredentialRef("env:" + wrongEnv))
	if !namesRefPermanently(err, "env:"+wrongEnv) {
		t.Errorf("a refused credential: %v, want a Permanent error naming env:%s", err, wrongEnv)
	}
	if err != nil && strings.Contains(err.Error(), s.WrongSecret) {
		t.Errorf("the refused credential's value is in the error: %v", err)
	}
}

// firstCall builds the connector from ref and lists the pool: the error of
// whichever fails first.
func (s *subject) firstCall(ref connectors.CredentialRef) error {
	p, err := s.Rebuild(s.ctx, ref)
	s.record(nil, err)
	if err != nil {
		return err
	}
	gs, err := connectors.Checked(p).NodeGroups(s.ctx, s.Spec.Pool)
	s.record(gs, err)
	return err
}

func namesRefPermanently(err error, ref string) bool {
	return errclass.IsPermanent(err) && strings.Contains(err.Error(), ref)
}
