package deviceplugin

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shortTempDir returns a directory whose socket paths fit a Unix socket
// address, which t.TempDir's long names may not.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "np")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestEndpointPath(t *testing.T) {
	dir := shortTempDir(t)
	lis, err := net.Listen("unix", filepath.Join(dir, "good.sock"))
	require.NoError(t, err)
	defer lis.Close()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o600))
	require.NoError(t, os.Symlink(filepath.Join(dir, "good.sock"), filepath.Join(dir, "link.sock")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o750))

	got, err := endpointPath(dir, "good.sock")
	require.NoError(t, err, "endpointPath(good.sock) = %q, %v; want the socket's path", got, err)
	require.Equal(t, filepath.Join(dir, "good.sock"), got, "endpointPath(good.sock) = %q, %v; want the socket's path", got, err)
	for _, tc := range []struct{ endpoint, want string }{
		{"", "must not be empty"},
		{"/abs.sock", "not an absolute path"},
		{"../good.sock", `must not contain ".."`},
		{"a..b.sock", `must not contain ".."`},
		{"sub/x.sock", "without a path separator"},
		{".", "without a path separator"},
		{"kubelet.sock", "the kubelet's own socket"},
		{"missing.sock", "failed to dial device plugin: lstat"},
		{"file", "is not a socket"},
		{"link.sock", "is not a socket"},
		{"sub", "is not a socket"},
	} {
		_, err := endpointPath(dir, tc.endpoint)
		assert.ErrorContains(t, err, tc.want, "endpointPath(%q) = %v, want an error containing %q", tc.endpoint, err, tc.want)
	}
}

func TestRemoveStaleSocketsKeepsOtherEntries(t *testing.T) {
	dir := shortTempDir(t)
	lis, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "stale.sock"), Net: "unix"})
	require.NoError(t, err)
	lis.SetUnlinkOnClose(false)
	lis.Close()
	for _, name := range []string{"kubelet_internal_checkpoint", "notes.sock"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub.sock"), 0o750))
	require.NoError(t, removeStaleSockets(dir))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	got, want := strings.Join(names, " "), "kubelet_internal_checkpoint notes.sock sub.sock"
	assert.Equal(t, want, got, "after cleanup the directory holds (only the socket removed)")
}
