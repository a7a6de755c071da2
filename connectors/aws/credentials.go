package aws

import (
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// ParseCredential reads an AWS credential reference's value, for the
// other AWS services' connectors (Lightsail); see parseCredential.
func ParseCredential(secret string) (aws.Credentials, error) { return parseCredential(secret) }

// parseCredential reads "ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]".
// Errors describe the shape only; the value never appears in them.
func parseCredential(secret string) (aws.Credentials, error) {
	parts := strings.Split(secret, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return aws.Credentials{}, errors.New("must be ACCESS_KEY_ID:SECRET_ACCESS_KEY or ACCESS_KEY_ID:SECRET_ACCESS_KEY:SESSION_TOKEN")
	}
	for i, p := range parts {
		if strings.TrimSpace(p) == "" {
			return aws.Credentials{}, errors.New([]string{"access key ID", "secret access key", "session token"}[i] + " is empty")
		}
	}
	c := aws.Credentials{AccessKeyID: parts[0], SecretAccessKey: parts[1], Source: "visor credential reference"}
	if len(parts) == 3 {
		c.SessionToken = parts[2]
	}
	return c, nil
}
