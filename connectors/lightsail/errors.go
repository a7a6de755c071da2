package lightsail

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/smithy-go"

	awsconn "github.com/hanzoai/visor-fleet/connectors/aws"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// defaultThrottleWait: Lightsail's throttling answers name no wait.
const defaultThrottleWait = 5 * time.Second

// authCodes mean AWS refused the key or its permissions.
var authCodes = map[string]bool{
	"UnauthenticatedException":    true,
	"AccessDeniedException":       true,
	"UnrecognizedClientException": true,
	"InvalidSignatureException":   true,
	"SignatureDoesNotMatch":       true,
	"ExpiredTokenException":       true,
	"IncompleteSignature":         true,
	"MissingAuthenticationToken":  true,
}

// classify maps an SDK failure onto the connector error classes.
// Lightsail's exceptions are few and broad (InvalidInputException,
// OperationFailureException, ServiceException), so a quota (the account's
// instance limit) and a shortage of capacity are told by their message;
// other codes are classed as the EC2 connector classes AWS codes. Auth
// failures name the credential reference, never the key.
func (p *Provider) classify(op string, err error) error {
	if err == nil || errclass.Classified(err) {
		return err
	}
	var api smithy.APIError
	if !errors.As(err, &api) {
		return errclass.New(errclass.Retryable, ProviderName, op, err)
	}
	code, msg := api.ErrorCode(), strings.ToLower(api.ErrorMessage())
	switch {
	case awsconn.ClassOf(err) == errclass.RateLimited: // before the messages: "Request limit exceeded" is a throttle
		e := errclass.New(errclass.RateLimited, ProviderName, op, err)
		e.RetryAfter = defaultThrottleWait
		return e
	case authCodes[code]:
		return errclass.New(errclass.Permanent, ProviderName, op,
			fmt.Errorf("AWS refused the access key from %s or its permissions: %w", p.cfg.Credentials, err))
	case strings.Contains(msg, "maximum number of") || strings.Contains(msg, "quota") || strings.Contains(msg, "limit exceeded"):
		return errclass.New(errclass.Permanent, ProviderName, op, err)
	case strings.Contains(msg, "capacity") || strings.Contains(msg, "not available in"):
		return errclass.New(errclass.InsufficientCapacity, ProviderName, op, err)
	case strings.Contains(msg, "already in use"):
		// A name of the decision's still held by an instance shutting down.
		return errclass.New(errclass.Retryable, ProviderName, op, err)
	case code == "NotFoundException" || strings.Contains(msg, "does not exist"):
		return errclass.New(errclass.NotFound, ProviderName, op, err)
	case code == "OperationFailureException" || code == "ServiceException" || strings.HasSuffix(code, "SetupInProgressException"):
		return errclass.New(errclass.Retryable, ProviderName, op, err)
	}
	return errclass.New(awsconn.ClassOf(err), ProviderName, op, err)
}
