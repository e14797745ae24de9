package cgroups

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Values renders the config as the ordered writes to a cgroup of version v,
// following what the kubelet's cgroup manager (through
// opencontainers/cgroups) writes for each field:
//
//	v1: cpu.shares, cpu.cfs_period_us, cpu.cfs_quota_us, memory.limit_in_bytes,
//	    hugetlb.<size>.limit_in_bytes (ascending size), pids.max
//	v2: cpu.weight, cpu.max, memory.max, Unified keys (sorted),
//	    hugetlb.<size>.max (ascending size), pids.max
//
// A nil field writes nothing, and so do the values the library treats as
// "not set": shares, quota, period, memory and pids of 0. On v2 cpu.max is
// written when a quota or a period is set: "<quota> <period>", with "max"
// for an unlimited (-1) or unset quota and 100000 for an unset period.
// Memory and pids -1 mean unlimited ("-1" on v1's memory file, "max"
// elsewhere). Unified files are written only on v2, as upstream passes them
// only there. <size> is the kernel's name of the page size ("2MB").
//
// Values refuses, with an error naming the field and the rule, what the
// kernel would reject: shares outside [MinShares, MaxShares], a quota below
// MinQuotaPeriod other than -1, a period outside 1ms..1s, a negative memory
// or hugepage limit, a page size the kernel cannot name, an unknown weight
// formula or version, and a Unified key that is not a plain file name.
func (r ResourceConfig) Values(v Version) ([]File, error) {
	if v != V1 && v != V2 {
		return nil, fieldErr("version", "%d must be 1 or 2", int(v))
	}
	out := make([]File, 0, 6+len(r.HugePageLimit)+len(r.Unified))
	add := func(name, value string) { out = append(out, File{Name: name, Value: value}) }

	if s := r.CPUShares; s != nil && *s != 0 {
		if *s < MinShares || *s > MaxShares {
			return nil, fieldErr("cpuShares", "%d must be within %d and %d", *s, MinShares, MaxShares)
		}
		if v == V1 {
			add("cpu.shares", strconv.FormatUint(*s, 10))
		} else {
			switch r.Weight {
			case WeightLinear:
				add("cpu.weight", strconv.FormatUint(CPUWeightLinear(*s), 10))
			case WeightQuadratic:
				add("cpu.weight", strconv.FormatUint(CPUWeightQuadratic(*s), 10))
			default:
				return nil, fieldErr("weight", "%d is not a known weight formula", int(r.Weight))
			}
		}
	}

	var quota int64
	var period uint64
	if r.CPUQuota != nil {
		quota = *r.CPUQuota
		if quota != 0 && quota != -1 && quota < MinQuotaPeriod {
			return nil, fieldErr("cpuQuota", "%d must be -1 or at least %d microseconds", quota, MinQuotaPeriod)
		}
	}
	if r.CPUPeriod != nil {
		period = *r.CPUPeriod
		if period != 0 && (period < 1000 || period > 1000000) {
			return nil, fieldErr("cpuPeriod", "%d must be within 1000 and 1000000 microseconds", period)
		}
	}
	if v == V1 {
		// The period goes first, as opencontainers/cgroups' fs driver
		// writes it: the kernel checks a new quota against the period in
		// place, so with a period above 100ms a quota written first is
		// measured against the default 100ms and can exceed the parent's
		// share (EINVAL). A fresh cgroup has no quota, so the period alone
		// always fits.
		if period != 0 {
			add("cpu.cfs_period_us", strconv.FormatUint(period, 10))
		}
		if quota != 0 {
			add("cpu.cfs_quota_us", strconv.FormatInt(quota, 10))
		}
	} else if quota != 0 || period != 0 {
		q := "max"
		if quota > 0 {
			q = strconv.FormatInt(quota, 10)
		}
		if period == 0 {
			period = QuotaPeriod
		}
		add("cpu.max", q+" "+strconv.FormatUint(period, 10))
	}

	if m := r.Memory; m != nil && *m != 0 {
		if *m < -1 {
			return nil, fieldErr("memory", "%d must be -1 (unlimited) or a positive byte count", *m)
		}
		switch {
		case v == V1:
			add("memory.limit_in_bytes", strconv.FormatInt(*m, 10))
		case *m == -1:
			add("memory.max", "max")
		default:
			add("memory.max", strconv.FormatInt(*m, 10))
		}
	}

	if v == V2 && len(r.Unified) > 0 {
		keys := make([]string, 0, len(r.Unified))
		for k := range r.Unified {
			if k == "" || strings.ContainsAny(k, "/\x00") || k == "." || k == ".." {
				return nil, fieldErr("unified", "%q is not a cgroup file name", k)
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			add(k, r.Unified[k])
		}
	}

	for _, size := range slices.Sorted(maps.Keys(r.HugePageLimit)) {
		unit, err := HugePageUnitSize(size)
		if err != nil {
			return nil, fieldErr(fmt.Sprintf("hugePageLimit[%d]", size), "%v", err)
		}
		limit := r.HugePageLimit[size]
		if limit < 0 {
			return nil, fieldErr("hugePageLimit["+unit+"]", "%d must not be negative", limit)
		}
		if v == V1 {
			add("hugetlb."+unit+".limit_in_bytes", strconv.FormatInt(limit, 10))
		} else {
			add("hugetlb."+unit+".max", strconv.FormatInt(limit, 10))
		}
	}

	if p := r.PidsLimit; p != nil && *p != 0 {
		if *p < 0 {
			add("pids.max", "max")
		} else {
			add("pids.max", strconv.FormatInt(*p, 10))
		}
	}
	return out, nil
}
