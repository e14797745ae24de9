package devicemanager_test

import (
	"strings"
	"testing"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpecValidateRegistration checks Register's checks of devicemanager.md
// §1.3 in order (version first, then the name) with upstream's messages from
// §1.1 (errUnsupportedVersion formats the [1]string array, hence ["v1beta1"]).
func TestSpecValidateRegistration(t *testing.T) {
	tests := []struct {
		name string
		req  dm.RegisterRequest
		kind dm.Kind // 0: no error
		msg  string
	}{
		{"valid", dm.RegisterRequest{Version: "v1beta1", Endpoint: "gpu.sock", ResourceName: specRes}, 0, ""},
		{"bad version", dm.RegisterRequest{Version: "v1alpha", ResourceName: specRes},
			dm.KindUnsupportedVersion, `requested API version "v1alpha" is not supported by kubelet. Supported version is ["v1beta1"]`},
		{"empty version", dm.RegisterRequest{Version: "", ResourceName: specRes},
			dm.KindUnsupportedVersion, `requested API version "" is not supported by kubelet. Supported version is ["v1beta1"]`},
		// Step 2 before step 3: a bad version hides a bad name.
		{"bad version and bad name", dm.RegisterRequest{Version: "v1", ResourceName: "resource2"},
			dm.KindUnsupportedVersion, `requested API version "v1" is not supported by kubelet. Supported version is ["v1beta1"]`},
		{"bad name", dm.RegisterRequest{Version: "v1beta1", ResourceName: "resource2"},
			dm.KindInvalidResourceName, `the ResourceName "resource2" is invalid`},
		{"native name", dm.RegisterRequest{Version: "v1beta1", ResourceName: "kubernetes.io/x"},
			dm.KindInvalidResourceName, `the ResourceName "kubernetes.io/x" is invalid`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := dm.ValidateRegistration(tc.req)
			if tc.kind == 0 {
				require.NoError(t, err, "ValidateRegistration")
				return
			}
			specWantErr(t, err, tc.kind, tc.msg)
		})
	}
}

// TestSpecIsExtendedResourceName checks every example of devicemanager.md
// §1.3 and the edges of the rule it states: not native (no "/", or
// containing "kubernetes.io/"), no "requests." prefix, and "requests."+name a
// qualified name (DNS-1123 subdomain prefix ≤ 253, name part ≤ 63 of
// [-A-Za-z0-9_.] starting and ending alphanumeric).
func TestSpecIsExtendedResourceName(t *testing.T) {
	name63 := "a" + strings.Repeat("b", 61) + "c"
	// "requests." is 9 bytes, so a 244-byte prefix makes the 253 maximum.
	prefix244 := strings.Repeat("p", 244)
	tests := []struct {
		name string
		want bool
	}{
		// The examples of §1.3.
		{"domain1.com/resource1", true},
		{"fake-domain/resource", true},
		{"resource2", false},
		{"kubernetes.io/x", false},
		{"foo.kubernetes.io/x", false},
		{"Domain.com/x", false},
		{"a/b/c", false},
		{"a.com/", false},
		// Every end of the alphanumeric ranges is alphanumeric, in the name
		// part (any case) and in the prefix (lower case).
		{"az09.com/aZ09zA", true},
		{"example.com/Az9", true},
		{"example.com/0aZ", true},
		{"example.com/zA0", true},
		{"example.com/9z", true},

		// The name part: length 63 passes, 64 fails.
		{"a.com/" + name63, true},
		{"a.com/" + name63 + "d", false},
		// '-', '_' and '.' inside the name part, never at its edges;
		// uppercase is allowed there (only the prefix must be lowercase).
		{"a.com/a_b", true},
		{"a.com/a.b", true},
		{"a.com/a-b", true},
		{"a.com/GPU", true},
		{"a.com/_ab", false},
		{"a.com/ab_", false},
		{"a.com/.ab", false},
		{"a.com/ab.", false},
		{"a.com/-ab", false},
		{"a.com/a b", false},
		{"a.com/x", true},

		// The "requests." prefix is rejected outright, even when the rest
		// would be valid; a lookalike without the dot is fine.
		{"requests.foo.com/x", false},
		{"requests.com/x", false},
		{"requestsfoo.com/x", true},

		// The prefix part: "requests."+prefix must be a DNS-1123 subdomain.
		{"/x", false},
		{"a_b.com/x", false},
		{"-a.com/x", false},
		{"a..com/x", false},
		{prefix244 + "/x", true},
		{prefix244 + "p/x", false},

		// Native test is a substring test on "kubernetes.io/".
		{"xkubernetes.io/gpu", false},
		{"kubernetes.io-foo/gpu", true},
	}
	for _, tc := range tests {
		label := tc.name
		if len(label) > 40 {
			label = label[:20] + "…" + label[len(label)-12:]
		}
		t.Run(label, func(t *testing.T) {
			assert.Equal(t, tc.want, dm.IsExtendedResourceName(tc.name), "IsExtendedResourceName(%q)", tc.name)
			// Register must agree with the helper (§1.3 step 3).
			err := dm.ValidateRegistration(dm.RegisterRequest{Version: dm.Version, ResourceName: tc.name})
			assert.Equal(t, tc.want, (err == nil), "ValidateRegistration(%q) = %v, want valid", tc.name, err)
			if err != nil {
				specCheckKind(t, err)
			}
		})
	}
}

// TestConnectedResourcesBound checks Limits.Resources at exactly its value:
// that many resources register, one more is KindBoundExceeded, and a known
// resource may still re-register.
func TestConnectedResourcesBound(t *testing.T) {
	limits := dm.DefaultLimits()
	limits.Resources = 2
	m := dm.New(limits)
	specConnect(t, m, "example.com/a", dm.PluginOptions{})
	specConnect(t, m, "example.com/b", dm.PluginOptions{})
	_, err := m.Connected("example.com/c", "c.sock", dm.PluginOptions{})
	specWantErr(t, err, dm.KindBoundExceeded, "cannot register example.com/c: the node already tracks 2 resources")
	specConnect(t, m, "example.com/b", dm.PluginOptions{})
}

// TestSnapshotResourcesBound checks that resources known only from a
// snapshot (their endpoint gone or never connected) count towards
// Limits.Resources like registered ones, at exactly the bound.
func TestSnapshotResourcesBound(t *testing.T) {
	limits := dm.DefaultLimits()
	limits.Resources = 2
	m := dm.New(limits)
	specUpdate(t, m, "example.com/a", specHealthy("a0"))
	specUpdate(t, m, "example.com/b", specHealthy("b0"))
	err := m.Update("example.com/c", specHealthy("c0"))
	specWantErr(t, err, dm.KindBoundExceeded, "ListAndWatch of example.com/c: the node already tracks 2 resources")
	_, err = m.Connected("example.com/c", "c.sock", dm.PluginOptions{})
	specWantErr(t, err, dm.KindBoundExceeded, "cannot register example.com/c: the node already tracks 2 resources")
}

// TestCheckpointDueAfterGetCapacityDeletes checks that GetCapacity makes the
// checkpoint due only when it deleted a resource.
func TestCheckpointDueAfterGetCapacityDeletes(t *testing.T) {
	m, _ := specReady(t, 1, dm.PluginOptions{})
	m.CheckpointDue()
	m.GetCapacity(specT0)
	assert.False(t, m.CheckpointDue(), "nothing deleted")
}

// TestSnapshotDeviceBounds checks Limits.DevicesPerResource and
// Limits.NameLength at exactly their value in a ListAndWatch snapshot.
func TestSnapshotDeviceBounds(t *testing.T) {
	limits := dm.DefaultLimits()
	limits.DevicesPerResource, limits.NameLength = 2, 4
	m := dm.New(limits)
	specConnect(t, m, "example.com/a", dm.PluginOptions{})
	specUpdate(t, m, "example.com/a", specHealthy("dev0", "dev1"))
	err := m.Update("example.com/a", specHealthy("d0", "d1", "d2"))
	specWantErr(t, err, dm.KindBoundExceeded, "ListAndWatch of example.com/a: 3 devices exceed the bound of 2 per resource")
	err = m.Update("example.com/a", specHealthy("dev10"))
	specWantErr(t, err, dm.KindInvalidDeviceList, "ListAndWatch of example.com/a: devices[0].ID: longer than 4 bytes")
}
