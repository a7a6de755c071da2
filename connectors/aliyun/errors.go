package aliyun

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/alibabacloud-go/tea/dara"
	"github.com/alibabacloud-go/tea/tea"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// defaultThrottleWait: ECS's Throttling answers carry no wait; its flow
// control counts per second, so a few seconds clear it.
const defaultThrottleWait = 5 * time.Second

// classify maps an SDK failure onto the connector error classes by ECS's
// documented error codes, then by HTTP status. Auth failures name the
// credential reference, never the key.
func (p *Provider) classify(op string, err error) error {
	if err == nil || errclass.Classified(err) {
		return err
	}
	var sdk *tea.SDKError
	if !errors.As(err, &sdk) {
		// No answer (connection refused, timeout): transient.
		return errclass.New(errclass.Retryable, ProviderName, op, err)
	}
	code, status := dara.StringValue(sdk.Code), dara.IntValue(sdk.StatusCode)
	switch class := classOfCode(code, status); class {
	case errclass.RateLimited:
		e := errclass.New(class, ProviderName, op, err)
		e.RetryAfter = defaultThrottleWait
		return e
	case "auth":
		return errclass.New(errclass.Permanent, ProviderName, op,
			fmt.Errorf("the AccessKey from %s was refused (%s): %w", p.cfg.Credentials, code, err))
	default:
		return errclass.New(class, ProviderName, op, err)
	}
}

func classOfCode(code string, status int) errclass.Class {
	has := func(prefixes ...string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(code, p) {
				return true
			}
		}
		return false
	}
	switch {
	case has("Throttling"):
		return errclass.RateLimited
	case has("InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidAccessKeySecret", "IncompleteSignature", "Forbidden", "NoPermission", "InvalidSecurityToken"):
		return "auth"
	case has("OperationDenied.NoStock", "Zone.NotOnSale", "InvalidResourceType.NotSupported", "InvalidInstanceType.ZoneNotSupported", "ResourceNotAvailable"):
		return errclass.InsufficientCapacity
	case has("QuotaExceed", "Account.Arrearage", "InvalidAccountStatus"):
		return errclass.Permanent // quota and billing: not fixed by retrying
	case strings.HasSuffix(code, ".NotFound"):
		return errclass.NotFound
	case has("IncorrectInstanceStatus", "ServiceUnavailable", "InternalError", "UnknownError", "LastTokenProcessing"):
		return errclass.Retryable
	case status >= 500 || status == 0:
		return errclass.Retryable
	default: // InvalidParameter, IdempotentParameterMismatch, ...
		return errclass.Permanent
	}
}
