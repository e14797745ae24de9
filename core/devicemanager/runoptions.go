package devicemanager

import "github.com/nodeproof/nodeproof/core/pod"

// KeyValue is one environment variable or annotation.
type KeyValue struct{ Name, Value string }

// Mount is a host path the runtime mounts into the container.
type Mount struct {
	Name, ContainerPath, HostPath string
	ReadOnly                      bool
}

// DeviceNode is a device node the runtime exposes to the container.
type DeviceNode struct{ PathOnHost, PathInContainer, Permissions string }

// RunContainerOptions are the runtime settings the plugins asked for.
type RunContainerOptions struct {
	Envs        []KeyValue
	Mounts      []Mount
	Devices     []DeviceNode
	Annotations []KeyValue
	CDIDevices  []string
}

// RunContainerOptions merges the Allocate answers of a container's
// resources. The first writer of an environment variable, a mount or device
// path, or an annotation wins, as upstream (which only logs conflicts);
// resources are merged in name order where upstream uses map order. It
// returns nil when the container has no record, e.g. after garbage
// collection.
func (m *Manager) RunContainerOptions(podUID, container string) *RunContainerOptions {
	resources, ok := m.pods[podUID][container]
	if !ok {
		return nil
	}
	opts := &RunContainerOptions{}
	envs := map[string]bool{}
	mounts := map[string]bool{}
	devices := map[string]bool{}
	annotations := map[string]bool{}
	cdi := map[string]bool{}
	for _, r := range sortedKeys(resources) {
		resp := resources[r].response
		for _, k := range sortedKeys(resp.Envs) {
			if !envs[k] {
				envs[k] = true
				opts.Envs = append(opts.Envs, KeyValue{k, resp.Envs[k]})
			}
		}
		for _, mt := range resp.Mounts {
			if !mounts[mt.ContainerPath] {
				mounts[mt.ContainerPath] = true
				opts.Mounts = append(opts.Mounts, Mount{Name: mt.ContainerPath, ContainerPath: mt.ContainerPath, HostPath: mt.HostPath, ReadOnly: mt.ReadOnly})
			}
		}
		for _, d := range resp.Devices {
			if !devices[d.ContainerPath] {
				devices[d.ContainerPath] = true
				opts.Devices = append(opts.Devices, DeviceNode{PathOnHost: d.HostPath, PathInContainer: d.ContainerPath, Permissions: d.Permissions})
			}
		}
		for _, k := range sortedKeys(resp.Annotations) {
			if !annotations[k] {
				annotations[k] = true
				opts.Annotations = append(opts.Annotations, KeyValue{k, resp.Annotations[k]})
			}
		}
		for _, c := range resp.CDIDevices {
			if !cdi[c.Name] {
				cdi[c.Name] = true
				opts.CDIDevices = append(opts.CDIDevices, c.Name)
			}
		}
	}
	return opts
}

// PreStartCall is one PreStartContainer RPC the caller must make before the
// container starts, bounded by PreStartContainerTimeout.
type PreStartCall struct {
	Resource  string
	Endpoint  EndpointID
	DeviceIDs []string
}

// PreStartCalls lists the PreStartContainer RPCs a container needs, in
// resource name order, for plugins that asked for them. needsAllocate is true
// when an active pod's container has a device resource but no devices
// recorded (a restart race upstream covers by allocating again).
func (m *Manager) PreStartCalls(p *pod.Pod, container string, podActive bool) (calls []PreStartCall, needsAllocate bool, err error) {
	c, ok := p.Container(container)
	if !ok {
		return nil, false, newError(KindInvalidInput, "prestart: pod %q has no container %q", p.UID, container)
	}
	for _, name := range c.Limits.Names() {
		r := string(name)
		if !m.isDevicePluginResource(r) || c.Limits[name] == 0 {
			continue
		}
		held := m.containerDevices(p.UID, container, r)
		e, ok := m.endpoints[r]
		if !ok {
			return nil, false, newError(KindEndpointNotFound, "endpoint not found in cache for a registered resource: %s", r)
		}
		if e.options.PreStartRequired {
			if held == nil {
				return nil, false, newError(KindPreStartNoDevices, "no devices found allocated in local cache for pod %s, container %s, resource %s", p.UID, container, r)
			}
			calls = append(calls, PreStartCall{Resource: r, Endpoint: e.id, DeviceIDs: held.sorted()})
		}
		if podActive && held == nil {
			needsAllocate = true
		}
	}
	return calls, needsAllocate, nil
}
