package crianswers

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeproof/nodeproof/agent/cri"
)

// answer is one RPC's response: a message to decode the bytes into and
// the check that agent/cri applies to it, returning what a caller sees.
type answer struct {
	rpc   string
	new   func() proto.Message
	check func(proto.Message) (any, error)
}

var answers = []answer{
	{"ListImages", func() proto.Message { return &runtimeapi.ListImagesResponse{} },
		func(m proto.Message) (any, error) { return cri.FromListImages(m.(*runtimeapi.ListImagesResponse)) }},
	{"ListContainers", func() proto.Message { return &runtimeapi.ListContainersResponse{} },
		func(m proto.Message) (any, error) {
			return cri.FromListContainers(m.(*runtimeapi.ListContainersResponse))
		}},
	{"ListPodSandbox", func() proto.Message { return &runtimeapi.ListPodSandboxResponse{} },
		func(m proto.Message) (any, error) {
			return cri.FromListPodSandbox(m.(*runtimeapi.ListPodSandboxResponse))
		}},
	{"ContainerStatus", func() proto.Message { return &runtimeapi.ContainerStatusResponse{} },
		func(m proto.Message) (any, error) {
			return cri.FromContainerStatus(m.(*runtimeapi.ContainerStatusResponse))
		}},
	{"ImageFsInfo", func() proto.Message { return &runtimeapi.ImageFsInfoResponse{} },
		func(m proto.Message) (any, error) { return cri.FromImageFsInfo(m.(*runtimeapi.ImageFsInfoResponse)) }},
}

// seeds are well-formed answers of each RPC, and a few the checks refuse.
func seeds() map[string][]proto.Message {
	return map[string][]proto.Message{
		"ListImages": {
			&runtimeapi.ListImagesResponse{Images: []*runtimeapi.Image{
				{Id: "sha256:aa", RepoTags: []string{"registry.k8s.io/pause:3.10"}, Size: 1 << 20, Pinned: true},
				{Id: "sha256:bb", RepoDigests: []string{"example.com/app@sha256:cc"}, Size: 42, Spec: &runtimeapi.ImageSpec{RuntimeHandler: "kata"}},
			}},
			&runtimeapi.ListImagesResponse{Images: []*runtimeapi.Image{{Id: "sha256:aa"}, {Id: "sha256:aa"}}},
			&runtimeapi.ListImagesResponse{Images: []*runtimeapi.Image{{Id: "x", Size: 1 << 62}}},
		},
		"ListContainers": {
			&runtimeapi.ListContainersResponse{Containers: []*runtimeapi.Container{
				{Id: "c1", PodSandboxId: "s1", ImageRef: "sha256:aa", State: runtimeapi.ContainerState_CONTAINER_RUNNING, Metadata: &runtimeapi.ContainerMetadata{Name: "app"}},
				{Id: "c2", PodSandboxId: "s1", ImageId: "sha256:bb", ImageRef: "sha256:aa", State: runtimeapi.ContainerState_CONTAINER_EXITED},
			}},
			&runtimeapi.ListContainersResponse{Containers: []*runtimeapi.Container{{Id: "c1", PodSandboxId: "s1", State: 7}}},
		},
		"ListPodSandbox": {
			&runtimeapi.ListPodSandboxResponse{Items: []*runtimeapi.PodSandbox{
				{Id: "s1", State: runtimeapi.PodSandboxState_SANDBOX_READY, Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "default", Uid: "u"}},
			}},
		},
		"ContainerStatus": {
			&runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Mounts: []*runtimeapi.Mount{
				{ContainerPath: "/data", Image: &runtimeapi.ImageSpec{Image: "sha256:bb"}}, {ContainerPath: "/etc/hosts", HostPath: "/var/lib/x"},
			}}},
			&runtimeapi.ContainerStatusResponse{},
		},
		"ImageFsInfo": {
			&runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{
				{FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs"}, UsedBytes: &runtimeapi.UInt64Value{Value: 1 << 30}, InodesUsed: &runtimeapi.UInt64Value{Value: 100}},
			}},
			&runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{{FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: "relative"}}}},
		},
	}
}

// FuzzCRIAnswers decodes the bytes as the answer of the RPC the first byte
// picks and holds agent/cri's check of it to its contract.
func FuzzCRIAnswers(f *testing.F) {
	all := seeds()
	for i, a := range answers {
		for _, m := range all[a.rpc] {
			b, err := proto.Marshal(m)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(byte(i), b)
		}
	}
	f.Fuzz(func(t *testing.T, pick byte, data []byte) {
		a := answers[int(pick)%len(answers)]
		msg := a.new()
		if err := proto.Unmarshal(data, msg); err != nil {
			return // the gRPC client would have failed the call: no answer to check
		}
		got, err := a.check(msg)
		if err != nil {
			var re *cri.ResponseError
			if !errors.As(err, &re) {
				t.Fatalf("%s: error %v (%T) is not a *cri.ResponseError", a.rpc, err, err)
			}
			if re.RPC != a.rpc || re.Field == "" || re.Rule == "" {
				t.Fatalf("%s: error %+v does not name the RPC, the field and the rule", a.rpc, re)
			}
			return
		}
		if msg := keepsPromises(got); msg != "" {
			t.Fatalf("%s: accepted an answer whose values break the check's promise: %s\nvalues: %+v", a.rpc, msg, got)
		}
	})
}

// keepsPromises says how accepted values break what the checks promise, or
// "" when they do not.
func keepsPromises(got any) string {
	switch v := got.(type) {
	case []cri.Image:
		seen := map[string]bool{}
		for i, img := range v {
			switch {
			case img.ID == "":
				return fmt.Sprintf("images[%d] has no ID", i)
			case seen[img.ID]:
				return fmt.Sprintf("images[%d]'s ID %q twice", i, img.ID)
			case img.SizeBytes < 0 || img.SizeBytes > cri.MaxSizeBytes:
				return fmt.Sprintf("images[%d]'s size %d outside [0, MaxSizeBytes]", i, img.SizeBytes)
			}
			seen[img.ID] = true
			for _, n := range append(append([]string(nil), img.RepoTags...), img.RepoDigests...) {
				if n == "" {
					return fmt.Sprintf("images[%d] has an empty name", i)
				}
			}
		}
	case []cri.Container:
		for i, c := range v {
			if c.ID == "" || c.PodSandboxID == "" || c.ImageID == "" {
				return fmt.Sprintf("containers[%d] lacks an ID, sandbox or image: %+v", i, c)
			}
			if _, ok := runtimeapi.ContainerState_name[int32(c.State)]; !ok {
				return fmt.Sprintf("containers[%d] has state %d", i, c.State)
			}
		}
	case []cri.Sandbox:
		for i, s := range v {
			if s.ID == "" {
				return fmt.Sprintf("items[%d] has no ID", i)
			}
			if _, ok := runtimeapi.PodSandboxState_name[int32(s.State)]; !ok {
				return fmt.Sprintf("items[%d] has state %d", i, s.State)
			}
		}
	case []string:
		for i, img := range v {
			if img == "" {
				return fmt.Sprintf("mounted image %d is empty", i)
			}
		}
	case []cri.Filesystem:
		if len(v) == 0 {
			return "no image filesystem"
		}
		for i, fs := range v {
			if !filepath.IsAbs(fs.Mountpoint) || fs.UsedBytes < 0 || fs.UsedBytes > cri.MaxSizeBytes || fs.InodesUsed < 0 {
				return fmt.Sprintf("image_filesystems[%d] is %+v", i, fs)
			}
		}
	default:
		return fmt.Sprintf("unexpected values of type %T", got)
	}
	return ""
}
