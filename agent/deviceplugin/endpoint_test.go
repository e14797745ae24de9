package deviceplugin

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shortTempDir returns a directory whose socket paths fit a Unix socket
// address, which t.TempDir's long names may not.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "np")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestEndpointPath(t *testing.T) {
	dir := shortTempDir(t)
	lis, err := net.Listen("unix", filepath.Join(dir, "good.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "good.sock"), filepath.Join(dir, "link.sock")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o750); err != nil {
		t.Fatal(err)
	}

	got, err := endpointPath(dir, "good.sock")
	if err != nil || got != filepath.Join(dir, "good.sock") {
		t.Fatalf("endpointPath(good.sock) = %q, %v; want the socket's path", got, err)
	}
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
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("endpointPath(%q) = %v, want an error containing %q", tc.endpoint, err, tc.want)
		}
	}
}

func TestRemoveStaleSocketsKeepsOtherEntries(t *testing.T) {
	dir := shortTempDir(t)
	lis, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "stale.sock"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	lis.SetUnlinkOnClose(false)
	lis.Close()
	for _, name := range []string{"kubelet_internal_checkpoint", "notes.sock"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.sock"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := removeStaleSockets(dir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got, want := strings.Join(names, " "), "kubelet_internal_checkpoint notes.sock sub.sock"; got != want {
		t.Errorf("after cleanup the directory holds %q, want %q (only the socket removed)", got, want)
	}
}
