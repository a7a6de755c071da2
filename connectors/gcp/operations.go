package gcp

import (
	"context"
	"time"

	compute "google.golang.org/api/compute/v1"
)

// wait follows an operation until it is DONE, with the zone's or the
// global wait method (which itself blocks up to two minutes server-side),
// and returns its errors as an *opError.
func (p *Provider) wait(ctx context.Context, op *compute.Operation) error {
	for op.Status != "DONE" {
		var err error
		if op.Zone != "" {
			op, err = p.svc.ZoneOperations.Wait(p.cfg.Project, p.cfg.Zone, op.Name).Context(ctx).Do()
		} else {
			op, err = p.svc.GlobalOperations.Wait(p.cfg.Project, op.Name).Context(ctx).Do()
		}
		if err != nil {
			return err
		}
		if op.Status == "DONE" {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(p.poll):
		}
	}
	if op.Error == nil || len(op.Error.Errors) == 0 {
		return nil
	}
	e := &opError{status: int(op.HttpErrorStatusCode)}
	for _, item := range op.Error.Errors {
		e.codes = append(e.codes, item.Code)
		e.msgs = append(e.msgs, item.Message)
	}
	return e
}

// do sends a mutating call and waits for its operation.
func (p *Provider) do(ctx context.Context, call func() (*compute.Operation, error)) error {
	op, err := call()
	if err != nil {
		return err
	}
	return p.wait(ctx, op)
}
