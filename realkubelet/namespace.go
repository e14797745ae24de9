package realkubelet

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nodeproof/nodeproof/verify"
)

// DevicePluginPath is where the kubelet serves kubelet.sock and dials
// plugins, fixed in its code whatever --root-dir says. Inside the node's
// mount namespace it is the node's own DevicePluginDir.
const DevicePluginPath = "/var/lib/kubelet/device-plugins"

// overlaid are the host directories the kubelet writes below on its own
// account (/var/lib/kubelet, /var/log/containers,
// /usr/libexec/kubernetes). Inside the namespace each is an overlay whose
// lower layer is the host's directory, read only, and whose upper layer is
// in the node's directory, so the kubelet sees the host's files and its
// writes stay the node's.
var overlaid = []string{"/var/lib", "/var/log", "/usr/libexec"}

// KernelFlag is a kernel tunable the kubelet sets at start to a value it
// wants (container_manager_linux.go, setupKernelTunables) unless
// protectKernelDefaults is on, which would instead refuse to start on a
// host that differs.
type KernelFlag struct {
	// Path is the flag under /proc/sys.
	Path string
	// Want is the value the kubelet sets.
	Want int
}

// KernelFlags are the flags the kubelet v1.36 rewrites. Inside the node's
// namespace each is covered by a read-only file holding Want, so the
// kubelet reads its own value and the host keeps its own.
var KernelFlags = []KernelFlag{
	{"vm/overcommit_memory", 1},
	{"vm/panic_on_oom", 0},
	{"kernel/panic", 10},
	{"kernel/panic_on_oops", 1},
	{"kernel/keys/root_maxkeys", 1000000},
	{"kernel/keys/root_maxbytes", 25000000},
}

// namespaceScript is what runs as the first process of the kubelet's mount
// namespace (a shell started with CLONE_NEWNS unshared; Go makes / private
// in it, so no mount below propagates to the host), before it execs the
// kubelet as the same process. It writes nothing outside the node's
// directory: the mountpoints exist on the host, or are made inside an
// overlay.
func (n *Node) namespaceScript(kubelet string, args []string) (string, error) {
	var b strings.Builder
	b.WriteString("set -e\n")
	for _, dir := range overlaid {
		name := strings.ReplaceAll(strings.TrimPrefix(dir, "/"), "/", "-")
		upper := filepath.Join(n.Dir, "ns", "upper", name)
		work := filepath.Join(n.Dir, "ns", "work", name)
		for _, d := range []string{upper, work} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return "", err
			}
		}
		fmt.Fprintf(&b, "mount -t overlay overlay -o %s %s\n",
			verify.Quote("lowerdir="+dir+",upperdir="+upper+",workdir="+work), verify.Quote(dir))
	}
	fmt.Fprintf(&b, "mkdir -p %s\nmount --bind %s %s\n",
		verify.Quote(DevicePluginPath), verify.Quote(n.DevicePluginDir), verify.Quote(DevicePluginPath))
	for _, f := range KernelFlags {
		file := filepath.Join(n.Dir, "ns", "sysctl", strings.ReplaceAll(f.Path, "/", "_"))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(file, []byte(strconv.Itoa(f.Want)+"\n"), 0o444); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "mount --bind -o ro %s %s\n", verify.Quote(file), verify.Quote(filepath.Join("/proc/sys", f.Path)))
	}
	b.WriteString("exec " + verify.CommandLine(append([]string{kubelet}, args...)...) + "\n")
	return b.String(), nil
}
