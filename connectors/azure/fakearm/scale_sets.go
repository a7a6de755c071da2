package fakearm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v6"
)

// scaleSet is one scale set and its VMs, oldest first.
type scaleSet struct {
	model  armcompute.VirtualMachineScaleSet
	vms    []*armcompute.VirtualMachineScaleSetVM
	nextID int
}

// bind wires the SDK fake's handlers to the store.
func (s *Server) bind() {
	sets := &s.factory.VirtualMachineScaleSetsServer
	sets.Get = s.get
	sets.NewListPager = s.list
	sets.BeginCreateOrUpdate = s.createOrUpdate
	sets.BeginUpdate = s.update
	sets.BeginDelete = s.delete
	sets.BeginDeleteInstances = s.deleteInstances
	s.factory.VirtualMachineScaleSetVMsServer.NewListPager = s.listVMs
}

func (s *Server) get(_ context.Context, _, name string, _ *armcompute.VirtualMachineScaleSetsClientGetOptions) (resp azfake.Responder[armcompute.VirtualMachineScaleSetsClientGetResponse], errResp azfake.ErrorResponder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.take(OpGet); f != nil {
		errResp.SetResponseError(f.Status, f.Code)
		return
	}
	set, ok := s.sets[name]
	if !ok {
		errResp.SetResponseError(http.StatusNotFound, "ResourceNotFound")
		return
	}
	resp.SetResponse(http.StatusOK, armcompute.VirtualMachineScaleSetsClientGetResponse{VirtualMachineScaleSet: clone(set.model)}, nil)
	return
}

func (s *Server) list(string, *armcompute.VirtualMachineScaleSetsClientListOptions) (resp azfake.PagerResponder[armcompute.VirtualMachineScaleSetsClientListResponse]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.take(OpList); f != nil {
		resp.AddResponseError(f.Status, f.Code)
		return
	}
	var page armcompute.VirtualMachineScaleSetListResult
	for _, name := range s.names() {
		page.Value = append(page.Value, to.Ptr(clone(s.sets[name].model)))
	}
	resp.AddPage(http.StatusOK, armcompute.VirtualMachineScaleSetsClientListResponse{VirtualMachineScaleSetListResult: page}, nil)
	return
}

func (s *Server) listVMs(_, name string, _ *armcompute.VirtualMachineScaleSetVMsClientListOptions) (resp azfake.PagerResponder[armcompute.VirtualMachineScaleSetVMsClientListResponse]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.take(OpListVMs); f != nil {
		resp.AddResponseError(f.Status, f.Code)
		return
	}
	set, ok := s.sets[name]
	if !ok {
		resp.AddResponseError(http.StatusNotFound, "ResourceNotFound")
		return
	}
	var page armcompute.VirtualMachineScaleSetVMListResult
	for _, vm := range set.vms {
		page.Value = append(page.Value, to.Ptr(clone(*vm)))
	}
	resp.AddPage(http.StatusOK, armcompute.VirtualMachineScaleSetVMsClientListResponse{VirtualMachineScaleSetVMListResult: page}, nil)
	return
}

func (s *Server) createOrUpdate(_ context.Context, _, name string, model armcompute.VirtualMachineScaleSet, _ *armcompute.VirtualMachineScaleSetsClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.VirtualMachineScaleSetsClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
	type result = armcompute.VirtualMachineScaleSetsClientCreateOrUpdateResponse
	runOp(s, OpCreateOrUpdate, name, true, http.StatusCreated, &resp, &errResp, func(set *scaleSet) (result, *refusal) {
		if model.SKU == nil || model.SKU.Name == nil || model.SKU.Capacity == nil || model.Location == nil {
			return result{}, &refusal{http.StatusBadRequest, "InvalidParameter"}
		}
		if slices.Contains(s.UnavailableSizes, *model.SKU.Name) {
			return result{}, &refusal{http.StatusConflict, "SkuNotAvailable"}
		}
		model.Name = to.Ptr(name)
		model.ID = to.Ptr("/subscriptions/fake/resourceGroups/fake/providers/Microsoft.Compute/virtualMachineScaleSets/" + name)
		if model.Properties == nil {
			model.Properties = &armcompute.VirtualMachineScaleSetProperties{}
		}
		model.Properties.ProvisioningState = to.Ptr("Succeeded")
		set.model = model
		s.reconcile(set)
		return result{VirtualMachineScaleSet: clone(set.model)}, nil
	})
	return
}

func (s *Server) update(_ context.Context, _, name string, patch armcompute.VirtualMachineScaleSetUpdate, _ *armcompute.VirtualMachineScaleSetsClientBeginUpdateOptions) (resp azfake.PollerResponder[armcompute.VirtualMachineScaleSetsClientUpdateResponse], errResp azfake.ErrorResponder) {
	type result = armcompute.VirtualMachineScaleSetsClientUpdateResponse
	// An update answers 200 while it runs.
	runOp(s, OpUpdate, name, false, http.StatusOK, &resp, &errResp, func(set *scaleSet) (result, *refusal) {
		if patch.SKU != nil && patch.SKU.Capacity != nil {
			if *patch.SKU.Capacity > int64(len(set.vms)) && slices.Contains(s.UnavailableSizes, *set.model.SKU.Name) {
				return result{}, &refusal{http.StatusConflict, "SkuNotAvailable"}
			}
			set.model.SKU.Capacity = to.Ptr(*patch.SKU.Capacity)
		}
		for k, v := range patch.Tags {
			set.model.Tags[k] = v
		}
		s.reconcile(set)
		return result{VirtualMachineScaleSet: clone(set.model)}, nil
	})
	return
}

func (s *Server) delete(_ context.Context, _, name string, _ *armcompute.VirtualMachineScaleSetsClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.VirtualMachineScaleSetsClientDeleteResponse], errResp azfake.ErrorResponder) {
	type result = armcompute.VirtualMachineScaleSetsClientDeleteResponse
	runOp(s, OpDelete, name, false, http.StatusAccepted, &resp, &errResp, func(*scaleSet) (result, *refusal) {
		delete(s.sets, name)
		return result{}, nil
	})
	return
}

// deleteInstances removes the named VMs and lowers the capacity by as
// many, as Azure does.
func (s *Server) deleteInstances(_ context.Context, _, name string, ids armcompute.VirtualMachineScaleSetVMInstanceRequiredIDs, _ *armcompute.VirtualMachineScaleSetsClientBeginDeleteInstancesOptions) (resp azfake.PollerResponder[armcompute.VirtualMachineScaleSetsClientDeleteInstancesResponse], errResp azfake.ErrorResponder) {
	type result = armcompute.VirtualMachineScaleSetsClientDeleteInstancesResponse
	runOp(s, OpDeleteInstances, name, false, http.StatusAccepted, &resp, &errResp, func(set *scaleSet) (result, *refusal) {
		before := len(set.vms)
		set.vms = slices.DeleteFunc(set.vms, func(vm *armcompute.VirtualMachineScaleSetVM) bool {
			return slices.ContainsFunc(ids.InstanceIDs, func(id *string) bool { return id != nil && *id == *vm.InstanceID })
		})
		set.model.SKU.Capacity = to.Ptr(*set.model.SKU.Capacity - int64(before-len(set.vms)))
		return result{}, nil
	})
	return
}

// refusal is an error answer an operation gives instead of applying.
type refusal struct {
	status int
	code   string
}

// runOp is one long-running operation on a scale set: an injected fault
// before (or, AfterApply, after) apply, 404 for a missing scale set unless
// the operation creates it, then the answer once it finishes later.
func runOp[T any](s *Server, op, name string, creates bool, pending int, resp *azfake.PollerResponder[T], errResp *azfake.ErrorResponder, apply func(*scaleSet) (T, *refusal)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.take(op)
	if f != nil && !f.AfterApply {
		errResp.SetResponseError(f.Status, f.Code)
		return
	}
	set, ok := s.sets[name]
	if !ok && !creates {
		errResp.SetResponseError(http.StatusNotFound, "ResourceNotFound")
		return
	}
	if !ok {
		set = &scaleSet{}
	}
	result, refused := apply(set)
	if refused != nil {
		errResp.SetResponseError(refused.status, refused.code)
		return
	}
	if !ok {
		s.sets[name] = set
	}
	if f != nil {
		errResp.SetResponseError(f.Status, f.Code)
		return
	}
	// "In progress" PendingPolls times, with the status the API documents
	// for an operation under way.
	for range s.PendingPolls {
		resp.AddNonTerminalResponse(pending, nil)
	}
	resp.SetTerminalResponse(http.StatusOK, result, nil)
}

// reconcile brings the VMs to the capacity: new ones at the end, the
// newest removed first, as a Uniform scale set with default policy does.
func (s *Server) reconcile(set *scaleSet) {
	target := int(*set.model.SKU.Capacity)
	for len(set.vms) < target {
		id := strconv.Itoa(set.nextID)
		set.nextID++
		prefix := ""
		if p := set.model.Properties.VirtualMachineProfile; p != nil && p.OSProfile != nil && p.OSProfile.ComputerNamePrefix != nil {
			prefix = *p.OSProfile.ComputerNamePrefix
		}
		now := time.Now().UTC()
		set.vms = append(set.vms, &armcompute.VirtualMachineScaleSetVM{
			InstanceID: to.Ptr(id),
			Name:       to.Ptr(*set.model.Name + "_" + id),
			Properties: &armcompute.VirtualMachineScaleSetVMProperties{
				OSProfile:         &armcompute.OSProfile{ComputerName: to.Ptr(fmt.Sprintf("%s%06s", prefix, strconv.FormatInt(int64(set.nextID-1), 36)))},
				ProvisioningState: to.Ptr("Succeeded"),
				TimeCreated:       &now,
			},
		})
	}
	if len(set.vms) > target {
		set.vms = set.vms[:target]
	}
}

func (s *Server) names() []string {
	names := make([]string, 0, len(s.sets))
	for n := range s.sets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// clone deep-copies an SDK model through its JSON form.
func clone[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}
