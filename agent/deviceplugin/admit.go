package deviceplugin

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/pod"
)

// AdmissionError is a pod admission refused because device allocation
// failed: the pod status upstream's topology admit handler sets.
type AdmissionError struct {
	// Reason is always devicemanager.AdmissionFailureReason.
	Reason string
	// Message is "Allocate failed due to <Err>, which is unexpected".
	Message string
	// Err is the allocation's error.
	Err error
}

func (e *AdmissionError) Error() string { return e.Message }

// Unwrap returns the allocation's error.
func (e *AdmissionError) Unwrap() error { return e.Err }

// Admit allocates devices to every container of a pod in upstream's order,
// init containers first, and makes the pod active. On failure it returns an
// *AdmissionError; the pod is not active, and nothing the failed container
// reserved stays reserved.
func (a *Agent) Admit(ctx context.Context, p *pod.Pod) error {
	if p == nil {
		return errors.New("deviceplugin: Admit: pod must not be nil")
	}
	a.mu.Lock()
	a.active[p.UID] = true
	a.mu.Unlock()
	var err error
	for _, c := range p.InitContainers {
		if err = a.allocateContainer(ctx, p, c.Name); err != nil {
			break
		}
	}
	if err == nil {
		for _, c := range p.Containers {
			if err = a.allocateContainer(ctx, p, c.Name); err != nil {
				break
			}
		}
	}
	if err == nil {
		return nil
	}
	// Upstream fails a rejected pod for good, so it stops being active.
	a.mu.Lock()
	delete(a.active, p.UID)
	a.mu.Unlock()
	return &AdmissionError{
		Reason:  devicemanager.AdmissionFailureReason,
		Message: devicemanager.AdmissionFailureMessage(err),
		Err:     err,
	}
}

// allocateContainer is upstream's Allocate for one container, split so that
// no lock is held across an RPC: preferred allocations without the lock, the
// plan under it, Allocate without it, then commit or abort under it.
func (a *Agent) allocateContainer(ctx context.Context, p *pod.Pod, container string) error {
	a.mu.Lock()
	prefRequests := a.core.PreferredAllocationRequests(p, container, a.activePods())
	prefClients := a.clientsFor(len(prefRequests), func(i int) devicemanager.EndpointID { return prefRequests[i].Endpoint })
	a.mu.Unlock()

	preferred := make(map[string]devicemanager.Preference, len(prefRequests))
	for i, req := range prefRequests {
		preferred[req.Resource] = a.preferredAllocation(ctx, prefClients[i], req)
	}

	a.mu.Lock()
	plan, err := a.core.PlanContainer(devicemanager.PlanInput{
		Pod: p, Container: container, ActivePods: a.activePods(), Preferred: preferred,
	})
	a.saveIfDue()
	if err != nil {
		a.mu.Unlock()
		return err
	}
	clients := a.clientsFor(len(plan.Requests), func(i int) devicemanager.EndpointID { return plan.Requests[i].Endpoint })
	a.mu.Unlock()

	answers := make([][]allocresp.ContainerAllocateResponse, 0, len(plan.Requests))
	var failure error
	for i, req := range plan.Requests {
		answer, err := a.allocate(ctx, clients[i], req)
		if err != nil {
			failure = err
			break
		}
		answers = append(answers, answer)
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	if failure != nil {
		err := a.core.Abort(plan.ID, failure)
		a.saveIfDue()
		a.log.Error("Allocate failed", "pod", p.UID, "container", container, "err", err)
		return err
	}
	if err := a.core.Commit(plan.ID, answers); err != nil {
		a.saveIfDue()
		a.log.Error("rejected Allocate answer", "pod", p.UID, "container", container, "err", err)
		return err
	}
	return a.saveIfDue()
}

// clientsFor looks up the connection of each of n endpoints; a connection
// that has ended is nil. a.mu must be held.
func (a *Agent) clientsFor(n int, endpoint func(int) devicemanager.EndpointID) []*pluginClient {
	out := make([]*pluginClient, n)
	for i := range out {
		out[i] = a.clients[endpoint(i)]
	}
	return out
}

// errClosed is the error of an RPC to a connection that ended between the
// plan and the call.
func errClosed(resource string, id devicemanager.EndpointID) error {
	return fmt.Errorf("the connection %d of device plugin %s has closed", id, resource)
}

// preferredAllocation asks the plugin which devices it prefers. Upstream
// takes the first container response's IDs, none when there is none; the
// core ignores IDs that are not free.
func (a *Agent) preferredAllocation(ctx context.Context, c *pluginClient, req devicemanager.PreferredRequest) devicemanager.Preference {
	if c == nil {
		return devicemanager.Preference{Err: errClosed(req.Resource, req.Endpoint)}
	}
	ctx, cancel := context.WithTimeout(ctx, a.opts.AllocateTimeout)
	defer cancel()
	resp, err := c.api.GetPreferredAllocation(ctx, &v1beta1.PreferredAllocationRequest{
		ContainerRequests: []*v1beta1.ContainerPreferredAllocationRequest{{
			AvailableDeviceIDs:   req.Available,
			MustIncludeDeviceIDs: req.MustInclude,
			AllocationSize:       int32(req.Size),
		}},
	})
	if err != nil {
		return devicemanager.Preference{Err: err}
	}
	if rs := resp.GetContainerResponses(); len(rs) > 0 {
		return devicemanager.Preference{DeviceIDs: rs[0].GetDeviceIDs()}
	}
	return devicemanager.Preference{}
}

// allocate makes one Allocate RPC for one container and returns its container
// responses. Zero responses go to the core, which rejects them with
// upstream's error; more than one is rejected here, where upstream would
// silently use the first.
func (a *Agent) allocate(ctx context.Context, c *pluginClient, req devicemanager.AllocateRequest) ([]allocresp.ContainerAllocateResponse, error) {
	if c == nil {
		return nil, errClosed(req.Resource, req.Endpoint)
	}
	ctx, cancel := context.WithTimeout(ctx, a.opts.AllocateTimeout)
	defer cancel()
	resp, err := c.api.Allocate(ctx, &v1beta1.AllocateRequest{
		ContainerRequests: []*v1beta1.ContainerAllocateRequest{{DevicesIds: req.DeviceIDs}},
	})
	if err != nil {
		return nil, err
	}
	rs := resp.GetContainerResponses()
	if len(rs) > 1 {
		return nil, fmt.Errorf("device plugin %s answered Allocate with %d container responses for 1 container request", c, len(rs))
	}
	out := make([]allocresp.ContainerAllocateResponse, 0, len(rs))
	for _, r := range rs {
		out = append(out, fromProto(r))
	}
	return out, nil
}

// fromProto copies the generated message into the core's type.
func fromProto(r *v1beta1.ContainerAllocateResponse) allocresp.ContainerAllocateResponse {
	out := allocresp.ContainerAllocateResponse{Envs: r.GetEnvs(), Annotations: r.GetAnnotations()}
	for _, m := range r.GetMounts() {
		out.Mounts = append(out.Mounts, allocresp.Mount{ContainerPath: m.GetContainerPath(), HostPath: m.GetHostPath(), ReadOnly: m.GetReadOnly()})
	}
	for _, d := range r.GetDevices() {
		out.Devices = append(out.Devices, allocresp.DeviceSpec{ContainerPath: d.GetContainerPath(), HostPath: d.GetHostPath(), Permissions: d.GetPermissions()})
	}
	for _, d := range r.GetCdiDevices() {
		out.CDIDevices = append(out.CDIDevices, allocresp.CDIDevice{Name: d.GetName()})
	}
	return out
}

// StartContainer prepares a container to start (upstream
// GetDeviceRunContainerOptions): it makes the PreStartContainer RPCs of
// plugins that require them, each bounded by upstream's 30 s, allocates again
// if an active pod's container lost its devices, and returns the runtime
// options the plugins' Allocate answers ask for (nil when the container
// holds no devices).
func (a *Agent) StartContainer(ctx context.Context, p *pod.Pod, container string) (*devicemanager.RunContainerOptions, error) {
	a.mu.Lock()
	calls, needsAllocate, err := a.core.PreStartCalls(p, container, a.active[p.UID])
	clients := a.clientsFor(len(calls), func(i int) devicemanager.EndpointID { return calls[i].Endpoint })
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	for i, call := range calls {
		if err := a.preStart(ctx, clients[i], call); err != nil {
			return nil, devicemanager.PreStartFailed(err)
		}
	}
	if needsAllocate {
		if err := a.allocateContainer(ctx, p, container); err != nil {
			return nil, err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.core.RunContainerOptions(p.UID, container), nil
}

func (a *Agent) preStart(ctx context.Context, c *pluginClient, call devicemanager.PreStartCall) error {
	if c == nil {
		return errClosed(call.Resource, call.Endpoint)
	}
	ctx, cancel := context.WithTimeout(ctx, devicemanager.PreStartContainerTimeout)
	defer cancel()
	_, err := c.api.PreStartContainer(ctx, &v1beta1.PreStartContainerRequest{DevicesIds: call.DeviceIDs})
	return err
}
