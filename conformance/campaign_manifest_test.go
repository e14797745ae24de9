package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimejson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/batch"
	_ "k8s.io/kubernetes/pkg/apis/batch/install" // batch/v1 defaulting and conversion into legacyscheme
	"k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // core/v1 defaulting and conversion into legacyscheme
	jobregistry "k8s.io/kubernetes/pkg/registry/batch/job"
	configmapregistry "k8s.io/kubernetes/pkg/registry/core/configmap"
	pvcregistry "k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	"k8s.io/utils/ptr"
)

// campaignManifest is the campaign's Job and what it needs (docs/campaign.md),
// relative to this module.
const campaignManifest = "../deploy/campaign/job.yaml"

// campaignNamespace is the namespace the objects are created in: the manifest
// names none, so kubectl sends them to the context's namespace.
const campaignNamespace = "default"

// manifestObject is one document of a manifest, decoded into its versioned
// type as the API server decodes a request body.
type manifestObject struct {
	doc  int // from 1, in file order
	obj  runtime.Object
	sent []byte // the document as JSON, as kubectl sends it
}

func (m manifestObject) String() string {
	kind := m.obj.GetObjectKind().GroupVersionKind().Kind
	name := ""
	if accessor, err := meta.Accessor(m.obj); err == nil {
		name = accessor.GetName()
	}
	return fmt.Sprintf("%s document %d (%s %s)", campaignManifest, m.doc, kind, name)
}

// readManifest decodes every document of a multi-document YAML strictly, as
// kube-apiserver does with kubectl's default field validation (Strict): an
// unknown or repeated field is an error.
func readManifest(path string) ([]manifestObject, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decodeManifest(path, data)
}

func decodeManifest(path string, data []byte) ([]manifestObject, error) {
	strict := runtimejson.NewSerializerWithOptions(runtimejson.DefaultMetaFactory, legacyscheme.Scheme, legacyscheme.Scheme,
		runtimejson.SerializerOptions{Yaml: true, Strict: true})
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objects []manifestObject
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objects, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w", path, doc, err)
		}
		obj, _, err := strict.Decode(raw, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w", path, doc, err)
		}
		sent, err := utilyaml.ToJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w", path, doc, err)
		}
		objects = append(objects, manifestObject{doc: doc, obj: obj, sent: sent})
	}
}

// createStrategy is the registry strategy kube-apiserver creates an object of
// this internal type with. Only the kinds the campaign manifest holds are
// known; anything else is an error, so a new kind in the manifest cannot go
// unchecked.
func createStrategy(obj runtime.Object) (rest.RESTCreateStrategy, error) {
	switch obj.(type) {
	case *batch.Job:
		return jobregistry.Strategy, nil
	case *core.ConfigMap:
		return configmapregistry.Strategy, nil
	case *core.PersistentVolumeClaim:
		return pvcregistry.Strategy, nil
	}
	return nil, fmt.Errorf("no create strategy known for %T", obj)
}

// createOnServer does to a decoded object what kube-apiserver v1.36 does on
// create, short of admission and storage: the codec's defaulting of the
// versioned object and its conversion to the internal type through the
// server's scheme, then the generic store's system fields and
// rest.BeforeCreate with the kind's own strategy (PrepareForCreate, which for
// a Job drops fields of disabled gates and generates the selector and the
// template's job-name and controller-uid labels; Validate, which for a Job is
// ValidateJob with the strategy's create options; the common ObjectMeta
// validation). It returns the internal object as it would be stored and the
// warnings the server would send back (the strategy's WarningsOnCreate).
func createOnServer(versioned runtime.Object) (runtime.Object, []string, error) {
	obj := versioned.DeepCopyObject()
	legacyscheme.Scheme.Default(obj)
	gvk := obj.GetObjectKind().GroupVersionKind()
	internal, err := legacyscheme.Scheme.ConvertToVersion(obj, schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		return nil, nil, fmt.Errorf("converting %s to the internal version: %w", gvk, err)
	}
	strategy, err := createStrategy(internal)
	if err != nil {
		return nil, nil, err
	}
	accessor, err := meta.Accessor(internal)
	if err != nil {
		return nil, nil, err
	}
	rest.FillObjectMetaSystemFields(accessor)
	warnings := &warningList{}
	ctx := withRequestInfo(genericapirequest.WithNamespace(context.Background(), campaignNamespace), gvk)
	ctx = warning.WithWarningRecorder(ctx, warnings)
	if err := rest.BeforeCreate(strategy, ctx, internal); err != nil {
		return nil, nil, err
	}
	return internal, warnings.texts, nil
}

// warningList records the warnings a create adds to its response.
type warningList struct{ texts []string }

func (w *warningList) AddWarning(_, text string) { w.texts = append(w.texts, text) }

// droppedFields lists the fields the document sets that the stored object no
// longer holds, or holds with another value: the server defaults and adds
// fields but must not silently drop one the manifest relies on (as
// PrepareForCreate does with the fields of a disabled feature gate). It
// walks the document as written, not the decoded object, whose required
// fields marshal even where the document leaves them to the defaults.
func droppedFields(object manifestObject, stored runtime.Object) ([]string, error) {
	version := object.obj.GetObjectKind().GroupVersionKind().GroupVersion()
	back, err := legacyscheme.Scheme.ConvertToVersion(stored, version)
	if err != nil {
		return nil, fmt.Errorf("converting back to %s: %w", version, err)
	}
	storedJSON, err := json.Marshal(back)
	if err != nil {
		return nil, err
	}
	var sentTree, storedTree any
	if err := json.Unmarshal(object.sent, &sentTree); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(storedJSON, &storedTree); err != nil {
		return nil, err
	}
	var dropped []string
	collectDropped("", sentTree, storedTree, &dropped)
	return dropped, nil
}

// collectDropped walks what was sent and appends the path of every value the
// stored tree lacks or holds otherwise. Lists must keep their length and
// order: the campaign's lists (containers, rules, mounts) are ordered.
func collectDropped(path string, sent, stored any, dropped *[]string) {
	switch sentValue := sent.(type) {
	case map[string]any:
		storedMap, ok := stored.(map[string]any)
		if !ok {
			*dropped = append(*dropped, path)
			return
		}
		keys := make([]string, 0, len(sentValue))
		for key := range sentValue {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			child := key
			if path != "" {
				child = path + "." + key
			}
			storedChild, ok := storedMap[key]
			if !ok {
				*dropped = append(*dropped, child)
				continue
			}
			collectDropped(child, sentValue[key], storedChild, dropped)
		}
	case []any:
		storedList, ok := stored.([]any)
		if !ok || len(storedList) != len(sentValue) {
			*dropped = append(*dropped, path)
			return
		}
		for i := range sentValue {
			collectDropped(fmt.Sprintf("%s[%d]", path, i), sentValue[i], storedList[i], dropped)
		}
	default:
		if !reflect.DeepEqual(sent, stored) {
			*dropped = append(*dropped, path)
		}
	}
}

// createViolation is one field error of a refused create: the field's path
// and upstream's error type (field.ErrorType, e.g. FieldValueRequired).
type createViolation struct {
	Field string
	Type  field.ErrorType
}

// createViolations lists the field errors an Invalid error from createOnServer
// carries; any other error fails the test.
func createViolations(t *testing.T, err error) []createViolation {
	t.Helper()
	var status apierrors.APIStatus
	require.True(t, errors.As(err, &status) && status.Status().Reason == metav1.StatusReasonInvalid,
		"want an Invalid status error, got %v", err)
	require.NotNil(t, status.Status().Details, "Invalid error without details: %v", err)
	var violations []createViolation
	for _, cause := range status.Status().Details.Causes {
		violations = append(violations, createViolation{Field: cause.Field, Type: field.ErrorType(cause.Type)})
	}
	return violations
}

// TestCampaignManifestCreates creates every object of the campaign manifest as
// kube-apiserver v1.36.3 would (createOnServer): each must pass the server's
// validation without a warning, and keep every field the manifest sets.
func TestCampaignManifestCreates(t *testing.T) {
	requireJobGatesAtDefault(t)
	objects, err := readManifest(campaignManifest)
	require.NoError(t, err)
	var kinds []string
	for _, object := range objects {
		kinds = append(kinds, object.obj.GetObjectKind().GroupVersionKind().String())
		stored, warnings, err := createOnServer(object.obj)
		require.NoError(t, err, "%s: the API server refuses it", object)
		assert.Empty(t, warnings, "%s: the API server warns", object)
		dropped, err := droppedFields(object, stored)
		require.NoError(t, err, "%s", object)
		assert.Empty(t, dropped, "%s: the API server drops these fields on create", object)
	}
	// The manifest is what docs/campaign.md says it is: a new kind is
	// refused by createStrategy, a lost one shows here.
	assert.Equal(t, []string{"/v1, Kind=ConfigMap", "/v1, Kind=PersistentVolumeClaim", "batch/v1, Kind=Job"}, kinds)
}

// requireJobGatesAtDefault checks that the gates the Job strategy reads on
// create hold their v1.36 defaults, all on: with one off, PrepareForCreate
// would drop the manifest's fields (backoffLimitPerIndex and every FailIndex
// rule with JobBackoffLimitPerIndex) before validation. The conformance tests
// that change gates reset them; this guards against one that does not.
func requireJobGatesAtDefault(t *testing.T) {
	t.Helper()
	for _, gate := range jobGates() {
		require.True(t, utilfeature.DefaultFeatureGate.Enabled(gate), "feature gate %s is off", gate)
	}
}

// campaignObjects reads the manifest and returns its objects by kind, for the
// cases that change one of them.
func campaignObjects(t *testing.T) (*corev1.ConfigMap, *corev1.PersistentVolumeClaim, *batchv1.Job) {
	t.Helper()
	objects, err := readManifest(campaignManifest)
	require.NoError(t, err)
	var (
		configMap *corev1.ConfigMap
		claim     *corev1.PersistentVolumeClaim
		job       *batchv1.Job
	)
	for _, object := range objects {
		switch typed := object.obj.(type) {
		case *corev1.ConfigMap:
			configMap = typed
		case *corev1.PersistentVolumeClaim:
			claim = typed
		case *batchv1.Job:
			job = typed
		}
	}
	require.NotNil(t, configMap, "no ConfigMap in %s", campaignManifest)
	require.NotNil(t, claim, "no PersistentVolumeClaim in %s", campaignManifest)
	require.NotNil(t, job, "no Job in %s", campaignManifest)
	return configMap, claim, job
}

// TestCampaignManifestRefusals shows that createOnServer refuses what the
// API server refuses: each case breaks one rule in a parsed copy of the
// manifest, and the create must fail with exactly upstream's field errors.
func TestCampaignManifestRefusals(t *testing.T) {
	requireJobGatesAtDefault(t)
	tests := []struct {
		name string
		// pick returns the object to create, changed.
		pick func(*corev1.ConfigMap, *corev1.PersistentVolumeClaim, *batchv1.Job) runtime.Object
		want []createViolation
	}{{
		// The pod template's restartPolicy defaults to Always, which a
		// Job refuses whatever its failure policy.
		name: "job without restartPolicy",
		pick: func(_ *corev1.ConfigMap, _ *corev1.PersistentVolumeClaim, job *batchv1.Job) runtime.Object {
			job.Spec.Template.Spec.RestartPolicy = ""
			return job
		},
		want: []createViolation{{"spec.template.spec.restartPolicy", field.ErrorTypeRequired}},
	}, {
		name: "job with restartPolicy OnFailure and a pod failure policy",
		pick: func(_ *corev1.ConfigMap, _ *corev1.PersistentVolumeClaim, job *batchv1.Job) runtime.Object {
			job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			return job
		},
		want: []createViolation{{"spec.template.spec.restartPolicy", field.ErrorTypeInvalid}},
	}, {
		name: "job with a FailIndex rule and no backoffLimitPerIndex",
		pick: func(_ *corev1.ConfigMap, _ *corev1.PersistentVolumeClaim, job *batchv1.Job) runtime.Object {
			job.Spec.BackoffLimitPerIndex = nil
			return job
		},
		want: []createViolation{{"spec.podFailurePolicy.rules[0].action", field.ErrorTypeInvalid}},
	}, {
		name: "indexed job without completions",
		pick: func(_ *corev1.ConfigMap, _ *corev1.PersistentVolumeClaim, job *batchv1.Job) runtime.Object {
			job.Spec.Completions = nil
			return job
		},
		want: []createViolation{{"spec.completions", field.ErrorTypeRequired}},
	}, {
		name: "indexed job with a parallelism above 100 000",
		pick: func(_ *corev1.ConfigMap, _ *corev1.PersistentVolumeClaim, job *batchv1.Job) runtime.Object {
			job.Spec.Parallelism = ptr.To[int32](100_001)
			return job
		},
		want: []createViolation{{"spec.parallelism", field.ErrorTypeInvalid}},
	}, {
		// An Indexed Job's pods are named <job>-<index>, which must be
		// a DNS label: no dots.
		name: "indexed job named with a dot",
		pick: func(_ *corev1.ConfigMap, _ *corev1.PersistentVolumeClaim, job *batchv1.Job) runtime.Object {
			job.Name = "nodeproof.campaign"
			return job
		},
		want: []createViolation{{"metadata.name", field.ErrorTypeInvalid}},
	}, {
		name: "exit-code rule naming no container of the pod",
		pick: func(_ *corev1.ConfigMap, _ *corev1.PersistentVolumeClaim, job *batchv1.Job) runtime.Object {
			job.Spec.PodFailurePolicy.Rules[1].OnExitCodes.ContainerName = ptr.To("shard")
			return job
		},
		want: []createViolation{{"spec.podFailurePolicy.rules[1].onExitCodes.containerName", field.ErrorTypeInvalid}},
	}, {
		name: "invalid label value on the pod template",
		pick: func(_ *corev1.ConfigMap, _ *corev1.PersistentVolumeClaim, job *batchv1.Job) runtime.Object {
			job.Spec.Template.Labels["app.kubernetes.io/name"] = "nodeproof campaign"
			return job
		},
		want: []createViolation{{"spec.template.labels", field.ErrorTypeInvalid}},
	}, {
		// With manualSelector the server generates no selector and no
		// labels: the template must carry the selector's.
		name: "manual selector the pod template does not match",
		pick: func(_ *corev1.ConfigMap, _ *corev1.PersistentVolumeClaim, job *batchv1.Job) runtime.Object {
			job.Spec.ManualSelector = ptr.To(true)
			job.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "other"}}
			return job
		},
		want: []createViolation{{"spec.template.metadata.labels", field.ErrorTypeInvalid}},
	}, {
		name: "negative runAsUser",
		pick: func(_ *corev1.ConfigMap, _ *corev1.PersistentVolumeClaim, job *batchv1.Job) runtime.Object {
			job.Spec.Template.Spec.SecurityContext.RunAsUser = ptr.To[int64](-1)
			return job
		},
		want: []createViolation{{"spec.template.spec.securityContext.runAsUser", field.ErrorTypeInvalid}},
	}, {
		name: "container that may not escalate adding CAP_SYS_ADMIN",
		pick: func(_ *corev1.ConfigMap, _ *corev1.PersistentVolumeClaim, job *batchv1.Job) runtime.Object {
			job.Spec.Template.Spec.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"CAP_SYS_ADMIN"}
			return job
		},
		want: []createViolation{{"spec.template.spec.containers[0].securityContext", field.ErrorTypeInvalid}},
	}, {
		name: "volume mount naming no volume",
		pick: func(_ *corev1.ConfigMap, _ *corev1.PersistentVolumeClaim, job *batchv1.Job) runtime.Object {
			job.Spec.Template.Spec.Volumes = job.Spec.Template.Spec.Volumes[:2]
			return job
		},
		want: []createViolation{{"spec.template.spec.containers[0].volumeMounts[2].name", field.ErrorTypeNotFound}},
	}, {
		name: "memory limit below the request",
		pick: func(_ *corev1.ConfigMap, _ *corev1.PersistentVolumeClaim, job *batchv1.Job) runtime.Object {
			// the manifest's limit is 4Gi
			job.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("8Gi")
			return job
		},
		want: []createViolation{{"spec.template.spec.containers[0].resources.requests", field.ErrorTypeInvalid}},
	}, {
		name: "claim without access modes",
		pick: func(_ *corev1.ConfigMap, claim *corev1.PersistentVolumeClaim, _ *batchv1.Job) runtime.Object {
			claim.Spec.AccessModes = nil
			return claim
		},
		want: []createViolation{{"spec.accessModes", field.ErrorTypeRequired}},
	}, {
		name: "claim with an unknown access mode",
		pick: func(_ *corev1.ConfigMap, claim *corev1.PersistentVolumeClaim, _ *batchv1.Job) runtime.Object {
			claim.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadWriteAll"}
			return claim
		},
		want: []createViolation{{"spec.accessModes", field.ErrorTypeNotSupported}},
	}, {
		name: "claim without a storage request",
		pick: func(_ *corev1.ConfigMap, claim *corev1.PersistentVolumeClaim, _ *batchv1.Job) runtime.Object {
			claim.Spec.Resources.Requests = nil
			return claim
		},
		want: []createViolation{{"spec.resources[storage]", field.ErrorTypeRequired}},
	}, {
		name: "config map with a key that is no file name",
		pick: func(configMap *corev1.ConfigMap, _ *corev1.PersistentVolumeClaim, _ *batchv1.Job) runtime.Object {
			configMap.Data["plan/yaml"] = configMap.Data["plan.yaml"]
			return configMap
		},
		want: []createViolation{{"data[plan/yaml]", field.ErrorTypeInvalid}},
	}, {
		name: "config map with an invalid label key",
		pick: func(configMap *corev1.ConfigMap, _ *corev1.PersistentVolumeClaim, _ *batchv1.Job) runtime.Object {
			configMap.Labels["-app"] = "nodeproof"
			return configMap
		},
		want: []createViolation{{"metadata.labels", field.ErrorTypeInvalid}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configMap, claim, job := campaignObjects(t)
			_, _, err := createOnServer(tt.pick(configMap, claim, job))
			require.Error(t, err)
			assert.Equal(t, tt.want, createViolations(t, err), "%v", err)
		})
	}
}

// TestCampaignManifestDroppedFields shows that droppedFields names a field the
// server accepts but does not keep: a status written into the Job's document,
// which PrepareForCreate clears.
func TestCampaignManifestDroppedFields(t *testing.T) {
	requireJobGatesAtDefault(t)
	data, err := os.ReadFile(campaignManifest)
	require.NoError(t, err)
	// The Job is the last document, so the lines append to it.
	objects, err := decodeManifest(campaignManifest, append(data, "status:\n  active: 1\n"...))
	require.NoError(t, err)
	job := objects[len(objects)-1]
	require.IsType(t, &batchv1.Job{}, job.obj, "the last document of %s", campaignManifest)
	stored, _, err := createOnServer(job.obj)
	require.NoError(t, err)
	dropped, err := droppedFields(job, stored)
	require.NoError(t, err)
	assert.Equal(t, []string{"status.active"}, dropped)
}

// TestCampaignManifestStrictDecode shows that readManifest's decoding refuses
// what kube-apiserver refuses under kubectl's default field validation: an
// unknown field and a repeated one.
func TestCampaignManifestStrictDecode(t *testing.T) {
	for name, document := range map[string]string{
		"unknown field":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndatum:\n  k: v\n",
		"repeated field": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := decodeManifest("test.yaml", []byte(document))
			require.Error(t, err)
			assert.True(t, runtime.IsStrictDecodingError(errors.Unwrap(err)), "want a strict decoding error, got %v", err)
		})
	}
}

// TestCampaignManifestWarnings shows that createOnServer returns what the
// strategies warn about on create: a deprecated node label in the Job's pod
// template and a fractional byte count for a claim.
func TestCampaignManifestWarnings(t *testing.T) {
	requireJobGatesAtDefault(t)
	_, claim, job := campaignObjects(t)
	job.Spec.Template.Spec.NodeSelector = map[string]string{"beta.kubernetes.io/arch": "amd64"}
	_, warnings, err := createOnServer(job)
	require.NoError(t, err)
	require.Len(t, warnings, 1)
	assert.True(t, strings.HasPrefix(warnings[0], "spec.template.spec.nodeSelector[beta.kubernetes.io/arch]: deprecated"), warnings[0])

	claim.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("1500m")
	_, warnings, err = createOnServer(claim)
	require.NoError(t, err)
	require.Len(t, warnings, 1)
	assert.True(t, strings.HasPrefix(warnings[0], "spec.resources.requests[storage]: fractional byte value"), warnings[0])
}
