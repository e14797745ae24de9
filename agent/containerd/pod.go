package containerd

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Pod is a sandbox with one container, started through CRI.
type Pod struct {
	SandboxID, ContainerID string
}

// SandboxConfig is a host-network sandbox (no CNI needed) named name,
// under the containerd's own cgroup parent.
func (c *Containerd) SandboxConfig(name string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Uid: "uid-" + name, Namespace: "nodeproof"},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: c.CgroupParent,
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
			},
		},
	}
}

// RunPod starts a sandbox named name and in it one container of image (a
// name or an ID) running cmd, as the kubelet does: RunPodSandbox,
// CreateContainer, StartContainer. The teardown removes it if the test
// does not.
func (c *Containerd) RunPod(ctx context.Context, name, image string, cmd ...string) (Pod, error) {
	sbConfig := c.SandboxConfig(name)
	sandboxID, err := c.CRI.RunPodSandbox(ctx, sbConfig)
	if err != nil {
		return Pod{}, err
	}
	containerID, err := c.CRI.CreateContainer(ctx, sandboxID, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name},
		Image:    &runtimeapi.ImageSpec{Image: image},
		Command:  cmd,
		Linux: &runtimeapi.LinuxContainerConfig{SecurityContext: &runtimeapi.LinuxContainerSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
		}},
	}, sbConfig)
	if err != nil {
		return Pod{SandboxID: sandboxID}, err
	}
	if err := c.CRI.StartContainer(ctx, containerID); err != nil {
		return Pod{SandboxID: sandboxID, ContainerID: containerID}, err
	}
	return Pod{SandboxID: sandboxID, ContainerID: containerID}, nil
}

// RemovePod stops and removes the pod's sandbox, and with it its container.
func (c *Containerd) RemovePod(ctx context.Context, p Pod) error {
	if err := c.CRI.StopPodSandbox(ctx, p.SandboxID); err != nil {
		return err
	}
	return c.CRI.RemovePodSandbox(ctx, p.SandboxID)
}
