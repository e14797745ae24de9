package cgroups

import (
	"testing"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		{pod.Memory, 1023, "1023"},
		{pod.Memory, 1024, "1Ki"}, // the first BinarySI value
		{pod.Memory, -1023, "-1023"},
		{pod.Memory, -1024, "-1Ki"}, // symmetric below zero, as resource.Quantity prints
		{pod.Memory, 1000, "1k"},    // below 1024 BinarySI prints as DecimalSI
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
		assert.Equal(t, tc.want, formatQuantity(tc.name, tc.v), "formatQuantity(%s, %d)", tc.name, tc.v)
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
		{"hugepages-4Ki", 4 << 10, "4KB"}, // the smallest page size is accepted
	} {
		size, err := HugePageSizeFromResourceName(pod.ResourceName(tc.name))
		require.NoError(t, err, "%s: size %d, %v; want %d", tc.name, size, err, tc.size)
		assert.Equal(t, tc.size, size, "%s: size %d, %v; want %d", tc.name, size, err, tc.size)
		unit, err := HugePageUnitSize(size)
		require.NoError(t, err, "%s: unit %q, %v; want %q", tc.name, unit, err, tc.unit)
		assert.Equal(t, tc.unit, unit, "%s: unit %q, %v; want %q", tc.name, unit, err, tc.unit)
	}
	assert.Equal(t, pod.ResourceName("hugepages-2Mi"), HugePageResourceName(2<<20), "HugePageResourceName(2Mi)")
	for _, bad := range []string{"hugepages-", "hugepages-2M", "hugepages-3Mi", "hugepages-32Gi", "hugepages--2Mi", "hugepages-1.5Mi", "memory"} {
		_, err := HugePageSizeFromResourceName(pod.ResourceName(bad))
		assert.Error(t, err, "%s accepted", bad)
	}
}

// TestHugePageUnitSizeEdges checks HugePageUnitSize at the ends of its unit
// table: a size that fills the largest unit 1024 times is still named in
// it (there is no unit above PB to divide into), one that does not divide
// into PB is named in PB too, and 0 is refused rather than named "0PB".
func TestHugePageUnitSizeEdges(t *testing.T) {
	for _, tc := range []struct {
		size int64
		want string
	}{
		{1 << 60, "1024PB"},
		{1025 << 50, "1025PB"},
		{3 << 50, "3PB"},
	} {
		unit, err := HugePageUnitSize(tc.size)
		require.NoError(t, err, "HugePageUnitSize(%d)", tc.size)
		assert.Equal(t, tc.want, unit, "HugePageUnitSize(%d)", tc.size)
	}
	_, err := HugePageUnitSize(0)
	assert.EqualError(t, err, "page size 0 must be positive", "HugePageUnitSize(0)")
	_, err = HugePageUnitSize(1025 << 40)
	assert.EqualError(t, err, "size: 1025TB must be guaranteed to divisible into the largest units", "HugePageUnitSize(1025Ti)")
}

// TestHugePageSizeZero: a size of 0 is refused as no page size at all, before
// the power-of-two rule is asked.
func TestHugePageSizeZero(t *testing.T) {
	_, err := HugePageSizeFromResourceName("hugepages-0")
	assert.EqualError(t, err, `"hugepages-0" does not name a page size`)
}
