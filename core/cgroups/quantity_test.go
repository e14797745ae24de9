package cgroups

import (
	"testing"

	"github.com/nodeproof/nodeproof/core/pod"
)

// TestFormatQuantity checks the canonical forms resource.Quantity prints,
// which validateNodeAllocatable's message shows.
func TestFormatQuantity(t *testing.T) {
	for _, tc := range []struct {
		name pod.ResourceName
		v    int64
		want string
	}{
		{pod.CPU, 0, "0"},
		{pod.CPU, 3000, "3"},
		{pod.CPU, 3500, "3500m"},
		{pod.CPU, 100, "100m"},
		{pod.CPU, 64000000, "64k"},
		{pod.Memory, 0, "0"},
		{pod.Memory, 512, "512"},
		{pod.Memory, 1000, "1k"}, // below 1024 BinarySI prints as DecimalSI
		{pod.Memory, 1500, "1500"},
		{pod.Memory, 8 << 30, "8Gi"},
		{pod.Memory, 100 << 20, "100Mi"},
		{pod.Memory, 16389623808, "16005492Ki"},
		{pod.EphemeralStorage, 1 << 40, "1Ti"},
		{"hugepages-2Mi", 2 << 20, "2Mi"},
		{PIDs, 4096, "4096"},
		{PIDs, 1000, "1k"},
		{PIDs, 32000, "32k"},
	} {
		if got := formatQuantity(tc.name, tc.v); got != tc.want {
			t.Errorf("formatQuantity(%s, %d) = %q, want %q", tc.name, tc.v, got, tc.want)
		}
	}
}

func TestHugePageNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int64
		unit string
	}{
		{"hugepages-2Mi", 2 << 20, "2MB"},
		{"hugepages-2048Ki", 2 << 20, "2MB"},
		{"hugepages-1Gi", 1 << 30, "1GB"},
		{"hugepages-64Ki", 64 << 10, "64KB"},
		{"hugepages-16Gi", 16 << 30, "16GB"},
	} {
		size, err := HugePageSizeFromResourceName(pod.ResourceName(tc.name))
		if err != nil || size != tc.size {
			t.Errorf("%s: size %d, %v; want %d", tc.name, size, err, tc.size)
		}
		if unit, err := HugePageUnitSize(size); err != nil || unit != tc.unit {
			t.Errorf("%s: unit %q, %v; want %q", tc.name, unit, err, tc.unit)
		}
	}
	if got := HugePageResourceName(2 << 20); got != "hugepages-2Mi" {
		t.Errorf("HugePageResourceName(2Mi) = %q", got)
	}
	for _, bad := range []string{"hugepages-", "hugepages-2M", "hugepages-3Mi", "hugepages-32Gi", "hugepages--2Mi", "hugepages-1.5Mi", "memory"} {
		if _, err := HugePageSizeFromResourceName(pod.ResourceName(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
