package connectors

import (
	"slices"
	"strings"
)

// Config is a provider kind's section of a clusters file.
type Config interface {
	// Validate reports every problem in the section, with field paths
	// relative to it ("credentials", "templates[0].path"). It reads no
	// credential and touches no file or network.
	Validate(p Problems)
}

// ReferenceHolder is a Config holding credential references; the loader
// makes their relative file: paths relative to the clusters file.
type ReferenceHolder interface {
	CredentialRefs() []*CredentialRef
}

// PathHolder is a Config holding file paths the loader anchors likewise.
type PathHolder interface {
	FilePaths() []*string
}

// Problems collects what is wrong in a Config.
type Problems interface {
	Add(field, format string, args ...any)
}

// Required reports an empty string field; what says what it must be.
func Required(p Problems, field, value, what string) {
	if value == "" {
		p.Add(field, "is empty; it must be %s", what)
	}
}

// NotNegative reports a negative count.
func NotNegative(p Problems, field string, value int) {
	if value < 0 {
		p.Add(field, "must not be negative, got %d", value)
	}
}

// Credential reference kinds, as CredentialRef resolves them.
const (
	refEnv    = "env:"
	refFile   = "file:"
	refSecret = "secret:"
)

// CheckRef checks a reference's form only; whether the secret behind it
// exists is for the worker that holds it to find out.
func CheckRef(p Problems, field string, ref CredentialRef, required bool) {
	s := string(ref)
	if s == "" {
		if required {
			p.Add(field, "is empty; it must be a reference: env:NAME, file:PATH or secret:NAMESPACE/NAME/KEY")
		}
		return
	}
	switch {
	case strings.HasPrefix(s, refEnv) && len(s) > len(refEnv),
		strings.HasPrefix(s, refFile) && len(s) > len(refFile):
	case strings.HasPrefix(s, refSecret):
		parts := strings.Split(strings.TrimPrefix(s, refSecret), "/")
		if len(parts) != 3 || slices.Contains(parts, "") {
			p.Add(field, "%q must be secret:NAMESPACE/NAME/KEY", s)
		}
	default:
		// The value may be a pasted secret: never echo it.
		p.Add(field, "is not a reference (env:NAME, file:PATH or secret:NAMESPACE/NAME/KEY); put the secret where the worker can read it and reference it here")
	}
}

// AnchorFileRef rewrites a file: reference with anchor (which makes a
// relative path absolute); other references are left alone.
func AnchorFileRef(ref *CredentialRef, anchor func(string) string) {
	if rest, ok := strings.CutPrefix(string(*ref), refFile); ok {
		*ref = CredentialRef(refFile + anchor(rest))
	}
}
