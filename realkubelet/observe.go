package realkubelet

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
	"sigs.k8s.io/yaml"

	"github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
)

// rpcTimeout bounds each request the observers make.
const rpcTimeout = 5 * time.Second

// Healthz asks the kubelet's healthz endpoint; nil means it answered "ok".
func (n *Node) Healthz(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	body, err := get(ctx, n.healthClient, "http://127.0.0.1:"+strconv.Itoa(HealthzPort)+"/healthz")
	if err != nil {
		return err
	}
	if string(body) != "ok" {
		return fmt.Errorf("realkubelet: healthz answered %q", body)
	}
	return nil
}

// newServerClient reaches the kubelet's :10250 server, whose certificate
// it signed itself at start: there is no CA to verify it against, and the
// connection never leaves 127.0.0.1.
func newServerClient() *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
}

func get(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("realkubelet: GET %s: %s: %s", url, resp.Status, body)
	}
	return body, nil
}

// Pods lists the pods the kubelet runs, from its /pods endpoint: each
// with its status as the kubelet sees it (phase, reason, message,
// container statuses with restarts and readiness).
func (n *Node) Pods(ctx context.Context) ([]corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	body, err := get(ctx, n.serverClient, "https://127.0.0.1:"+strconv.Itoa(ServerPort)+"/pods")
	if err != nil {
		return nil, err
	}
	var list corev1.PodList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("realkubelet: decoding /pods: %w", err)
	}
	return list.Items, nil
}

// StaticPodName is the name the kubelet gives the static pod of a
// manifest whose pod is named name.
func StaticPodName(name string) string { return name + "-" + NodeName }

// Pod is the pod of the manifest whose pod is named name, from /pods;
// found is false when the kubelet does not list it.
func (n *Node) Pod(ctx context.Context, name string) (pod corev1.Pod, found bool, err error) {
	pods, err := n.Pods(ctx)
	if err != nil {
		return corev1.Pod{}, false, err
	}
	i := slices.IndexFunc(pods, func(p corev1.Pod) bool { return p.Name == StaticPodName(name) })
	if i < 0 {
		return corev1.Pod{}, false, nil
	}
	return pods[i], true, nil
}

// WaitPod polls /pods until the pod of the manifest named name satisfies
// cond, and returns it; it fails after limit with the last status seen.
func (n *Node) WaitPod(ctx context.Context, name string, limit time.Duration, cond func(corev1.Pod) bool) (corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var last string
	for {
		pod, found, err := n.Pod(ctx, name)
		switch {
		case err != nil:
			last = err.Error()
		case !found:
			last = "not listed"
		case cond(pod):
			return pod, nil
		default:
			status, _ := json.Marshal(pod.Status)
			last = string(status)
		}
		select {
		case <-ctx.Done():
			return corev1.Pod{}, fmt.Errorf("realkubelet: pod %s: condition not met after %v; last seen: %s", StaticPodName(name), limit, last)
		case <-tick.C:
		}
	}
}

// WriteStaticPod writes pod's manifest into the manifest directory under
// its name. It writes a dotfile (which the kubelet ignores) and renames
// it, because the kubelet reads a file that is still being written.
func (n *Node) WriteStaticPod(pod *corev1.Pod) error {
	if pod.Name == "" {
		return errors.New("realkubelet: a static pod needs a name")
	}
	b, err := yaml.Marshal(pod)
	if err != nil {
		return err
	}
	tmp := filepath.Join(n.ManifestDir, "."+pod.Name+".yaml")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, n.manifestPath(pod.Name))
}

// RemoveStaticPod removes the manifest of the pod named name: the kubelet
// then kills the pod.
func (n *Node) RemoveStaticPod(name string) error {
	return os.Remove(n.manifestPath(name))
}

func (n *Node) manifestPath(name string) string {
	return filepath.Join(n.ManifestDir, name+".yaml")
}

// podResources runs f on a client of the kubelet's PodResources API.
func (n *Node) podResources(ctx context.Context, f func(context.Context, podresourcesv1.PodResourcesListerClient) error) error {
	conn, err := grpc.NewClient("unix://"+filepath.Join(n.RootDir, "pod-resources", "kubelet.sock"),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	return f(ctx, podresourcesv1.NewPodResourcesListerClient(conn))
}

// PodResources lists, through the PodResources API's List, the resources
// the kubelet assigned to each container of each running pod.
func (n *Node) PodResources(ctx context.Context) ([]*podresourcesv1.PodResources, error) {
	var pods []*podresourcesv1.PodResources
	err := n.podResources(ctx, func(ctx context.Context, c podresourcesv1.PodResourcesListerClient) error {
		resp, err := c.List(ctx, &podresourcesv1.ListPodResourcesRequest{})
		if err != nil {
			return fmt.Errorf("realkubelet: PodResources List: %w", err)
		}
		pods = resp.GetPodResources()
		return nil
	})
	return pods, err
}

// Allocatable is GetAllocatableResources' devices: device IDs by resource
// name, each list sorted.
func (n *Node) Allocatable(ctx context.Context) (map[string][]string, error) {
	devices := map[string][]string{}
	err := n.podResources(ctx, func(ctx context.Context, c podresourcesv1.PodResourcesListerClient) error {
		resp, err := c.GetAllocatableResources(ctx, &podresourcesv1.AllocatableResourcesRequest{})
		if err != nil {
			return fmt.Errorf("realkubelet: PodResources GetAllocatableResources: %w", err)
		}
		for _, d := range resp.GetDevices() {
			devices[d.GetResourceName()] = append(devices[d.GetResourceName()], d.GetDeviceIds()...)
		}
		return nil
	})
	for _, ids := range devices {
		slices.Sort(ids)
	}
	return devices, err
}

// ContainerDevices is what PodResources List says a container holds:
// device IDs by resource name, each list sorted. pod is the static pod's
// name in its manifest.
func (n *Node) ContainerDevices(ctx context.Context, pod, container string) (map[string][]string, error) {
	pods, err := n.PodResources(ctx)
	if err != nil {
		return nil, err
	}
	devices := map[string][]string{}
	for _, p := range pods {
		if p.GetName() != StaticPodName(pod) {
			continue
		}
		for _, c := range p.GetContainers() {
			if c.GetName() != container {
				continue
			}
			for _, d := range c.GetDevices() {
				devices[d.GetResourceName()] = append(devices[d.GetResourceName()], d.GetDeviceIds()...)
			}
		}
	}
	for _, ids := range devices {
		slices.Sort(ids)
	}
	return devices, nil
}

// Checkpoint reads and decodes the device manager's checkpoint file, as the
// kubelet would at its next start (checksum checked). Its bytes change
// from one write to the next (map order), so compare what it decodes to.
func (n *Node) Checkpoint() (checkpoint.Data, error) {
	b, err := os.ReadFile(filepath.Join(n.DevicePluginDir, devicemanager.CheckpointName))
	if errors.Is(err, os.ErrNotExist) {
		return checkpoint.Data{}, checkpoint.ErrNotFound
	}
	if err != nil {
		return checkpoint.Data{}, err
	}
	return checkpoint.Decode(b)
}

// PodCgroup is the pod's cgroup path under the node's cgroupRoot, by its
// QoS class, as the kubelet's cgroupfs driver names it.
func PodCgroup(pod corev1.Pod) string {
	switch pod.Status.QOSClass {
	case corev1.PodQOSGuaranteed:
		return "kubepods/pod" + string(pod.UID)
	default:
		return "kubepods/" + strings.ToLower(string(pod.Status.QOSClass)) + "/pod" + string(pod.UID)
	}
}

// CgroupValue reads one file of a cgroup below the node's cgroupRoot in a
// v1 hierarchy (controller "memory", "cpu", ...), trimmed: the value the
// kubelet wrote, as the kernel reads it back.
func (n *Node) CgroupValue(controller, cgroup, file string) (string, error) {
	b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", controller, n.CgroupRoot, cgroup, file))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
