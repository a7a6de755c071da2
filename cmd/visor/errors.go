package main

import (
	"errors"
	"strings"

	"go.temporal.io/api/serviceerror"
)

// dialedWithoutCredential is set when the CLI connects with no caller
// credential (no --credential, no VISOR_CREDENTIAL, no .visor/ here), so a
// refusal can say what is missing instead of only "Request unauthorized.".
var dialedWithoutCredential bool

// noCredentialHint is what a caller without a credential is told to do.
const noCredentialHint = "no caller credential was sent (none given by --credential or VISOR_CREDENTIAL, and no .visor/" +
	"dev-admin.json in this directory): run the CLI where `visor dev` runs, or " +
	"export VISOR_CREDENTIAL=file:<visor dev's dir>/.visor/dev-admin.json VISOR_CODEC_KEYS=file:<visor dev's dir>/.visor/codec-keys.json " +
	"(visor dev prints this line when it starts)"

// errorText adds what the frontend's refusal carries beside its message:
// Temporal's PermissionDenied prints only "Request unauthorized." and
// keeps why (which pool is not the caller's, how to scope a listing) in
// its Reason. A refusal of a call that carried no credential says how to
// get one.
func errorText(err error) string {
	msg := err.Error()
	var denied *serviceerror.PermissionDenied
	if !errors.As(err, &denied) {
		return msg
	}
	if denied.Reason != "" && !strings.Contains(msg, denied.Reason) {
		msg += ": " + denied.Reason
	}
	if dialedWithoutCredential {
		msg += "; " + noCredentialHint
	}
	return msg
}
