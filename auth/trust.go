package auth

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// DefaultMaxSkew is how far a signed time may be from the verifier's clock
// when Trust does not say.
const DefaultMaxSkew = 2 * time.Minute

// maxSkewLimit keeps a configured skew from disabling the time check.
const maxSkewLimit = time.Hour

// Trust is what a verifier believes: issuer public keys (certificates) and
// system public keys (trusted inputs), each by kid, base64url. It holds no
// secret, so it may be a workflow input or sit in a world-readable file.
type Trust struct {
	Issuers map[string]string `json:"issuers"`
	System  map[string]string `json:"system,omitempty"`
	// MaxSkew bounds |now - signed time| of a request, and how far a
	// trusted input may be ahead of now; zero means DefaultMaxSkew.
	MaxSkew types.Duration `json:"maxSkew,omitempty"`
	// MaxSystemAge bounds how old a trusted input may be when the workflow
	// gets to it (a signal waits in history while no worker runs); zero
	// means DefaultMaxSystemAge.
	MaxSystemAge types.Duration `json:"maxSystemAge,omitempty"`
}

// DefaultMaxSystemAge: a watcher's signal older than this is stale anyway.
const DefaultMaxSystemAge = time.Hour

// Validate names every bad key.
func (t Trust) Validate() error {
	var errs []error
	check := func(kind string, keys map[string]string) {
		for _, kid := range sortedKeys(keys) {
			if err := checkKid(kid); err != nil {
				errs = append(errs, fmt.Errorf("trust.%s: %w", kind, err))
				continue
			}
			if _, err := DecodePublicKey(keys[kid]); err != nil {
				errs = append(errs, fmt.Errorf("trust.%s.%s: %w", kind, kid, err))
			}
		}
	}
	if len(t.Issuers) == 0 {
		errs = append(errs, errors.New("trust.issuers: no issuer key; no caller could be verified"))
	}
	check("issuers", t.Issuers)
	check("system", t.System)
	if t.MaxSkew < 0 || t.MaxSkew.D() > maxSkewLimit {
		errs = append(errs, fmt.Errorf("trust.maxSkew %s must be between 0 and %s", t.MaxSkew, maxSkewLimit))
	}
	if t.MaxSystemAge < 0 || t.MaxSystemAge.D() > 24*time.Hour {
		errs = append(errs, fmt.Errorf("trust.maxSystemAge %s must be between 0 and 24h", t.MaxSystemAge))
	}
	return errors.Join(errs...)
}

func (t Trust) skew() time.Duration {
	if t.MaxSkew > 0 && t.MaxSkew.D() <= maxSkewLimit {
		return t.MaxSkew.D()
	}
	return DefaultMaxSkew
}

func (t Trust) key(kind string, keys map[string]string, kid string) (ed25519.PublicKey, error) {
	enc, ok := keys[kid]
	if !ok {
		return nil, fmt.Errorf("%s kid %q is not trusted", kind, kid)
	}
	pub, err := DecodePublicKey(enc)
	if err != nil {
		return nil, fmt.Errorf("trusted %s %q: %w", kind, kid, err)
	}
	return pub, nil
}

// LoadTrust reads and validates a trust file from a reference (file:/path
// or env:NAME).
func LoadTrust(ref string) (Trust, error) {
	var t Trust
	b, err := resolveRef(ref)
	if err != nil {
		return t, err
	}
	if err := strictUnmarshal(b, &t); err != nil {
		return Trust{}, fmt.Errorf("trust %s: %w", ref, err)
	}
	if err := t.Validate(); err != nil {
		return Trust{}, fmt.Errorf("trust %s: %w", ref, err)
	}
	return t, nil
}

// SaveTrust writes t to path (0600, like every data file).
func SaveTrust(path string, t Trust) error {
	if err := t.Validate(); err != nil {
		return err
	}
	return savePrivateJSON(path, t)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (t Trust) systemAge() time.Duration {
	if t.MaxSystemAge > 0 && t.MaxSystemAge.D() <= 24*time.Hour {
		return t.MaxSystemAge.D()
	}
	return DefaultMaxSystemAge
}

// checkTime refuses a signed time more than ahead ahead of now or more
// than maxAge behind it.
func checkTime(what string, at, now time.Time, ahead, maxAge time.Duration) error {
	if at.IsZero() {
		return fmt.Errorf("%s time is missing", what)
	}
	if d := at.Sub(now); d > ahead {
		return fmt.Errorf("%s time %s is %s ahead of now (at most %s allowed)", what, at.UTC().Format(time.RFC3339), d.Round(time.Second), ahead)
	}
	if d := now.Sub(at); d > maxAge {
		return fmt.Errorf("%s time %s is %s old (at most %s allowed)", what, at.UTC().Format(time.RFC3339), d.Round(time.Second), maxAge)
	}
	return nil
}
