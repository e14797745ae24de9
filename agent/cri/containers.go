package cri

import (
	"context"
	"fmt"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Container is one container the runtime lists, running or not: the
// kubelet counts exited containers the runtime still holds as users of
// their image.
type Container struct {
	ID, PodSandboxID, Name string
	// ImageID is the image the container runs, as the kubelet resolves it:
	// the CRI image_id where the runtime sets it (CRI v1.30+), else
	// image_ref (containerd 1.6 sets only image_ref, to the image's ID).
	ImageID string
	// ImageRuntimeHandler is the handler of the container's image spec.
	ImageRuntimeHandler string
	State               runtimeapi.ContainerState
}

// ListContainers returns every container the runtime holds.
func (c *Client) ListContainers(ctx context.Context) ([]Container, error) {
	const rpc = "ListContainers"
	resp, err := call(ctx, c, rpc, c.runtime.ListContainers, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return nil, err
	}
	return FromListContainers(resp)
}

// FromListContainers checks a ListContainers answer and returns its
// containers: IDs, sandbox and image set, states CRI defines. A bad answer
// gets a *ResponseError naming the field.
func FromListContainers(resp *runtimeapi.ListContainersResponse) ([]Container, error) {
	const rpc = "ListContainers"
	if err := checkCount(rpc, "containers", len(resp.GetContainers())); err != nil {
		return nil, err
	}
	out := make([]Container, 0, len(resp.GetContainers()))
	for i, ct := range resp.GetContainers() {
		field := fmt.Sprintf("containers[%d]", i)
		if ct.GetId() == "" {
			return nil, &ResponseError{RPC: rpc, Field: field + ".id", Rule: "must not be empty"}
		}
		if ct.GetPodSandboxId() == "" {
			return nil, &ResponseError{RPC: rpc, Field: field + ".pod_sandbox_id", Value: "", Rule: "must not be empty"}
		}
		image := ct.GetImageId()
		if image == "" {
			image = ct.GetImageRef()
		}
		if image == "" {
			return nil, &ResponseError{RPC: rpc, Field: field + ".image_ref", Rule: "must not be empty (nor image_id)"}
		}
		if _, known := runtimeapi.ContainerState_name[int32(ct.GetState())]; !known {
			return nil, &ResponseError{RPC: rpc, Field: field + ".state", Value: fmt.Sprint(int32(ct.GetState())), Rule: "must be a CRI ContainerState"}
		}
		out = append(out, Container{
			ID: ct.GetId(), PodSandboxID: ct.GetPodSandboxId(), Name: ct.GetMetadata().GetName(),
			ImageID: image, ImageRuntimeHandler: ct.GetImage().GetRuntimeHandler(), State: ct.GetState(),
		})
	}
	return out, nil
}

// ImageMounts returns the images a container mounts as volumes (image
// volumes, KEP-4639), which the v1.36 kubelet counts as in use. A runtime
// without image volumes (containerd 1.6) reports none.
func (c *Client) ImageMounts(ctx context.Context, containerID string) ([]string, error) {
	const rpc = "ContainerStatus"
	if containerID == "" {
		return nil, &InputError{Field: "containerID", Value: containerID, Rule: "must not be empty"}
	}
	resp, err := call(ctx, c, rpc, c.runtime.ContainerStatus, &runtimeapi.ContainerStatusRequest{ContainerId: containerID})
	if err != nil {
		return nil, err
	}
	return FromContainerStatus(resp)
}

// FromContainerStatus checks a ContainerStatus answer and returns the
// images its container mounts as volumes.
func FromContainerStatus(resp *runtimeapi.ContainerStatusResponse) ([]string, error) {
	const rpc = "ContainerStatus"
	if resp.GetStatus() == nil {
		return nil, &ResponseError{RPC: rpc, Field: "status", Rule: "must be set"}
	}
	mounts := resp.GetStatus().GetMounts()
	if err := checkCount(rpc, "status.mounts", len(mounts)); err != nil {
		return nil, err
	}
	var images []string
	for _, m := range mounts {
		if img := m.GetImage().GetImage(); img != "" {
			images = append(images, img)
		}
	}
	return images, nil
}

// Sandbox is one pod sandbox the runtime lists.
type Sandbox struct {
	ID, Name, Namespace, UID string
	State                    runtimeapi.PodSandboxState
}

// ListPodSandbox returns every pod sandbox the runtime holds.
func (c *Client) ListPodSandbox(ctx context.Context) ([]Sandbox, error) {
	const rpc = "ListPodSandbox"
	resp, err := call(ctx, c, rpc, c.runtime.ListPodSandbox, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return nil, err
	}
	return FromListPodSandbox(resp)
}

// FromListPodSandbox checks a ListPodSandbox answer and returns its
// sandboxes: IDs set, states CRI defines.
func FromListPodSandbox(resp *runtimeapi.ListPodSandboxResponse) ([]Sandbox, error) {
	const rpc = "ListPodSandbox"
	if err := checkCount(rpc, "items", len(resp.GetItems())); err != nil {
		return nil, err
	}
	out := make([]Sandbox, 0, len(resp.GetItems()))
	for i, sb := range resp.GetItems() {
		field := fmt.Sprintf("items[%d]", i)
		if sb.GetId() == "" {
			return nil, &ResponseError{RPC: rpc, Field: field + ".id", Rule: "must not be empty"}
		}
		if _, known := runtimeapi.PodSandboxState_name[int32(sb.GetState())]; !known {
			return nil, &ResponseError{RPC: rpc, Field: field + ".state", Value: fmt.Sprint(int32(sb.GetState())), Rule: "must be a CRI PodSandboxState"}
		}
		md := sb.GetMetadata()
		out = append(out, Sandbox{ID: sb.GetId(), Name: md.GetName(), Namespace: md.GetNamespace(), UID: md.GetUid(), State: sb.GetState()})
	}
	return out, nil
}

// RunPodSandbox starts a sandbox with the default runtime handler and
// returns its ID.
func (c *Client) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig) (string, error) {
	const rpc = "RunPodSandbox"
	if config.GetMetadata().GetName() == "" {
		return "", &InputError{Field: "config.metadata.name", Rule: "must not be empty"}
	}
	resp, err := call(ctx, c, rpc, c.runtime.RunPodSandbox, &runtimeapi.RunPodSandboxRequest{Config: config})
	if err != nil {
		return "", err
	}
	if resp.GetPodSandboxId() == "" {
		return "", &ResponseError{RPC: rpc, Field: "pod_sandbox_id", Rule: "must not be empty"}
	}
	return resp.GetPodSandboxId(), nil
}

// StopPodSandbox stops a sandbox and every container in it.
func (c *Client) StopPodSandbox(ctx context.Context, id string) error {
	if id == "" {
		return &InputError{Field: "id", Rule: "must not be empty"}
	}
	_, err := call(ctx, c, "StopPodSandbox", c.runtime.StopPodSandbox, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id})
	return err
}

// RemovePodSandbox removes a stopped sandbox and its containers.
func (c *Client) RemovePodSandbox(ctx context.Context, id string) error {
	if id == "" {
		return &InputError{Field: "id", Rule: "must not be empty"}
	}
	_, err := call(ctx, c, "RemovePodSandbox", c.runtime.RemovePodSandbox, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
	return err
}

// CreateContainer creates a container in a sandbox (sandboxConfig is the
// one the sandbox ran with) and returns its ID.
func (c *Client) CreateContainer(ctx context.Context, sandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	const rpc = "CreateContainer"
	switch {
	case sandboxID == "":
		return "", &InputError{Field: "sandboxID", Rule: "must not be empty"}
	case config.GetImage().GetImage() == "":
		return "", &InputError{Field: "config.image.image", Rule: "must not be empty"}
	}
	resp, err := call(ctx, c, rpc, c.runtime.CreateContainer,
		&runtimeapi.CreateContainerRequest{PodSandboxId: sandboxID, Config: config, SandboxConfig: sandboxConfig})
	if err != nil {
		return "", err
	}
	if resp.GetContainerId() == "" {
		return "", &ResponseError{RPC: rpc, Field: "container_id", Rule: "must not be empty"}
	}
	return resp.GetContainerId(), nil
}

// StartContainer starts a created container.
func (c *Client) StartContainer(ctx context.Context, id string) error {
	if id == "" {
		return &InputError{Field: "id", Rule: "must not be empty"}
	}
	_, err := call(ctx, c, "StartContainer", c.runtime.StartContainer, &runtimeapi.StartContainerRequest{ContainerId: id})
	return err
}

// StopContainer stops a container, killing it after grace. The RPC's
// deadline is the client's timeout plus grace, as the kubelet's.
func (c *Client) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	if id == "" {
		return &InputError{Field: "id", Rule: "must not be empty"}
	}
	if grace < 0 {
		return &InputError{Field: "grace", Value: grace.String(), Rule: "must not be negative"}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout+grace)
	defer cancel()
	_, err := c.runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: int64(grace / time.Second)})
	if err != nil {
		return &RPCError{RPC: "StopContainer", Err: err}
	}
	return nil
}

// RemoveContainer removes a stopped container.
func (c *Client) RemoveContainer(ctx context.Context, id string) error {
	if id == "" {
		return &InputError{Field: "id", Rule: "must not be empty"}
	}
	_, err := call(ctx, c, "RemoveContainer", c.runtime.RemoveContainer, &runtimeapi.RemoveContainerRequest{ContainerId: id})
	return err
}
