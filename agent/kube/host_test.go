package kube

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMemTotal: the machine's memory is MemTotal of /proc/meminfo, in
// bytes; a file without it, or with a size core cannot hold, is an error
// naming the file.
func TestMemTotal(t *testing.T) {
	got, err := memTotal(strings.NewReader("MemTotal:       16318412 kB\nMemFree:         1015020 kB\n"))
	require.NoError(t, err)
	assert.Equal(t, int64(16318412)<<10, got)

	for meminfo, want := range map[string]string{
		"MemFree: 1015020 kB\n":                  "/proc/meminfo has no MemTotal line",
		"MemTotal: 0 kB\n":                       `/proc/meminfo: MemTotal "0" is not a usable size`,
		"MemTotal: 99999999999999999999999 kB\n": `/proc/meminfo: MemTotal "99999999999999999999999" is not a usable size`,
	} {
		_, err := memTotal(strings.NewReader(meminfo))
		assert.EqualError(t, err, want, meminfo)
	}
}
