package vsphere

import (
	"fmt"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// ClassOf classifies an error from a vSphere call by its fault, whether it
// came back from the method (a SOAP fault) or from the task.
func ClassOf(err error) errclass.Class {
	var f types.BaseMethodFault
	if _, ok := fault.As(err, &f); ok {
		return classOfFault(f)
	}
	return errclass.Retryable // network and other unclassified failures
}

func classOfFault(f types.BaseMethodFault) errclass.Class {
	// Transient faults first: some are also InvalidState or VimFault kinds.
	if fault.IsTransientError(f) {
		return errclass.Retryable
	}
	switch f.(type) {
	case *types.ManagedObjectNotFound, *types.NotFound:
		return errclass.NotFound
	case types.BaseInsufficientResourcesFault:
		return errclass.InsufficientCapacity
	// NotAuthenticated is a SecurityError, but it means the session lapsed:
	// the next attempt logs in again.
	case *types.NotAuthenticated:
		return errclass.Retryable
	case types.BaseInvalidLogin, types.BaseSecurityError:
		return errclass.Permanent
	case types.BaseInvalidState, *types.ResourceInUse, types.BaseHostConnectFault,
		types.BaseTimedout, *types.RequestCanceled:
		return errclass.Retryable
	case types.BaseInvalidArgument, types.BaseInvalidRequest, types.BaseNotSupported,
		*types.InvalidName, *types.DuplicateName, *types.AlreadyExists, *types.InvalidDatastore:
		return errclass.Permanent
	}
	return errclass.Retryable
}

// classify wraps err as a *errclass.Error for op. When vCenter refused the
// login or its permissions, the message names the credential reference
// (never the secret), so whoever reads it knows which one to fix.
func (p *Provider) classify(op string, err error) error {
	if err == nil || errclass.Classified(err) {
		return err
	}
	class := ClassOf(err)
	if refusedCredential(err) {
		err = fmt.Errorf("vCenter refused credential %s or its permissions: %w", p.cfg.Credentials, err)
	}
	return errclass.New(class, ProviderName, op, err)
}

// refusedCredential reports a login or permission fault; NotAuthenticated
// (a lapsed session) is not one: the next attempt logs in again.
func refusedCredential(err error) bool {
	var f types.BaseMethodFault
	if _, ok := fault.As(err, &f); !ok {
		return false
	}
	switch f.(type) {
	case *types.NotAuthenticated:
		return false
	case types.BaseInvalidLogin, types.BaseSecurityError:
		return true
	}
	return false
}
