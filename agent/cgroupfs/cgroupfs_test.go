package cgroupfs

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/containerd/cgroups/v3/cgroup2"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/nodeproof/nodeproof/core/cgroups"
)

func u64(v uint64) *uint64 { return &v }
func i64(v int64) *int64   { return &v }

var allControllers = map[string]bool{ctrlCPU: true, ctrlMemory: true, ctrlPids: true, ctrlHugetlb: true}

// The derived examples of spec/cgroups.md §5.7, and the ends of the range.
func TestCPUWeightSpecExamples(t *testing.T) {
	for shares, want := range map[uint64]uint64{
		0: 1, 1: 1, 2: 1, 102: 4, 204: 8, 512: 20, 1024: 39, 2048: 79, 16384: 625,
		262143: 9999, 262144: 10000, 1 << 40: 10000,
	} {
		if got := CPUWeight(shares); got != want {
			t.Errorf("CPUWeight(%d) = %d, want %d", shares, got, want)
		}
	}
}

func TestHugePageSizeNames(t *testing.T) {
	for size, want := range map[int64]string{64 << 10: "64KB", 2 << 20: "2MB", 32 << 20: "32MB", 1 << 30: "1GB", 16 << 30: "16GB"} {
		if got := hugePageSizeName(size); got != want {
			t.Errorf("hugePageSizeName(%d) = %q, want %q", size, got, want)
		}
		if back, ok := hugePageSizeOf("hugetlb." + want + ".max"); !ok || back != size {
			t.Errorf("hugePageSizeOf(%q) = %d, %v; want %d", want, back, ok, size)
		}
	}
	for _, bad := range []string{"hugetlb.max", "hugetlb.2XB.max", "hugetlb.MB.max", "hugetlb.0MB.max"} {
		if _, ok := hugePageSizeOf(bad); ok {
			t.Errorf("hugePageSizeOf(%q) parsed a size", bad)
		}
	}
}

func TestPlanV1(t *testing.T) {
	c := cgroups.ResourceConfig{
		CPUShares: u64(256), CPUQuota: i64(50000), CPUPeriod: u64(100000), Memory: i64(-1), PidsLimit: i64(-1),
		HugePageLimit: map[int64]int64{1 << 30: 0, 2 << 20: 4 << 20},
	}
	p := planV1(c, allControllers)
	if p.v1.CPU == nil || *p.v1.CPU.Shares != 256 || *p.v1.CPU.Quota != 50000 || *p.v1.CPU.Period != 100000 {
		t.Errorf("cpu: %+v", p.v1.CPU)
	}
	if p.v1.Memory == nil || *p.v1.Memory.Limit != -1 {
		t.Errorf("memory: %+v", p.v1.Memory)
	}
	if p.v1.Pids != nil {
		t.Errorf("pids -1 went to the library, which would drop it: %+v", p.v1.Pids)
	}
	if want := []cgroups.File{{Name: "pids.max", Value: "max"}}; !slices.Equal(p.direct, want) {
		t.Errorf("direct writes %v, want %v", p.direct, want)
	}
	wantHP := []specs.LinuxHugepageLimit{{Pagesize: "2MB", Limit: 4 << 20}, {Pagesize: "1GB", Limit: 0}}
	if !slices.Equal(p.v1.HugepageLimits, wantHP) {
		t.Errorf("hugetlb %v, want %v (ascending page size)", p.v1.HugepageLimits, wantHP)
	}
	if len(p.skipped) != 0 {
		t.Errorf("skipped %v with every controller available", p.skipped)
	}

	p = planV1(cgroups.ResourceConfig{PidsLimit: i64(512)}, allControllers)
	if p.v1.Pids == nil || *p.v1.Pids.Limit != 512 || len(p.direct) != 0 || p.v1.CPU != nil || p.v1.Memory != nil {
		t.Errorf("pids only: %+v, direct %v", p.v1, p.direct)
	}

	noHugetlb := map[string]bool{ctrlCPU: true, ctrlMemory: true, ctrlPids: true}
	p = planV1(c, noHugetlb)
	if len(p.v1.HugepageLimits) != 0 || !slices.Equal(p.skipped, []string{ctrlHugetlb}) {
		t.Errorf("without hugetlb: limits %v, skipped %v", p.v1.HugepageLimits, p.skipped)
	}
}

func TestPlanV2(t *testing.T) {
	cases := []struct {
		name    string
		c       cgroups.ResourceConfig
		weight  *uint64
		cpuMax  cgroup2.CPUMax
		memMax  *int64
		pidsMax int64
		direct  []cgroups.File
	}{
		{"guaranteed", cgroups.ResourceConfig{CPUShares: u64(1024), CPUQuota: i64(100000), CPUPeriod: u64(100000), Memory: i64(1 << 30)},
			u64(39), "100000 100000", i64(1 << 30), 0, nil},
		{"no quota", cgroups.ResourceConfig{CPUShares: u64(2048), CPUQuota: i64(-1), CPUPeriod: u64(100000)},
			u64(79), "max 100000", nil, 0, nil},
		{"quota alone keeps the period", cgroups.ResourceConfig{CPUQuota: i64(50000)}, nil, "50000", nil, 0, nil},
		{"unlimited memory and pids", cgroups.ResourceConfig{Memory: i64(-1), PidsLimit: i64(-1)},
			nil, "", nil, -1, []cgroups.File{{Name: "memory.max", Value: "max"}}},
		{"unified in name order", cgroups.ResourceConfig{Unified: map[string]string{"memory.min": "1024", "memory.low": "2048"}},
			nil, "", nil, 0, []cgroups.File{{Name: "memory.low", Value: "2048"}, {Name: "memory.min", Value: "1024"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := planV2(tc.c, allControllers)
			r := p.v2
			if r.CPU == nil || r.Memory == nil || r.Pids == nil || r.HugeTlb == nil {
				t.Fatalf("every available controller must be enabled, got %+v", r)
			}
			if want := []string{"cpu", "memory", "pids", "hugetlb"}; !slices.Equal(r.EnabledControllers(), want) {
				t.Errorf("enabled %v, want %v", r.EnabledControllers(), want)
			}
			if (r.CPU.Weight == nil) != (tc.weight == nil) || (tc.weight != nil && *r.CPU.Weight != *tc.weight) {
				t.Errorf("weight %v, want %v", r.CPU.Weight, tc.weight)
			}
			if r.CPU.Max != tc.cpuMax {
				t.Errorf("cpu.max %q, want %q", r.CPU.Max, tc.cpuMax)
			}
			if (r.Memory.Max == nil) != (tc.memMax == nil) || (tc.memMax != nil && *r.Memory.Max != *tc.memMax) {
				t.Errorf("memory.max %v, want %v", r.Memory.Max, tc.memMax)
			}
			if r.Pids.Max != tc.pidsMax {
				t.Errorf("pids.max %d, want %d", r.Pids.Max, tc.pidsMax)
			}
			if !slices.Equal(p.direct, tc.direct) {
				t.Errorf("direct writes %v, want %v", p.direct, tc.direct)
			}
		})
	}

	// A hybrid host's unified hierarchy may offer none of them.
	p := planV2(cgroups.ResourceConfig{CPUShares: u64(2), Memory: i64(1 << 20), Unified: map[string]string{"memory.min": "1"},
		HugePageLimit: map[int64]int64{2 << 20: 0}}, map[string]bool{})
	if got := p.v2.EnabledControllers(); len(got) != 0 {
		t.Errorf("enabled %v without controllers", got)
	}
	if want := []string{"cpu", "hugetlb", "memory"}; !slices.Equal(p.skipped, want) {
		t.Errorf("skipped %v, want %v", p.skipped, want)
	}
	if len(p.direct) != 0 {
		t.Errorf("wrote %v to a missing controller", p.direct)
	}
}

func TestReadBack(t *testing.T) {
	cases := []struct {
		v        cgroups.Version
		pageSize int
		name     string
		written  string
		want     string
	}{
		{cgroups.V1, 4096, "cpu.shares", "0", "2"},
		{cgroups.V1, 4096, "cpu.shares", "1024", "1024"},
		{cgroups.V1, 4096, "cpu.shares", "300000", "262144"},
		{cgroups.V1, 4096, "cpu.cfs_quota_us", "-5", "-1"},
		{cgroups.V1, 4096, "cpu.cfs_quota_us", "50000", "50000"},
		{cgroups.V1, 4096, "memory.limit_in_bytes", "100000000", "99999744"},
		{cgroups.V1, 65536, "memory.limit_in_bytes", "100000000", "99942400"},
		{cgroups.V1, 4096, "memory.limit_in_bytes", "-1", "9223372036854771712"},
		{cgroups.V1, 4096, "memory.limit_in_bytes", "9223372036854775807", "9223372036854771712"},
		{cgroups.V1, 4096, "hugetlb.2MB.limit_in_bytes", "4611686018427387904", "4611686018427387904"},
		{cgroups.V1, 4096, "hugetlb.2MB.limit_in_bytes", "3145728", "2097152"},
		{cgroups.V1, 4096, "hugetlb.2MB.limit_in_bytes", "-1", "9223372036852678656"},
		{cgroups.V1, 4096, "pids.max", "max", "max"},
		{cgroups.V1, 4096, "pids.max", "1024\n", "1024"},
		{cgroups.V2, 4096, "memory.max", "100000000", "99999744"},
		{cgroups.V2, 4096, "memory.max", "max", "max"},
		{cgroups.V2, 4096, "memory.max", "9223372036854775807", "max"},
		{cgroups.V2, 4096, "memory.min", "5000", "4096"},
		{cgroups.V2, 4096, "hugetlb.2MB.max", "0", "0"},
		{cgroups.V2, 4096, "hugetlb.2MB.max", "3145728", "2097152"},
		{cgroups.V2, 4096, "hugetlb.2MB.max", "max", "max"},
		{cgroups.V2, 4096, "cpu.weight", "39", "39"},
		{cgroups.V2, 4096, "cpu.max", "max 100000", "max 100000"},
		{cgroups.V2, 4096, "cpu.shares", "0", "0"}, // no such v2 file: as written
	}
	for _, tc := range cases {
		if got := ReadBack(tc.v, cgroups.File{Name: tc.name, Value: tc.written}, tc.pageSize); got != tc.want {
			t.Errorf("v%d page %d: %s after %q reads %q, want %q", tc.v, tc.pageSize, tc.name, tc.written, got, tc.want)
		}
	}
}

func TestSameValueCPUMaxWithoutPeriod(t *testing.T) {
	if !sameValue("cpu.max", "50000", "50000 100000") {
		t.Error("a quota-only write must match the quota read back with the current period")
	}
	if sameValue("cpu.max", "50000", "60000 100000") || sameValue("cpu.max", "50000 50000", "50000 100000") {
		t.Error("different quota or period matched")
	}
}

func TestCheckHierarchy(t *testing.T) {
	good := []cgroups.Cgroup{
		{Path: "kubepods"},
		{Path: "kubepods/burstable"},
		{Path: "kubepods/burstable/pod1", Config: cgroups.ResourceConfig{Memory: i64(-1), PidsLimit: i64(-1),
			HugePageLimit: map[int64]int64{2 << 20: 0}}},
		{Path: "kubepods.slice"},
		{Path: "kubepods.slice/kubepods-burstable.slice"},
	}
	if err := checkHierarchy(good, cgroups.V1); err != nil {
		t.Errorf("good hierarchy: %v", err)
	}
	v2only := []cgroups.Cgroup{{Path: "kubepods", Config: cgroups.ResourceConfig{Unified: map[string]string{"memory.min": "1"}}}}
	if err := checkHierarchy(v2only, cgroups.V2); err != nil {
		t.Errorf("Unified on v2: %v", err)
	}
	bad := []struct {
		h     []cgroups.Cgroup
		v     cgroups.Version
		field string
		rule  string
	}{
		{[]cgroups.Cgroup{{Path: ""}}, cgroups.V1, "hierarchy[0].Path", "must not be empty"},
		{[]cgroups.Cgroup{{Path: "/kubepods"}}, cgroups.V1, "hierarchy[0].Path", "relative"},
		{[]cgroups.Cgroup{{Path: "a"}, {Path: "a/.."}}, cgroups.V1, "hierarchy[1].Path", `".."`},
		{[]cgroups.Cgroup{{Path: "a\x00b"}}, cgroups.V1, "hierarchy[0].Path", "NUL"},
		{[]cgroups.Cgroup{{Path: "a"}, {Path: "a/b/c"}}, cgroups.V1, "hierarchy[1].Path", `parent "a/b"`},
		{[]cgroups.Cgroup{{Path: "a"}, {Path: "a"}}, cgroups.V1, "hierarchy[1].Path", "duplicate of hierarchy[0]"},
		{[]cgroups.Cgroup{{Path: "a", Config: cgroups.ResourceConfig{PidsLimit: i64(-7)}}}, cgroups.V1,
			"hierarchy[0].Config.PidsLimit", "positive"},
		{[]cgroups.Cgroup{{Path: "a", Config: cgroups.ResourceConfig{HugePageLimit: map[int64]int64{512: 0}}}}, cgroups.V1,
			"hierarchy[0].Config.HugePageLimit[512]", "power of two"},
		{v2only, cgroups.V1, "hierarchy[0].Config.Unified", "cgroup v1"},
		{[]cgroups.Cgroup{{Path: "a", Config: cgroups.ResourceConfig{Unified: map[string]string{"cgroup.procs": "1"}}}}, cgroups.V2,
			"hierarchy[0].Config.Unified", "cgroup core files"},
		{[]cgroups.Cgroup{{Path: "a", Config: cgroups.ResourceConfig{Unified: map[string]string{"x/y": "1"}}}}, cgroups.V2,
			"hierarchy[0].Config.Unified[x/y]", "file name"},
	}
	for _, tc := range bad {
		err := checkHierarchy(tc.h, tc.v)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != tc.field || !strings.Contains(ie.Rule, tc.rule) {
			t.Errorf("%+v: got %v, want field %s with a rule saying %q", tc.h, err, tc.field, tc.rule)
		}
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		opts  Options
		field string
	}{
		{Options{}, "Options.Root"},
		{Options{Root: "../escape"}, "Options.Root"},
		{Options{Root: "/sys/fs/cgroup/x"}, "Options.Root"},
		{Options{Root: "ok", Version: 3}, "Options.Version"},
	} {
		_, err := New(tc.opts)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != tc.field {
			t.Errorf("New(%+v): got %v, want an *InputError for %s", tc.opts, err, tc.field)
		}
	}
}

func TestSortChildrenFirst(t *testing.T) {
	paths := []string{"a", "a/b", "c", "a/b/c", "a/d", "c/e"}
	sortChildrenFirst(paths)
	want := []string{"a/b/c", "c/e", "a/d", "a/b", "c", "a"}
	if !slices.Equal(paths, want) {
		t.Errorf("got %v, want %v", paths, want)
	}
}
