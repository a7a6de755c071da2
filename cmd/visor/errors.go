package main

import (
	"errors"
	"strings"

	"go.temporal.io/api/serviceerror"
)

// errorText adds what the frontend's refusal carries beside its message:
// Temporal's PermissionDenied prints only "Request unauthorized." and
// keeps why (which pool is not the caller's, how to scope a listing) in
// its Reason.
func errorText(err error) string {
	msg := err.Error()
	var denied *serviceerror.PermissionDenied
	if errors.As(err, &denied) && denied.Reason != "" && !strings.Contains(msg, denied.Reason) {
		msg += ": " + denied.Reason
	}
	return msg
}
