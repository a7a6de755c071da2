package vsphere

import (
	"errors"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/hanzoai/visor-fleet/connectors"
)

// ClassOf classifies an error from a vSphere call by its fault, whether it
// came back from the method (a SOAP fault) or from the task.
func ClassOf(err error) connectors.ErrorClass {
	var f types.BaseMethodFault
	if _, ok := fault.As(err, &f); ok {
		return classOfFault(f)
	}
	return connectors.Retryable // network and other unclassified failures
}

func classOfFault(f types.BaseMethodFault) connectors.ErrorClass {
	// Transient faults first: some are also InvalidState or VimFault kinds.
	if fault.IsTransientError(f) {
		return connectors.Retryable
	}
	switch f.(type) {
	case *types.ManagedObjectNotFound, *types.NotFound:
		return connectors.NotFound
	case types.BaseInsufficientResourcesFault:
		return connectors.InsufficientCapacity
	// NotAuthenticated is a SecurityError, but it means the session lapsed:
	// the next attempt logs in again.
	case *types.NotAuthenticated:
		return connectors.Retryable
	case types.BaseInvalidLogin, types.BaseSecurityError:
		return connectors.Permanent
	case types.BaseInvalidState, *types.ResourceInUse, types.BaseHostConnectFault,
		types.BaseTimedout, *types.RequestCanceled:
		return connectors.Retryable
	case types.BaseInvalidArgument, types.BaseInvalidRequest, types.BaseNotSupported,
		*types.InvalidName, *types.DuplicateName, *types.AlreadyExists, *types.InvalidDatastore:
		return connectors.Permanent
	}
	return connectors.Retryable
}

// classify wraps err as a *connectors.Error for op.
func (p *Provider) classify(op string, err error) error {
	if err == nil {
		return nil
	}
	var typed *connectors.Error
	if errors.As(err, &typed) {
		return err
	}
	return connectors.NewError(ClassOf(err), ProviderName, op, err)
}
