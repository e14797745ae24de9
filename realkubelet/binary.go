package realkubelet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Version is the kubelet release the harness runs: the one nodeproof
// models. The Makefile's KUBELET_VERSION and the build module's
// requirement of k8s.io/kubernetes name the same (a test compares them).
const Version = "v1.36.3"

// BinaryEnv names the environment variable that points the harness at a
// kubelet binary of the caller's choice, in place of the cached build.
const BinaryEnv = "NODEPROOF_KUBELET"

// modulePath is the root module's path, which tells its go.mod from the
// nested modules'.
const modulePath = "github.com/nodeproof/nodeproof"

// ErrNotBuilt says there is no kubelet binary yet: `make kubelet` (or
// Binary) builds it.
var ErrNotBuilt = errors.New("no kubelet binary: `make kubelet` builds bin/kubelet-" + Version)

// Find returns the kubelet binary without building it: $NODEPROOF_KUBELET,
// else bin/kubelet-<Version> under the module root (found from the working
// directory up). It returns ErrNotBuilt when neither exists.
func Find() (string, error) {
	if b := os.Getenv(BinaryEnv); b != "" {
		if _, err := os.Stat(b); err != nil {
			return "", fmt.Errorf("realkubelet: $%s: %w", BinaryEnv, err)
		}
		return b, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	path := cachePath(root)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "", ErrNotBuilt
	} else if err != nil {
		return "", err
	}
	return path, nil
}

// Binary finds the kubelet binary, or builds it into the cache when there
// is none. A cold build compiles the kubelet and its dependencies from the
// module proxy (minutes to tens of minutes); later ones only relink.
func Binary(ctx context.Context) (string, error) {
	path, err := Find()
	if !errors.Is(err, ErrNotBuilt) {
		return path, err
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	path = cachePath(root)
	// The build module sits in the source tree (realkubelet/build); the
	// version is stamped, or the kubelet calls itself v0.0.0-master.
	cmd := exec.CommandContext(ctx, "go", "build",
		"-ldflags", "-X k8s.io/component-base/version.gitVersion="+Version,
		"-o", path, "k8s.io/kubernetes/cmd/kubelet")
	cmd.Dir = filepath.Join(root, "realkubelet", "build")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("realkubelet: building the kubelet in %s: %w\n%s", cmd.Dir, err, out)
	}
	return path, nil
}

func cachePath(root string) string {
	return filepath.Join(root, "bin", "kubelet-"+Version)
}

// moduleRoot is the nearest directory, from the working directory up, whose
// go.mod declares the root module.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if declaresRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("realkubelet: no go.mod of %s above the working directory", modulePath)
		}
		dir = parent
	}
}

func declaresRoot(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module ")) == modulePath
		}
	}
	return false
}
