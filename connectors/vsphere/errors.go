package vsphere

import (
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

// classify wraps err as a *errclass.Error for op.
func (p *Provider) classify(op string, err error) error {
	if err == nil || errclass.Classified(err) {
		return err
	}
	return errclass.New(ClassOf(err), ProviderName, op, err)
}
