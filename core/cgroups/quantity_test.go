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
