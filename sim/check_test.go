package sim

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/cgroups"
	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"

	"github.com/stretchr/testify/require"
)

// restoreWithOtherAnswer replaces the device manager with one a restart
// would restore from a checkpoint whose first live pod's holding carries
// the Allocate answer other makes of it instead of its own.
func restoreWithOtherAnswer(t *testing.T, s *Sim, other func(checkpoint.PodDevicesEntry) allocresp.ContainerAllocateResponse) {
	t.Helper()
	data := s.kubelet.devices.Checkpoint()
	var running []dm.ContainerRef
	for _, p := range s.livePods() {
		for _, c := range p.containers {
			if c.running {
				running = append(running, dm.ContainerRef{PodUID: p.spec.UID, Container: c.name, Running: true})
			}
		}
	}
	swapped := false
	for i, e := range data.PodDeviceEntries {
		if p := s.pods[e.PodUID]; p != nil && p.live() && !swapped {
			data.PodDeviceEntries[i].AllocResp = allocresp.Marshal(other(e))
			swapped = true
		}
	}
	require.True(t, swapped, "no live pod holds devices")
	m := dm.New(dm.DefaultLimits())
	_, err := m.Restore(data, s.now, running)
	require.NoError(t, err)
	s.kubelet.devices = m
}

// steppedSim is a seeded sim run for the given simulated time with every
// check passing.
func steppedSim(t *testing.T, d time.Duration) *Sim {
	t.Helper()
	s, err := New(DefaultConfig(), NewSeeded(1))
	require.NoError(t, err)
	for s.now.Before(simStart.Add(d)) {
		_, ok := s.Step()
		require.True(t, ok)
		requireFaithful(t, s.Check())
	}
	return s
}

func failed(results []CheckResult) []string {
	var ids []string
	for _, r := range results {
		if r.Err != nil {
			ids = append(ids, r.ID)
			if !strings.HasPrefix(r.Err.Error(), r.ID+": ") {
				ids = append(ids, "message without its ID: "+r.Err.Error())
			}
		}
	}
	return ids
}

func TestCheckOrderIsInvariantsOrder(t *testing.T) {
	s := steppedSim(t, time.Minute)
	results := s.Check()
	require.Len(t, results, len(Invariants()))
	for i, inv := range Invariants() {
		require.Equal(t, inv.ID, results[i].ID)
		require.Equal(t, subsystem, inv.Subsystem, inv.ID)
		require.NotEmpty(t, inv.Statement)
		require.NotEmpty(t, inv.Sources, inv.ID)
	}
}

// TestInvariantSources: every source of an invariant is one a reader can
// follow (cite's rules, with nodeproof's documents read from the
// repository), and a contract invariant cites the promise, never upstream's
// code.
func TestInvariantSources(t *testing.T) {
	repo := os.DirFS("..")
	for _, inv := range Invariants() {
		for _, src := range inv.Sources {
			require.NoError(t, src.Validate(repo), inv.ID)
			if inv.Kind == verify.Contract {
				require.NotEqual(t, cite.KindCode, src.Kind, "%s is a contract invariant but cites %s", inv.ID, src.Text)
			}
		}
	}
}

func TestCheckCatchesABrokenState(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(*Sim)
		// want is the first invariant to fail; others may follow.
		want string
	}{
		{"a holding the plugins never granted", func(s *Sim) {
			for _, p := range s.livePods() {
				if len(p.granted) > 0 {
					for c := range p.granted {
						for r := range p.granted[c] {
							p.granted[c][r] = []string{"nonexistent"}
						}
					}
					return
				}
			}
			t.Fatal("no live pod holds devices")
		}, InvDevicesHeld},
		{"a running container told of a device it does not hold", func(s *Sim) {
			restoreWithOtherAnswer(t, s, func(checkpoint.PodDevicesEntry) allocresp.ContainerAllocateResponse {
				return allocresp.ContainerAllocateResponse{Devices: []allocresp.DeviceSpec{{ContainerPath: devicePath("phantom"), HostPath: devicePath("phantom")}}}
			})
		}, InvDevicesHeld},
		{"a running container given the answer to another call for the same devices", func(s *Sim) {
			restoreWithOtherAnswer(t, s, func(e checkpoint.PodDevicesEntry) allocresp.ContainerAllocateResponse {
				other := allocresp.ContainerAllocateResponse{Mounts: []allocresp.Mount{{ContainerPath: allocationMount(e.ResourceName), HostPath: "/var/lib/other-call"}}}
				for _, ids := range e.DeviceIDs {
					for _, id := range ids {
						other.Devices = append(other.Devices, allocresp.DeviceSpec{ContainerPath: devicePath(id), HostPath: devicePath(id)})
					}
				}
				return other
			})
		}, InvDevicesHeld},
		{"a pod cgroup removed behind the kubelet's back", func(s *Sim) {
			for _, path := range slices.Sorted(maps.Keys(s.fs.dirs)) {
				if strings.Contains(path, "/pod") {
					s.fs.remove(path)
					return
				}
			}
		}, InvCgroups},
		{"a running container's image gone", func(s *Sim) {
			for _, p := range s.livePods() {
				for _, c := range p.containers {
					if c.running {
						delete(s.runtime.images, c.image)
						return
					}
				}
			}
		}, InvGCInUse},
		{"a pod over allocatable", func(s *Sim) {
			big := &pod.Pod{UID: "pod-big", Containers: []pod.Container{{Name: "c0", Requests: pod.ResourceList{pod.CPU: 2 * nodeCPUMilli}}}}
			s.pods[big.UID] = &simPod{spec: big, phase: phaseRunning}
			s.podOrder = append(s.podOrder, big.UID)
		}, InvAllocatable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := steppedSim(t, 2*time.Hour)
			tc.corrupt(s)
			ids := failed(s.Check())
			require.NotEmpty(t, ids)
			require.Equal(t, tc.want, ids[0])
		})
	}
}

func TestRunStopsAtTheFirstViolationWithTheTrace(t *testing.T) {
	s := steppedSim(t, time.Hour)
	// A device the plugins never granted, held from now on.
	var victim *simPod
	for _, p := range s.livePods() {
		if len(p.granted) > 0 {
			victim = p
		}
	}
	require.NotNil(t, victim)
	for c := range victim.granted {
		for r := range victim.granted[c] {
			victim.granted[c][r] = append(victim.granted[c][r], "phantom")
		}
	}
	s.cfg.Explained = contracts()
	var reports []Stats
	sum := s.finish(func(st Stats) { reports = append(reports, st) })
	require.NotNil(t, sum.Violation)
	require.Equal(t, InvDevicesHeld, sum.Violation.Invariant)
	require.True(t, strings.HasPrefix(sum.Violation.Message, InvDevicesHeld+": "))
	require.Len(t, sum.Violation.Trace, DefaultTraceLen)
	require.Equal(t, sum.Violation.Event, sum.Violation.Trace[DefaultTraceLen-1])
	require.Equal(t, sum.Stats.Events, sum.Violation.Event.Seq)
	require.Less(t, sum.Stats.Simulated, 24*time.Hour)
	require.NotEmpty(t, reports)
	require.Equal(t, sum.Stats, reports[len(reports)-1])
	require.Equal(t, DefaultConfig().ReplayCommand(), sum.Replay)
}

// TestViolationMessagesListSortedKeyValues: a violation prints what it
// compares as sorted key=value lists a reader can scan, never a Go map
// (map[c0:map[example.com/gpu:[gpu-0]]]).
func TestViolationMessagesListSortedKeyValues(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(*Sim)
		want    string // a regular expression for the whole message
	}{
		{"a holding the plugins never granted", func(s *Sim) {
			for _, p := range s.livePods() {
				for c := range p.granted {
					for r := range p.granted[c] {
						p.granted[c][r] = []string{"nonexistent"}
					}
					return
				}
			}
			t.Fatal("no live pod holds devices")
		}, `^SIM-DEVICES-HELD: pod-\d+ \(running\) holds (c\d/example\.com/gpu=\[gpu-\d( gpu-\d)*\](, )?)+ in the device manager but was granted (c\d/example\.com/gpu=\[[^]]+\](, )?)+$`},
		{"a running container told of a device it does not hold", func(s *Sim) {
			restoreWithOtherAnswer(t, s, func(checkpoint.PodDevicesEntry) allocresp.ContainerAllocateResponse {
				return allocresp.ContainerAllocateResponse{Devices: []allocresp.DeviceSpec{{ContainerPath: devicePath("phantom"), HostPath: devicePath("phantom")}}}
			})
		}, `^SIM-DEVICES-HELD: pod-\d+/c\d \(\S+\) runs with the device nodes \[/dev/phantom\] but the device manager holds example\.com/gpu=\[gpu-\d( gpu-\d)*\] for it$`},
		{"a running container given the answer to another call", func(s *Sim) {
			restoreWithOtherAnswer(t, s, func(e checkpoint.PodDevicesEntry) allocresp.ContainerAllocateResponse {
				other := allocresp.ContainerAllocateResponse{Mounts: []allocresp.Mount{{ContainerPath: allocationMount(e.ResourceName), HostPath: "/var/lib/other-call"}}}
				for _, ids := range e.DeviceIDs {
					for _, id := range ids {
						other.Devices = append(other.Devices, allocresp.DeviceSpec{ContainerPath: devicePath(id), HostPath: devicePath(id)})
					}
				}
				return other
			})
		}, `^SIM-DEVICES-HELD: pod-\d+/c\d \(\S+\) runs with the allocation directories /run/example\.com/gpu=/var/lib/other-call but was granted /run/example\.com/gpu=/var/lib/example\.com/gpu/allocation-\d+ \(`},
		{"a pod cgroup written behind the kubelet's back", func(s *Sim) {
			for _, path := range slices.Sorted(maps.Keys(s.fs.dirs)) {
				if strings.Contains(path, "/pod") {
					s.fs.write(path, []cgroups.File{{Name: "cpu.weight", Value: "7"}, {Name: "cpu.max", Value: "max 100000"}})
					return
				}
			}
		}, `^SIM-CGROUPS: cgroup \S+/pod\S+ has cpu\.weight=7, cpu\.max=max 100000, want \S+=`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := steppedSim(t, 2*time.Hour)
			tc.corrupt(s)
			var msg string
			for _, r := range s.Check() {
				if r.Err != nil {
					msg = r.Err.Error()
					break
				}
			}
			require.NotContains(t, msg, "map[")
			require.NotContains(t, msg, "{")
			require.Regexp(t, tc.want, msg)
		})
	}
}

func TestFormatHoldings(t *testing.T) {
	require.Equal(t, "c0/a.com/y=[y-0 y-1], c0/b.com/x=[x-0], c1/b.com/x=[x-1]",
		formatHoldings(podHoldings{"c1": {"b.com/x": {"x-1"}}, "c0": {"b.com/x": {"x-0"}, "a.com/y": {"y-0", "y-1"}}}))
	require.Equal(t, "nothing", formatHoldings(nil))
	require.Equal(t, "a.com/y=[y-0], b.com/x=[]", formatDevices(map[string][]string{"b.com/x": nil, "a.com/y": {"y-0"}}))
	require.Equal(t, "/run/a=/var/lib/a/allocation-1, /run/b=", formatKeyValues(map[string]string{"/run/b": "", "/run/a": "/var/lib/a/allocation-1"}))
	require.Equal(t, "nothing", formatFiles(nil))
}
