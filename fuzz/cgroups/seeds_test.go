package cgroups

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/properties/cgroupscheck"
)

// seedOutcome is what a seed is for: the fields Build's error names (every
// one of a joined error's), or, for a node Build accepts, whether it holds
// a raw pod (no model comparison), whether its pods fit (steady) and the
// field a rendering error names.
type seedOutcome struct {
	refused     []string
	raw, steady bool
	renderField string
}

func outcome(in *node) seedOutcome {
	h, err := cgroups.Build(in.cfg, in.pods)
	var fe *cgroups.FieldError
	if err != nil {
		var out seedOutcome
		var joined interface{ Unwrap() []error }
		if errors.As(err, &joined) {
			for _, e := range joined.Unwrap() {
				if errors.As(e, &fe) {
					out.refused = append(out.refused, fe.Field)
				}
			}
		} else if errors.As(err, &fe) {
			out.refused = []string{fe.Field}
		}
		return out
	}
	out := seedOutcome{raw: in.raw, steady: !in.raw && cgroupscheck.Fits(in.cfg, in.pods)}
	if _, err := h.Files(cgroups.V2); errors.As(err, &fe) {
		out.renderField = fe.Field
	}
	return out
}

// TestSeedCorpus pins what each seed exercises, so that a change of the
// decoder that moves a seed elsewhere is seen (TestSeedWorkedExampleSeed
// pins seed 004's worked example further).
func TestSeedCorpus(t *testing.T) {
	for name, want := range map[string]seedOutcome{
		// Seed 004's node, 3 CPUs and 8 GiB with --qos-reserved=memory=100 %,
		// and its three pods, one of each class.
		"seed004-worked-example": {steady: true},
		// systemd under a cgroup root, a 10ms period, Memory QoS with
		// TieredReservation, qos-reserved 50 %, reservations, 2Mi and 1Gi
		// pages; a Burstable pod with a regular init container, a sidecar,
		// hugepages named both ways (hugepages-2Mi, hugepages-2048Ki) and
		// overhead; a pod Guaranteed by its pod-level resources whose UID
		// systemd escapes to the first pod's (in another tier); a pod with
		// an empty spec.resources, BestEffort with the gate on.
		"systemd-sidecars-podlevel-memoryqos": {steady: true},
		// Quantities present and 0, at core's bounds and below one share, on
		// a node of 300 CPUs (kubepods capped at 262144 shares) and of
		// MaxQuantity memory; the pods do not fit.
		"zero-and-bounds": {},
		// A 1ms CFS period (the quota floor gives small limits more than
		// they ask: finding CG-F1), the PodLevelResources gate off with an
		// empty spec.resources, kubepods sized to capacity, Memory QoS under
		// the None policy, linear container weights, 64Ki pages, a nodefs
		// threshold and one that reserves nothing, qos-reserved 0 %.
		"period-1ms-gate-off": {steady: true},
		// A Guaranteed pod that does not fit under qos-reserved 100 %: the
		// burstable tier's memory limit goes negative and rendering refuses
		// it.
		"qos-reserved-overcommitted": {renderField: "memory"},
		// One Burstable pod asking for 8 GiB + 1 byte of an 8 GiB node with
		// --qos-reserved=memory=100 %: the besteffort tier's limit comes to
		// -1, which core renders as no limit and the model as "-1" on v2.
		// The pods do not fit, so the model is not asked (the target's
		// first find).
		"overcommitted-tier-minus-one": {},
		// A request above its limit, which the API server refuses: Build
		// accepts it, and the model is not asked.
		"raw-request-above-limit": {raw: true},
		// Reservations and hard eviction above capacity: the kubelet's
		// node-allocatable message.
		"reservations-above-capacity": {refused: []string{"nodeAllocatable"}},
		// Ten bad config fields at once, every one named.
		"bad-config-fields": {refused: []string{"cgroupDriver", "cgroupRoot", "cpuCFSQuotaPeriod", "qosReserved[memory]",
			"capacity[memory]", "systemReserved[hugepages-2Mi]", "evictionHard[0]", "hugePageSizes[0]", "capacity[hugepages-1Gi]", "maxPods"}},
		// A container asking for a page size the host does not have.
		"hugepages-not-on-host": {refused: []string{"pods[0].containers[0].requests[hugepages-2Mi]"}},
		// A second pod with the first one's UID.
		"duplicate-uid": {refused: []string{"pods[1].uid"}},
		// uid-0 and uid_0, both Burstable: one slice under systemd.
		"systemd-uid-collision": {refused: []string{"pods"}},
		// Two pods on a kubelet with maxPods 1.
		"over-maxpods": {refused: []string{"pods"}},
	} {
		t.Run(name, func(t *testing.T) {
			in, err := readSeed(name)
			if err != nil {
				t.Fatal(err)
			}
			if got := outcome(in); !reflect.DeepEqual(got, want) {
				t.Fatalf("outcome %+v, want %+v\n%s", got, want, in)
			}
		})
	}
}

// TestSeedWorkedExampleSeed: the seed decodes to seed 004's node (3 CPUs,
// 8 GiB, --qos-reserved=memory=100%, the default hard eviction) and its
// three pods, and the hierarchy has the numbers the article gives.
func TestSeedWorkedExampleSeed(t *testing.T) {
	in, err := readSeed("seed004-worked-example")
	if err != nil {
		t.Fatal(err)
	}
	c := cgroups.DefaultConfig()
	c.Capacity = pod.ResourceList{pod.CPU: 3000, pod.Memory: 8 << 30}
	c.SystemReserved, c.KubeReserved = pod.ResourceList{}, pod.ResourceList{}
	hundred := int64(100)
	c.QOSReservedMemoryPercent = &hundred
	both := func(cpu, mem int64) pod.ResourceList { return pod.ResourceList{pod.CPU: cpu, pod.Memory: mem} }
	pods := []*pod.Pod{
		{UID: "uid-0", Containers: []pod.Container{
			{Name: "app-0", Requests: both(1000, 1<<30), Limits: both(1000, 1<<30)},
			{Name: "app-1", Requests: both(1000, 1<<30), Limits: both(2000, 2<<30)},
		}},
		{UID: "uid-1", Containers: []pod.Container{{Name: "app-0", Requests: both(1000, 1<<30), Limits: both(1000, 1<<30)}}},
		{UID: "uid-2", Containers: []pod.Container{{Name: "app-0", Requests: pod.ResourceList{}, Limits: pod.ResourceList{}}}},
	}
	for _, p := range pods {
		p.Name, p.Namespace, p.Phase = p.UID, "default", pod.Running
	}
	if !reflect.DeepEqual(in.cfg, c) || !reflect.DeepEqual(in.pods, pods) {
		t.Fatalf("the seed decodes to\n%s\nwant seed 004's node", in)
	}
	h, err := cgroups.Build(in.cfg, in.pods)
	if err != nil {
		t.Fatal(err)
	}
	for path, w := range map[string][2]int64{ // shares, memory limit (0: none)
		"kubepods":                          {3072, 8 << 30},
		"kubepods/burstable":                {2048, 7 << 30},
		"kubepods/besteffort":               {2, 5 << 30},
		"kubepods/poduid-1":                 {1024, 1 << 30},
		"kubepods/burstable/poduid-0":       {2048, 3 << 30},
		"kubepods/besteffort/poduid-2":      {2, 0},
		"kubepods/burstable/poduid-0/app-1": {1024, 2 << 30},
	} {
		cg, ok := h.Lookup(path)
		if !ok {
			t.Fatalf("no cgroup %s", path)
		}
		var mem int64
		if cg.Config.Memory != nil {
			mem = *cg.Config.Memory
		}
		if got := [2]int64{int64(*cg.Config.CPUShares), mem}; got != w {
			t.Errorf("%s: shares and memory %v, the seed says %v", path, got, w)
		}
	}
}

// readSeed decodes a corpus file of FuzzCgroupsBuild, in the "go test fuzz
// v1" format with one []byte. It is written out here rather than taken from
// fuzz/libfuzzer, whose Go parser would add its coverage counters to the
// fuzzing binary (fuzz/doc.go).
func readSeed(name string) (*node, error) {
	b, err := os.ReadFile("testdata/fuzz/FuzzCgroupsBuild/" + name)
	if err != nil {
		return nil, err
	}
	header, arg, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	quoted, ok := strings.CutPrefix(arg, "[]byte(")
	quoted, ok2 := strings.CutSuffix(quoted, ")")
	if header != "go test fuzz v1" || !ok || !ok2 {
		return nil, fmt.Errorf("%s: not a go test fuzz v1 file with one []byte", name)
	}
	s, err := strconv.Unquote(quoted)
	return decodeNode([]byte(s)), err
}
