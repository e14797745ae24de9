package cgroupfs

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func u64(v uint64) *uint64 { return &v }
func i64(v int64) *int64   { return &v }

var allControllers = map[string]bool{ctrlCPU: true, ctrlMemory: true, ctrlPids: true, ctrlHugetlb: true}

func TestHugePageSizeOf(t *testing.T) {
	for name, want := range map[string]int64{
		"hugetlb.64KB.max": 64 << 10, "hugetlb.2MB.limit_in_bytes": 2 << 20, "hugetlb.1GB.max": 1 << 30, "hugetlb.16GB.max": 16 << 30,
	} {
		got, ok := hugePageSizeOf(name)
		require.True(t, ok, "hugePageSizeOf(%q) = %d, %v; want %d", name, got, ok, want)
		assert.Equal(t, want, got, "hugePageSizeOf(%q) = %d, %v; want %d", name, got, ok, want)
	}
	for _, bad := range []string{"hugetlb.max", "hugetlb.2XB.max", "hugetlb.MB.max", "hugetlb.0MB.max"} {
		_, ok := hugePageSizeOf(bad)
		assert.False(t, ok, "hugePageSizeOf(%q) parsed a size", bad)
	}
}

// TestPlanWritesCoreValues: the manager writes exactly what core renders,
// in core's order, on both versions: the v1 period before the quota, and on
// v2 the weight formula the config names (the kubelet's linear one for its
// own cgroups, the runtime's quadratic one for containers).
func TestPlanWritesCoreValues(t *testing.T) {
	c := cgroups.ResourceConfig{
		CPUShares: u64(1024), CPUQuota: i64(50000), CPUPeriod: u64(200000), Memory: i64(-1), PidsLimit: i64(-1),
		HugePageLimit: map[int64]int64{1 << 30: 0, 2 << 20: 4 << 20},
	}
	cases := []struct {
		name   string
		v      cgroups.Version
		weight cgroups.WeightFormula
		want   []cgroups.File
	}{
		{"v1", cgroups.V1, cgroups.WeightLinear, []cgroups.File{
			{Name: "cpu.shares", Value: "1024"}, {Name: "cpu.cfs_period_us", Value: "200000"}, {Name: "cpu.cfs_quota_us", Value: "50000"},
			{Name: "memory.limit_in_bytes", Value: "-1"},
			{Name: "hugetlb.2MB.limit_in_bytes", Value: "4194304"}, {Name: "hugetlb.1GB.limit_in_bytes", Value: "0"},
			{Name: "pids.max", Value: "max"}}},
		{"v2 kubelet cgroup", cgroups.V2, cgroups.WeightLinear, []cgroups.File{
			{Name: "cpu.weight", Value: "39"}, {Name: "cpu.max", Value: "50000 200000"}, {Name: "memory.max", Value: "max"},
			{Name: "hugetlb.2MB.max", Value: "4194304"}, {Name: "hugetlb.1GB.max", Value: "0"},
			{Name: "pids.max", Value: "max"}}},
		{"v2 container", cgroups.V2, cgroups.WeightQuadratic, []cgroups.File{
			{Name: "cpu.weight", Value: "100"}, {Name: "cpu.max", Value: "50000 200000"}, {Name: "memory.max", Value: "max"},
			{Name: "hugetlb.2MB.max", Value: "4194304"}, {Name: "hugetlb.1GB.max", Value: "0"},
			{Name: "pids.max", Value: "max"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := c
			c.Weight = tc.weight
			p, err := planFor(0, c, tc.v, allControllers)
			require.NoError(t, err)
			assert.Equal(t, tc.want, p.writes, "writes\n  %v\nwant\n  %v", p.writes, tc.want)
			core, _ := c.Values(tc.v)
			assert.Equal(t, core, p.writes, "writes %v differ from core's Values %v", p.writes, core)
			assert.Empty(t, p.skipped, "skipped: with every controller available")
		})
	}

	// Without hugetlb (this testbed's v1 hosts) and on a v2 mount that
	// delegates nothing, the missing controllers' files are left out and
	// named, in order.
	noHugetlb := map[string]bool{ctrlCPU: true, ctrlMemory: true, ctrlPids: true}
	p, err := planFor(0, c, cgroups.V1, noHugetlb)
	require.NoError(t, err)
	require.Equal(t, []string{ctrlHugetlb}, p.skipped, "without hugetlb: writes %v, skipped %v", p.writes, p.skipped)
	assert.False(t, slices.ContainsFunc(p.writes, func(f cgroups.File) bool { return strings.HasPrefix(f.Name, "hugetlb.") }), "without hugetlb: writes %v, skipped %v", p.writes, p.skipped)
	p, err = planFor(0, cgroups.ResourceConfig{CPUShares: u64(2), Memory: i64(1 << 20),
		Unified: map[string]string{"memory.min": "1"}, HugePageLimit: map[int64]int64{2 << 20: 0}}, cgroups.V2, map[string]bool{})
	require.NoError(t, err)
	require.Empty(t, p.writes, "no controllers: writes %v, skipped %v", p.writes, p.skipped)
	assert.Equal(t, []string{"cpu", "hugetlb", "memory"}, p.skipped, "no controllers: writes %v, skipped %v", p.writes, p.skipped)
}

// TestPlanRefusesWhatCoreRefuses: a value core will not render is an
// *InputError naming the cgroup's field and core's rule.
func TestPlanRefusesWhatCoreRefuses(t *testing.T) {
	for _, tc := range []struct {
		c     cgroups.ResourceConfig
		field string
		rule  string
	}{
		{cgroups.ResourceConfig{CPUShares: u64(1)}, "hierarchy[3].Config.cpuShares", "within 2 and 262144"},
		{cgroups.ResourceConfig{CPUQuota: i64(500)}, "hierarchy[3].Config.cpuQuota", "at least 1000"},
		{cgroups.ResourceConfig{Memory: i64(-2)}, "hierarchy[3].Config.memory", "-1 (unlimited)"},
	} {
		_, err := planFor(3, tc.c, cgroups.V2, allControllers)
		var ie *InputError
		require.True(t, errors.As(err, &ie), "%+v: got %v, want field %s with a rule saying %q", tc.c, err, tc.field, tc.rule)
		assert.Equal(t, tc.field, ie.Field, "%+v: got %v, want field %s with a rule saying %q", tc.c, err, tc.field, tc.rule)
		assert.Contains(t, ie.Rule, tc.rule, "%+v: got %v, want field %s with a rule saying %q", tc.c, err, tc.field, tc.rule)
		assert.NotContains(t, err.Error(), tc.field+": "+strings.TrimPrefix(tc.field, "hierarchy[3].Config.")+":", "%q repeats core's field name", err)
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
		assert.Equal(t, tc.want, ReadBack(tc.v, cgroups.File{Name: tc.name, Value: tc.written}, tc.pageSize), "v%d page %d: %s after %q reads", tc.v, tc.pageSize, tc.name, tc.written)
	}
}

func TestSameValueCPUMaxWithoutPeriod(t *testing.T) {
	assert.True(t, sameValue("cpu.max", "50000", "50000 100000"), "a quota-only write must match the quota read back with the current period")
	require.False(t, sameValue("cpu.max", "50000", "60000 100000"), "different quota or period matched")
	assert.False(t, sameValue("cpu.max", "50000 50000", "50000 100000"), "different quota or period matched")
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
	plans, err := checkHierarchy(good, cgroups.V1, allControllers)
	assert.NoError(t, err, "good hierarchy")
	if len(plans) != len(good) || !slices.Equal(plans[2].writes, []cgroups.File{{Name: "memory.limit_in_bytes", Value: "-1"},
		{Name: "hugetlb.2MB.limit_in_bytes", Value: "0"}, {Name: "pids.max", Value: "max"}}) {
		t.Errorf("plans %+v, want one per cgroup with core's writes", plans)
	}
	v2only := []cgroups.Cgroup{{Path: "kubepods", Config: cgroups.ResourceConfig{Unified: map[string]string{"memory.min": "1"}}}}
	_, err = checkHierarchy(v2only, cgroups.V2, allControllers)
	assert.NoError(t, err, "Unified on v2")
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
			"hierarchy[0].Config.unified", "not a cgroup file name"},
		{[]cgroups.Cgroup{{Path: "a"}, {Path: "a/b", Config: cgroups.ResourceConfig{CPUPeriod: u64(2_000_000)}}}, cgroups.V1,
			"hierarchy[1].Config.cpuPeriod", "within 1000 and 1000000"},
	}
	for _, tc := range bad {
		_, err := checkHierarchy(tc.h, tc.v, allControllers)
		var ie *InputError
		require.True(t, errors.As(err, &ie), "%+v: got %v, want field %s with a rule saying %q", tc.h, err, tc.field, tc.rule)
		assert.Equal(t, tc.field, ie.Field, "%+v: got %v, want field %s with a rule saying %q", tc.h, err, tc.field, tc.rule)
		assert.Contains(t, ie.Rule, tc.rule, "%+v: got %v, want field %s with a rule saying %q", tc.h, err, tc.field, tc.rule)
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
		require.True(t, errors.As(err, &ie), "New(%+v): got %v, want an *InputError for %s", tc.opts, err, tc.field)
		assert.Equal(t, tc.field, ie.Field, "New(%+v): got %v, want an *InputError for %s", tc.opts, err, tc.field)
	}
}

func TestSortChildrenFirst(t *testing.T) {
	paths := []string{"a", "a/b", "c", "a/b/c", "a/d", "c/e"}
	sortChildrenFirst(paths)
	want := []string{"a/b/c", "c/e", "a/d", "a/b", "c", "a"}
	assert.Equal(t, want, paths, "got %v, want %v", paths, want)
}
