package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/internal/devstack"
	"github.com/hanzoai/visor-fleet/starter"
)

// devStateDir is where `visor dev` keeps its state by default; the CLI run
// from the same directory finds the dev admin's credential and the codec
// keys there without flags.
const devStateDir = ".visor"

// withDevDefaults fills an unset credential and codec keys from a dev
// checkout's .visor directory, when the files are there.
func withDevDefaults(o starter.ConnectOptions) starter.ConnectOptions {
	fill := func(v *string, name string) {
		path := filepath.Join(devStateDir, name)
		if *v == "" {
			if _, err := os.Stat(path); err == nil {
				*v = "file:" + path
			}
		}
	}
	fill(&o.Credential, devstack.AdminCredentialFile)
	fill(&o.CodecKeys, devstack.CodecKeysFile)
	return o
}

// printDevAuth tells the operator how to act as the dev admin.
func printDevAuth(s *devstack.Stack) {
	fmt.Printf("  callers need a credential; as the dev admin (every org):\n    export VISOR_CREDENTIAL=file:%s VISOR_CODEC_KEYS=file:%s\n",
		s.Identity.AdminPath, filepath.Join(s.StateDir, devstack.CodecKeysFile))
	if c := s.Server.CodecAddress(); c != "" {
		fmt.Printf("  codec server   %s (the Web UI decodes payloads through it)\n", c)
	}
}

// loadWorkerAuth reads the worker's system key and trust file, both
// optional; a reference that does not load is an error at start.
func loadWorkerAuth(systemKeyRef, trustRef string) (*auth.SigningKey, *auth.Trust, error) {
	var key *auth.SigningKey
	var trust *auth.Trust
	if systemKeyRef != "" {
		k, err := auth.LoadSigningKey(systemKeyRef)
		if err != nil {
			return nil, nil, fmt.Errorf("--system-key: %w", err)
		}
		key = &k
	}
	if trustRef != "" {
		t, err := auth.LoadTrust(trustRef)
		if err != nil {
			return nil, nil, fmt.Errorf("--trust: %w", err)
		}
		trust = &t
	}
	if key != nil && trust != nil && trust.System[key.Kid] != key.Public() {
		return nil, nil, fmt.Errorf("--system-key %q is not among the trust file's system keys: workflows would refuse what this worker signs", key.Kid)
	}
	return key, trust, nil
}

func newAuthCommand(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Keys and credentials: issuer, system key, trust file, caller credentials",
		Long: `A platform issuer key signs caller credentials (a private key and a certificate naming
the caller's subject and the orgs it may act for; "*" is every org). Workers hold a system
key that signs the watcher's signals, and a trust file with the public halves of both, which
is all a verifier needs. Every file is written 0600; pass them by reference (file:PATH or
env:NAME), like provider credentials.`,
	}
	cmd.AddCommand(newAuthKeyCommand("new-issuer", "Make an issuer key (signs caller certificates)", auth.GenerateIssuer),
		newAuthKeyCommand("new-system-key", "Make a worker system key (signs trusted inputs)", auth.GenerateSystemKey),
		newAuthTrustCommand(), newAuthIssueCommand(), newAuthWhoamiCommand(g))
	return cmd
}

func newAuthKeyCommand(use, short string, generate func(string) (auth.SigningKey, error)) *cobra.Command {
	var kid, out string
	cmd := &cobra.Command{
		Use: use, Short: short, Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out is required")
			}
			if _, err := os.Stat(out); err == nil {
				return fmt.Errorf("--out %s exists; refusing to replace a key", out)
			}
			k, err := generate(kid)
			if err != nil {
				return err
			}
			if err := auth.SaveSigningKey(out, k); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (kid %s, public key %s)\n", out, k.Kid, k.Public())
			return nil
		},
	}
	cmd.Flags().StringVar(&kid, "kid", "", "key ID, named in certificates and the trust file")
	cmd.Flags().StringVar(&out, "out", "", "file to write (0600)")
	return cmd
}

func newAuthTrustCommand() *cobra.Command {
	var issuers, systems []string
	var out string
	cmd := &cobra.Command{
		Use: "trust", Short: "Write a trust file from issuer and system key files (public halves only)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t := auth.Trust{Issuers: map[string]string{}, System: map[string]string{}}
			add := func(flag string, refs []string, into map[string]string) error {
				for _, ref := range refs {
					k, err := auth.LoadSigningKey(ref)
					if err != nil {
						return fmt.Errorf("%s %s: %w", flag, ref, err)
					}
					into[k.Kid] = k.Public()
				}
				return nil
			}
			if err := add("--issuer", issuers, t.Issuers); err != nil {
				return err
			}
			if err := add("--system", systems, t.System); err != nil {
				return err
			}
			if out == "" {
				return writeJSON(cmd, t)
			}
			return auth.SaveTrust(out, t)
		},
	}
	cmd.Flags().StringArrayVar(&issuers, "issuer", nil, "issuer key reference (repeatable)")
	cmd.Flags().StringArrayVar(&systems, "system", nil, "system key reference (repeatable)")
	cmd.Flags().StringVar(&out, "out", "", "file to write (default: stdout)")
	return cmd
}

func newAuthIssueCommand() *cobra.Command {
	var issuerRef, subject, out string
	var orgs []string
	var ttl time.Duration
	cmd := &cobra.Command{
		Use: "issue", Short: "Issue a caller credential (private key + certificate)", Args: cobra.NoArgs,
		Example: `  visor auth issue --issuer file:issuer.json --subject ci@acme --org acme --ttl 720h --out acme-ci.json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out is required")
			}
			issuer, err := auth.LoadSigningKey(issuerRef)
			if err != nil {
				return fmt.Errorf("--issuer: %w", err)
			}
			cred, err := auth.NewCredential(issuer, subject, orgs, ttl, time.Now())
			if err != nil {
				return err
			}
			if err := auth.SaveCredential(out, cred); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s for %s (orgs %s), valid until %s\n", out, subject, strings.Join(orgs, ","), time.Now().Add(ttl).UTC().Format(time.RFC3339))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&issuerRef, "issuer", "", "issuer key reference (file:PATH or env:NAME)")
	f.StringVar(&subject, "subject", "", "who the caller is (recorded as requestedBy)")
	f.StringArrayVar(&orgs, "org", nil, `org the caller may act for (repeatable; "*" for every org)`)
	f.DurationVar(&ttl, "ttl", 30*24*time.Hour, "how long the certificate is valid")
	f.StringVar(&out, "out", "", "file to write (0600)")
	return cmd
}

func newAuthWhoamiCommand(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use: "whoami", Short: "Show the caller credential in use (--credential, VISOR_CREDENTIAL or the dev admin's)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ref := g.connectOptions().Credential
			if ref == "" {
				return errors.New("no credential: set --credential or VISOR_CREDENTIAL (visor dev prints one)")
			}
			cred, err := auth.LoadCredential(ref)
			if err != nil {
				return err
			}
			info, err := cred.Info()
			if err != nil {
				return err
			}
			return writeJSON(cmd, map[string]any{"credential": ref, "subject": info.Subject, "orgs": info.Orgs, "issuer": info.Kid, "expires": info.Expires})
		},
	}
}

func writeJSON(cmd *cobra.Command, v any) error {
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
