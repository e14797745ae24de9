package kube

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strconv"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
)

// hostMeminfo is where the node's memory comes from when neither the
// caller nor a Node manifest gives it: MemTotal, which is what the kubelet
// (cadvisor) reports as the machine's memory capacity.
const hostMeminfo = "/proc/meminfo"

// HostSource says where this host's capacity of a resource is read from.
func HostSource(name pod.ResourceName) string {
	if name == pod.CPU {
		return "the CPUs this process may use"
	}
	return hostMeminfo + " MemTotal"
}

// hostCPU is the CPUs this process may use, in millicores, as the kubelet
// counts the machine's.
func hostCPU() (int64, error) { return int64(runtime.NumCPU()) * 1000, nil }

// hostMemory is MemTotal of this host's /proc/meminfo, in bytes.
func hostMemory() (int64, error) {
	f, err := os.Open(hostMeminfo)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return memTotal(f)
}

// memTotalLine matches the MemTotal line of /proc/meminfo, in KiB.
var memTotalLine = regexp.MustCompile(`^MemTotal:\s+(\d+) kB$`)

// memTotal reads the MemTotal line of a /proc/meminfo, in bytes, within
// the bound core/cgroups takes.
func memTotal(meminfo io.Reader) (int64, error) {
	sc := bufio.NewScanner(meminfo)
	for sc.Scan() {
		if m := memTotalLine.FindStringSubmatch(sc.Text()); m != nil {
			kib, err := strconv.ParseInt(m[1], 10, 64)
			if err != nil || kib <= 0 || kib > cgroups.MaxQuantity>>10 {
				return 0, fmt.Errorf("%s: MemTotal %q is not a usable size", hostMeminfo, m[1])
			}
			return kib << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s has no MemTotal line", hostMeminfo)
}
