package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ReadInput reads the file at path, or stdin for "-", up to limit bytes and
// one more, so that the caller can refuse a file that is too large without
// reading a path such as /dev/zero without end. It returns the name to
// report the input by ("stdin" or the path). Its errors name the input once
// and say what is wrong in words: "adir: is a directory, not a file".
func ReadInput(path string, stdin io.Reader, limit int64) (name string, data []byte, err error) {
	r, name := stdin, "stdin"
	if path != "-" {
		name = path
		f, err := os.Open(path)
		if err != nil {
			return name, nil, InputError(path, err)
		}
		defer f.Close()
		if info, err := f.Stat(); err == nil && info.IsDir() {
			return name, nil, fmt.Errorf("%s: is a directory, not a file", path)
		}
		r = f
	}
	data, err = io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return name, nil, fmt.Errorf("%s: %v", name, unwrapPath(err))
	}
	return name, data, nil
}

// InputError says why path could not be opened, naming it once.
func InputError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", path)
	}
	return fmt.Errorf("%s: %v", path, unwrapPath(err))
}

// unwrapPath drops the "op path:" prefix of an *fs.PathError, whose path
// the caller already names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// MaxManifestBytes bounds what a command reads as manifests (-f, a
// campaign's --plan): far more than the manifests of a node's 110 pods or a
// campaign plan take, and a stop for a path such as /dev/zero.
const MaxManifestBytes = 32 << 20

// ReadManifest reads a manifest file, or stdin for "-", as ReadInput does,
// and refuses one larger than MaxManifestBytes. It returns the name to
// report the input by.
func ReadManifest(path string, stdin io.Reader) (name string, data []byte, err error) {
	name, data, err = ReadInput(path, stdin, MaxManifestBytes)
	if err != nil {
		return name, nil, err
	}
	if len(data) > MaxManifestBytes {
		return name, nil, fmt.Errorf("%s: larger than %d MiB; the manifests of a whole node, or a plan, are far smaller", name, MaxManifestBytes>>20)
	}
	return name, data, nil
}
