package cite

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var repo = fstest.MapFS{
	"docs/architecture.md":     {Data: []byte("# Architecture notes\n\n## The determinism contract of core/\n\ntext\n")},
	"models/preemption/doc.go": {Data: []byte("package preemption\n")},
}

func TestConstructors(t *testing.T) {
	assert.Equal(t, Source{KindCode, "ManagerImpl.Allocate in pkg/kubelet/cm/devicemanager/manager.go at v1.36.3",
		"https://github.com/kubernetes/kubernetes/blob/v1.36.3/pkg/kubelet/cm/devicemanager/manager.go"},
		Code("pkg/kubelet/cm/devicemanager/manager.go", "ManagerImpl.Allocate"))
	assert.Equal(t, Source{KindCode, "ConvertCPUSharesToCgroupV2Value in opencontainers/cgroups utils.go at v0.0.6",
		"https://github.com/opencontainers/cgroups/blob/v0.0.6/utils.go"},
		CgroupsLibrary("utils.go", "ConvertCPUSharesToCgroupV2Value"))
	assert.Equal(t, Source{KindAPI, "RegisterRequest.version in staging/src/k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.proto at v1.36.3",
		"https://github.com/kubernetes/kubernetes/blob/v1.36.3/staging/src/k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.proto"},
		API("staging/src/k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.proto", "RegisterRequest.version"))
	assert.Equal(t, Source{KindIssue, "kubernetes issue #133702", "https://github.com/kubernetes/kubernetes/issues/133702"}, Issue(133702))
	assert.Equal(t, Source{KindPR, "kubernetes PR #120461 (open)", "https://github.com/kubernetes/kubernetes/pull/120461"}, PR(120461).Noting("open"))
	assert.Equal(t, Source{KindKEP, "KEP-753 (sidecar containers)", "https://github.com/kubernetes/enhancements/issues/753"}, KEP(753, "sidecar containers"))
	assert.Equal(t, Source{KindSeed, "Seed article on pod and QoS cgroups, section 'How CPU requests are implemented'", ""},
		Seed("pod and QoS cgroups", "How CPU requests are implemented"))
	assert.Equal(t, Source{KindDoc, "nodeproof docs/architecture.md, section 'The determinism contract of core/'",
		"docs/architecture.md#the-determinism-contract-of-core"}, Doc("docs/architecture.md", "The determinism contract of core/"))
	assert.Equal(t, Source{KindDoc, "nodeproof models/preemption/doc.go", "models/preemption/doc.go"}, Doc("models/preemption/doc.go", ""))
	assert.Equal(t, "kubernetes issue #1; KEP-2 (x)", Join([]Source{Issue(1), KEP(2, "x")}))
}

func TestHeadingAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"The determinism contract of core/":            "the-determinism-contract-of-core",
		"Calling the device manager core":              "calling-the-device-manager-core",
		"Device plugin manager (`core/devicemanager`)": "device-plugin-manager-coredevicemanager",
		"Bad input": "bad-input",
	} {
		assert.Equal(t, want, HeadingAnchor(heading), heading)
	}
}

func TestValidateAcceptsEveryConstructor(t *testing.T) {
	for _, s := range []Source{
		Code("pkg/kubelet/preemption/preemption.go", "getPodsToPreempt"),
		Code("staging/src/k8s.io/component-helpers/resource/helpers.go", "PodRequests"),
		CgroupsLibrary("utils.go", "ConvertCPUSharesToCgroupV2Value"),
		API("staging/src/k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.proto", "Device.ID"),
		Issue(135857).Noting("open"), PR(78493), KEP(753, "sidecar containers"),
		Seed("the kubelet's critical pod preemption", "Classifying pods by QoS"),
		Doc("docs/architecture.md", "The determinism contract of core/"),
		Doc("models/preemption/doc.go", ""),
	} {
		assert.NoError(t, s.Validate(repo), s.Text)
	}
}

// TestValidateRejects holds one source per rule, each breaking only that rule.
func TestValidateRejects(t *testing.T) {
	for _, tc := range []struct {
		source Source
		want   string
	}{
		{Source{Kind: KindIssue, URL: "https://github.com/kubernetes/kubernetes/issues/1"}, "text is empty"},
		{Source{Kind: KindIssue, Text: "see [1]", URL: "https://github.com/kubernetes/kubernetes/issues/1"}, "square brackets"},
		{Source{Kind: KindSeed, Text: "seed 004 §QoS level cgroup"}, `mentions "seed 00"`},
		{Source{Kind: KindSeed, Text: "Seed article on x, section 'y' (seeds/004.txt)"}, `mentions "seeds/"`},
		{Source{Kind: KindDoc, Text: "DESIGN.md determinism contract", URL: "DESIGN.md"}, `mentions "DESIGN.md"`},
		{Source{Kind: KindCode, Text: "spec/devicemanager.md §1.5", URL: "https://github.com/kubernetes/kubernetes/blob/v1.36.3/pkg/kubelet/cm/devicemanager/manager.go"}, `mentions "spec/"`},
		{Source{Kind: KindCode, Text: "GetCapacity on master", URL: "https://github.com/kubernetes/kubernetes/blob/master/pkg/kubelet/cm/devicemanager/manager.go"}, "a source of kind code must link to a .go file at"},
		{Source{Kind: KindCode, Text: "GetCapacity", URL: "https://github.com/kubernetes/kubernetes/blob/v1.36.3/"}, "a source of kind code must link to"},
		{Source{Kind: KindAPI, Text: "Device.ID", URL: "https://github.com/kubernetes/kubernetes/blob/v1.36.3/pkg/kubelet/cm/devicemanager/manager.go"}, "a source of kind api must link to a .proto file at"},
		{Source{Kind: KindAPI, Text: "Device.ID on master", URL: "https://github.com/kubernetes/kubernetes/blob/master/staging/src/k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.proto"}, "a source of kind api must link to"},
		{Source{Kind: KindIssue, Text: "issue 5", URL: "https://github.com/nodeproof/nodeproof/issues/5"}, "a source of kind issue must link to"},
		{Source{Kind: KindIssue, Text: "a PR as an issue", URL: "https://github.com/kubernetes/kubernetes/pull/5"}, "must link to https://github.com/kubernetes/kubernetes/issues/N"},
		{Source{Kind: KindPR, Text: "PR 0", URL: "https://github.com/kubernetes/kubernetes/pull/0"}, "must link to https://github.com/kubernetes/kubernetes/pull/N"},
		{Source{Kind: KindKEP, Text: "KEP-753", URL: "https://github.com/kubernetes/enhancements/tree/master/keps/sig-node/753-sidecar-containers"}, "must link to https://github.com/kubernetes/enhancements/issues/N"},
		{Source{Kind: KindSeed, Text: "Seed article on x, section 'y'", URL: "https://example.com/seed"}, "a seed section has no link"},
		{Source{Kind: KindSeed, Text: "the seed's GetCapacity section"}, "must read \"Seed article on"},
		{Source{Kind: KindDoc, Text: "the invariant catalogue", URL: "docs/missing.md"}, "does not exist in the repository"},
		{Source{Kind: KindDoc, Text: "outside", URL: "../shared/notes.md"}, "relative to the repository root"},
		{Source{Kind: KindDoc, Text: "absolute", URL: "/docs/architecture.md"}, "relative to the repository root"},
		{Source{Kind: KindDoc, Text: "a web page", URL: "https://example.com/x.md"}, "relative to the repository root"},
		{Source{Kind: KindDoc, Text: "no such heading", URL: "docs/architecture.md#bad-input"}, "has no heading whose anchor is #bad-input"},
		{Source{Kind: KindDoc, Text: "anchor in Go", URL: "models/preemption/doc.go#x"}, "an anchor needs a Markdown document"},
		{Source{Kind: "blog", Text: "a blog post", URL: "https://example.com"}, `kind "blog" is not one of`},
	} {
		err := tc.source.Validate(repo)
		require.Error(t, err, "%+v", tc.source)
		assert.Contains(t, err.Error(), tc.want, "%+v", tc.source)
	}
}

func TestLinked(t *testing.T) {
	assert.True(t, Issue(1).Linked())
	assert.False(t, Seed("x", "y").Linked())
	assert.False(t, Doc("docs/architecture.md", "").Linked())
}

func TestKubernetesDoc(t *testing.T) {
	s := KubernetesDoc("concepts/workloads/pods/pod-lifecycle/", "Pod Lifecycle", "Container probes")
	assert.Equal(t, Source{KindKubernetesDoc, "Kubernetes documentation, Pod Lifecycle, section 'Container probes'",
		"https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#container-probes"}, s)
	require.NoError(t, s.Validate(repo))
	require.NoError(t, KubernetesDoc("concepts/workloads/pods/pod-lifecycle/", "Pod Lifecycle", "").Validate(repo))
	require.NoError(t, KubernetesDoc("reference/config-api/kubelet-config.v1beta1/", "Kubelet Configuration (v1beta1)", "").Validate(repo))
	bad := s
	bad.URL = "https://kubernetes.io/docs/concepts/Pods"
	assert.ErrorContains(t, bad.Validate(repo), "must link to https://kubernetes.io/docs/<page>/")
	assert.Equal(t, "KEP-4438 (restart-on-kubelet-restart), section 'Goals'", KEPSection(4438, "restart-on-kubelet-restart", "Goals").Text)
}
