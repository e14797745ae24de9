package realkubelet

import (
	"os"

	"sigs.k8s.io/yaml"
)

// Ports the kubelet listens on, on 127.0.0.1 only. They are the kubelet's
// defaults: the harness runs one node at a time, and Start refuses to run
// beside anything already listening there.
const (
	HealthzPort = 10248
	ServerPort  = 10250
)

// kubeletConfiguration is the part of the kubelet's
// KubeletConfiguration (kubelet.config.k8s.io/v1beta1) the harness sets.
// It is the harness's own type, with the upstream field names, so that the
// root module does not depend on k8s.io/component-base for one file.
type kubeletConfiguration struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`

	StaticPodPath      string `json:"staticPodPath"`
	FileCheckFrequency string `json:"fileCheckFrequency"`
	SyncFrequency      string `json:"syncFrequency"`

	CgroupDriver           string   `json:"cgroupDriver"`
	CgroupsPerQOS          bool     `json:"cgroupsPerQOS"`
	CgroupRoot             string   `json:"cgroupRoot"`
	EnforceNodeAllocatable []string `json:"enforceNodeAllocatable"`
	FailSwapOn             bool     `json:"failSwapOn"`
	FailCgroupV1           bool     `json:"failCgroupV1"`

	ContainerRuntimeEndpoint string `json:"containerRuntimeEndpoint"`
	ImageServiceEndpoint     string `json:"imageServiceEndpoint"`
	PodLogsDir               string `json:"podLogsDir"`
	VolumePluginDir          string `json:"volumePluginDir"`

	Authentication authentication `json:"authentication"`
	Authorization  authorization  `json:"authorization"`
	ReadOnlyPort   int            `json:"readOnlyPort"`
	Address        string         `json:"address"`
	Port           int            `json:"port"`
	HealthzAddress string         `json:"healthzBindAddress"`
	HealthzPort    int            `json:"healthzPort"`

	SerializeImagePulls         bool              `json:"serializeImagePulls"`
	EvictionHard                map[string]string `json:"evictionHard"`
	ImageGCHighThresholdPercent int               `json:"imageGCHighThresholdPercent"`
	ImageGCLowThresholdPercent  int               `json:"imageGCLowThresholdPercent"`
	ResolvConf                  string            `json:"resolvConf"`
	CPUManagerPolicy            string            `json:"cpuManagerPolicy"`
	MemoryManagerPolicy         string            `json:"memoryManagerPolicy"`
	TopologyManagerPolicy       string            `json:"topologyManagerPolicy"`
	CrashLoopBackOff            crashLoopBackOff  `json:"crashLoopBackOff"`
}

type crashLoopBackOff struct {
	MaxContainerRestartPeriod string `json:"maxContainerRestartPeriod"`
}

type authentication struct {
	Anonymous struct {
		Enabled bool `json:"enabled"`
	} `json:"anonymous"`
	Webhook struct {
		Enabled bool `json:"enabled"`
	} `json:"webhook"`
}

type authorization struct {
	Mode string `json:"mode"`
}

// writeConfig writes the node's KubeletConfiguration to n.configPath.
func (n *Node) writeConfig() error {
	c := kubeletConfiguration{
		APIVersion: "kubelet.config.k8s.io/v1beta1",
		Kind:       "KubeletConfiguration",
		// Static pods are the only pod source without an API server; the
		// directory is read every second, so a manifest's arrival is seen
		// within a second of its rename.
		StaticPodPath:      n.ManifestDir,
		FileCheckFrequency: "1s",
		SyncFrequency:      "10s",
		CgroupDriver:       "cgroupfs",
		CgroupsPerQOS:      true,
		CgroupRoot:         n.CgroupRoot,
		// Node allocatable is enforced on kubepods, so its limits are there
		// to read as a real node has them.
		EnforceNodeAllocatable: []string{"pods"},
		FailSwapOn:             false,
		// From v1.35 the kubelet refuses cgroup v1 unless told otherwise.
		FailCgroupV1:             false,
		ContainerRuntimeEndpoint: "unix://" + n.Containerd.Socket,
		ImageServiceEndpoint:     "unix://" + n.Containerd.Socket,
		PodLogsDir:               n.PodLogsDir,
		VolumePluginDir:          n.VolumePluginDir,
		Authorization:            authorization{Mode: "AlwaysAllow"},
		ReadOnlyPort:             0,
		Address:                  "127.0.0.1",
		Port:                     ServerPort,
		HealthzAddress:           "127.0.0.1",
		HealthzPort:              HealthzPort,
		SerializeImagePulls:      false,
		// A test host's disks and memory are whatever they are: thresholds
		// this loose never evict the node's pods for the host's sake.
		EvictionHard: map[string]string{
			"memory.available":  "100Mi",
			"nodefs.available":  "1%",
			"imagefs.available": "1%",
			"nodefs.inodesFree": "1%",
		},
		ImageGCHighThresholdPercent: 99,
		ImageGCLowThresholdPercent:  98,
		// No DNS for pods: they are on the host network.
		ResolvConf:            "",
		CPUManagerPolicy:      "none",
		MemoryManagerPolicy:   "None",
		TopologyManagerPolicy: "none",
		// A container that exits, or that its liveness probe has the
		// kubelet kill, is started again after a back-off that doubles
		// from 10 s to 5 min; capped at 1 s (KubeletCrashLoopBackOffMax,
		// beta and on from v1.35), a scenario sees each restart within
		// its settle bound however often the container went.
		CrashLoopBackOff: crashLoopBackOff{MaxContainerRestartPeriod: "1s"},
	}
	// The node is reached by anonymous requests only: no API server issues
	// credentials, and it listens on 127.0.0.1 alone.
	c.Authentication.Anonymous.Enabled = true
	c.Authentication.Webhook.Enabled = false
	b, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	return os.WriteFile(n.configPath, b, 0o600)
}
