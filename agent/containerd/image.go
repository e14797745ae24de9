package containerd

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"time"

	digest "github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// BusyboxPath is where Debian's busybox-static installs its binary.
const BusyboxPath = "/bin/busybox"

// epoch is every file's and image's creation time, so the same image built
// twice has the same digests.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Layer is one uncompressed tar layer. Uncompressed, so that its blob size
// (what containerd's CRI reports) and the bytes it unpacks to differ only by
// the tar headers.
type Layer struct {
	blob []byte
}

// Digest is the layer's digest, which is also its diff ID.
func (l Layer) Digest() digest.Digest { return digest.FromBytes(l.blob) }

// SizeBytes is the layer blob's size.
func (l Layer) SizeBytes() int64 { return int64(len(l.blob)) }

// DataLayer is a layer holding one file, /data/<name>, of sizeBytes
// pseudo-random bytes drawn from seed: incompressible, and the same for the
// same arguments, so two images built with the same DataLayer share it.
func DataLayer(name string, sizeBytes int64, seed uint64) (Layer, error) {
	if sizeBytes < 0 {
		return Layer{}, fmt.Errorf("containerd: DataLayer %q: sizeBytes %d must not be negative", name, sizeBytes)
	}
	var seedBytes [32]byte
	binary.LittleEndian.PutUint64(seedBytes[:], seed)
	data := make([]byte, sizeBytes)
	rand.NewChaCha8(seedBytes).Read(data)
	return tarLayer(tarEntry{name: "data/" + name, body: data, mode: 0o644})
}

// BusyboxLayer is a layer with busybox-static's binary as /bin/busybox and
// /bin/sh and /bin/sleep linking to it: enough for a container that sleeps.
func BusyboxLayer() (Layer, error) {
	bin, err := os.ReadFile(BusyboxPath)
	if err != nil {
		return Layer{}, fmt.Errorf("containerd: reading busybox-static's binary: %w", err)
	}
	return tarLayer(
		tarEntry{name: "bin/", dir: true},
		tarEntry{name: "bin/busybox", body: bin, mode: 0o755},
		tarEntry{name: "bin/sh", link: "busybox"},
		tarEntry{name: "bin/sleep", link: "busybox"},
	)
}

type tarEntry struct {
	name, link string
	dir        bool
	body       []byte
	mode       int64
}

func tarLayer(entries ...tarEntry) (Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, ModTime: epoch, Mode: e.mode, Size: int64(len(e.body)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		switch {
		case e.dir:
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		case e.link != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, e.link, 0o777
		}
		if err := tw.WriteHeader(h); err != nil {
			return Layer{}, err
		}
		if _, err := tw.Write(e.body); err != nil {
			return Layer{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return Layer{}, err
	}
	return Layer{blob: buf.Bytes()}, nil
}

// Image is an image to build: a name (registry/repository:tag), its layers
// bottom first, and the command a container of it runs.
type Image struct {
	Name   string
	Layers []Layer
	Cmd    []string
}

// blob is one content-addressed file of an OCI layout.
type blob struct {
	desc ocispec.Descriptor
	data []byte
}

func jsonBlob(mediaType string, v any) (blob, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return blob{}, err
	}
	return blob{desc: ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(data), Size: int64(len(data))}, data: data}, nil
}

// build returns the image's blobs (config, layers, manifest last) and the
// manifest's descriptor for the index.
func (img Image) build() ([]blob, ocispec.Descriptor, error) {
	platform := ocispec.Platform{OS: "linux", Architecture: runtime.GOARCH}
	config := ocispec.Image{
		Created:  &epoch,
		Platform: platform,
		// The name in a label gives every image its own config, hence its
		// own ID, even when two images share all their layers.
		Config: ocispec.ImageConfig{Cmd: img.Cmd, Labels: map[string]string{"org.nodeproof.name": img.Name}},
		RootFS: ocispec.RootFS{Type: "layers"},
	}
	var blobs []blob
	var layerDescs []ocispec.Descriptor
	for _, l := range img.Layers {
		config.RootFS.DiffIDs = append(config.RootFS.DiffIDs, l.Digest())
		d := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageLayer, Digest: l.Digest(), Size: l.SizeBytes()}
		layerDescs = append(layerDescs, d)
		blobs = append(blobs, blob{desc: d, data: l.blob})
	}
	cfg, err := jsonBlob(ocispec.MediaTypeImageConfig, config)
	if err != nil {
		return nil, ocispec.Descriptor{}, err
	}
	manifest, err := jsonBlob(ocispec.MediaTypeImageManifest, ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageManifest,
		Config:    cfg.desc,
		Layers:    layerDescs,
	})
	if err != nil {
		return nil, ocispec.Descriptor{}, err
	}
	blobs = append(blobs, cfg, manifest)
	desc := manifest.desc
	desc.Platform = &platform
	// ctr import names an image after this annotation.
	desc.Annotations = map[string]string{"io.containerd.image.name": img.Name, ocispec.AnnotationRefName: img.Name}
	return blobs, desc, nil
}

// ID is the image's ID as containerd's CRI reports it: its config's digest.
func (img Image) ID() (string, error) {
	blobs, _, err := img.build()
	if err != nil {
		return "", err
	}
	return blobs[len(blobs)-2].desc.Digest.String(), nil
}

// WriteArchive writes images as one OCI image layout in a tar stream, each
// shared blob once.
func WriteArchive(w io.Writer, images ...Image) error {
	tw := tar.NewWriter(w)
	index := ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex}
	written := map[digest.Digest]bool{}
	writeFile := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, img := range images {
		blobs, desc, err := img.build()
		if err != nil {
			return fmt.Errorf("containerd: image %q: %w", img.Name, err)
		}
		for _, b := range blobs {
			if written[b.desc.Digest] {
				continue
			}
			written[b.desc.Digest] = true
			if err := writeFile("blobs/sha256/"+b.desc.Digest.Encoded(), b.data); err != nil {
				return err
			}
		}
		index.Manifests = append(index.Manifests, desc)
	}
	layout, err := json.Marshal(ocispec.ImageLayout{Version: ocispec.ImageLayoutVersion})
	if err != nil {
		return err
	}
	indexJSON, err := json.Marshal(index)
	if err != nil {
		return err
	}
	if err := writeFile(ocispec.ImageLayoutFile, layout); err != nil {
		return err
	}
	if err := writeFile(ocispec.ImageIndexFile, indexJSON); err != nil {
		return err
	}
	return tw.Close()
}
