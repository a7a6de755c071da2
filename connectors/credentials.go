package connectors

import "github.com/hanzoai/visor-fleet/connectors/credentials"

// CredentialRef names where a secret lives, never the secret itself
// (package credentials resolves it inside the activity).
type CredentialRef = credentials.Ref

// SecretReader reads Kubernetes secrets; the kubernetes connector provides one.
type SecretReader = credentials.SecretReader
