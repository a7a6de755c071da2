package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	tlog "go.temporal.io/server/common/log"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/codec"
	"github.com/hanzoai/visor-fleet/internal/codecauth"
)

func newCodecCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "codec",
		Short: "Payload encryption keys (AES-256-GCM; the first key encrypts, any key decrypts)",
	}
	var keysPath, id string
	rotate := &cobra.Command{
		Use:   "new-key",
		Short: "Put a new key first in a key file (creating it), keeping the old ones for decryption",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if keysPath == "" {
				return errors.New("--keys is required")
			}
			var keys codec.Keys
			if _, err := os.Stat(keysPath); err == nil {
				if keys, err = codec.LoadKeys("file:" + keysPath); err != nil {
					return err
				}
			}
			if id == "" {
				id = "k" + time.Now().UTC().Format("20060102-150405")
			}
			k, err := codec.GenerateKey(id)
			if err != nil {
				return err
			}
			keys = append(codec.Keys{k}, keys...)
			if err := codec.SaveKeys(keysPath, keys); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s now encrypts; %d older key(s) still decrypt\n", keysPath, id, len(keys)-1)
			return nil
		},
	}
	rotate.Flags().StringVar(&keysPath, "keys", "", "key file (0600)")
	rotate.Flags().StringVar(&id, "id", "", "new key's ID (default: k<timestamp>)")
	cmd.AddCommand(rotate)
	return cmd
}

func newCodecServerCommand() *cobra.Command {
	var keysRef, listen, trustRef, permissionsClaim, audience string
	var origins, jwks []string
	cmd := &cobra.Command{
		Use:   "codec-server",
		Short: "Serve the Temporal codec-server API (/encode, /decode) so the Web UI and CLI show decoded payloads",
		Long: `visor codec-server decrypts payloads for the Temporal Web UI (set its codec endpoint to this
server) and for 'temporal --codec-endpoint'. Browsers may call it only from --ui-origin. Anyone
who can reach it can decode, so it listens on loopback unless --trust or --oidc-jwks is given, in
which case every request must carry a caller who may read the namespace ("Authorization: Bearer
..."): a Visor bearer token of a platform caller or reader (--trust), or the Web UI user's OIDC
access token, which the UI forwards with codec.passAccessToken, whose permissions claim grants
read on the request's X-Namespace (--oidc-jwks, checked by Temporal's JWT claim mapper).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if keysRef == "" {
				keysRef = os.Getenv("VISOR_CODEC_KEYS")
			}
			if keysRef == "" {
				return errors.New("--keys (or VISOR_CODEC_KEYS) is required")
			}
			keys, err := codec.LoadKeys(keysRef)
			if err != nil {
				return err
			}
			pc, err := codec.NewPayloadCodec(keys)
			if err != nil {
				return err
			}
			o := codec.ServerOptions{AllowedOrigins: origins}
			var check codecauth.Checker
			if trustRef != "" {
				trust, err := auth.LoadTrust(trustRef)
				if err != nil {
					return fmt.Errorf("--trust: %w", err)
				}
				check.Trust = &trust
			}
			if len(jwks) > 0 {
				check.OIDC = codecauth.NewOIDC(jwks, permissionsClaim, 5*time.Minute, tlog.NewNoopLogger())
				check.Audience = audience
			}
			if check.Trust != nil || check.OIDC != nil {
				o.Authorize = check.Authorize
			} else if !isLoopback(listen) {
				return fmt.Errorf("--listen %s is not loopback: without --trust or --oidc-jwks anyone reaching it could decode every payload", listen)
			}
			l, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("--listen %s: %w", listen, err)
			}
			srv := &http.Server{Handler: codec.NewHandler(pc, o), ReadHeaderTimeout: 10 * time.Second}
			fmt.Fprintf(cmd.OutOrStdout(), "visor codec-server on http://%s (origins %s)\n", l.Addr(), strings.Join(origins, ", "))
			go func() {
				<-cmd.Context().Done()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = srv.Shutdown(ctx)
			}()
			if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&keysRef, "keys", "", "codec key file reference (file:PATH or env:NAME; env VISOR_CODEC_KEYS)")
	f.StringVar(&listen, "listen", "127.0.0.1:8234", "address to serve on")
	f.StringArrayVar(&origins, "ui-origin", []string{"http://127.0.0.1:8233", "http://localhost:8233"}, "Web UI origin allowed to call from a browser (repeatable)")
	f.StringVar(&trustRef, "trust", "", "trust file reference: accept Visor bearer tokens of platform callers and readers")
	f.StringArrayVar(&jwks, "oidc-jwks", nil, "the IdP's JWKS URL: accept the Web UI user's access token with read on the namespace (repeatable)")
	f.StringVar(&permissionsClaim, "oidc-permissions-claim", "permissions", "the access token's claim listing <namespace>:<role>")
	f.StringVar(&audience, "oidc-audience", "", "the audience access tokens must carry (empty: not checked)")
	return cmd
}

func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
