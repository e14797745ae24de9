package outpath

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// File proves that a file can be written at path, creating its
// directory: the directory is writable and path is not a directory.
func File(path string) error {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return fmt.Errorf("%s: is a directory, not a file", path)
	}
	return Dir(filepath.Dir(path))
}

// Dir creates dir and proves a file can be written in it,
// leaving nothing behind: every output path is checked so before the work.
// When it fails, it removes the directories it made, so that a path that
// cannot be made whole (a name beyond NAME_MAX, a path beyond PATH_MAX, a
// file in the way) leaves no part of itself either.
func Dir(dir string) error {
	made, err := makeAll(dir)
	if err == nil {
		err = proveWritable(dir)
	}
	if err != nil {
		for i := len(made) - 1; i >= 0; i-- {
			if removeErr := os.Remove(made[i]); removeErr != nil {
				err = errors.Join(err, removeErr)
			}
		}
	}
	return err
}

// makeAll is os.MkdirAll that returns the directories it made, parents
// first.
func makeAll(dir string) ([]string, error) {
	var missing []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		// A name too long to stat is one to make, which then fails.
		if info, err := os.Stat(p); err == nil {
			// A file where a directory must be is named as such, not by
			// the write check that would fail inside it.
			if !info.IsDir() {
				return nil, &os.PathError{Op: "mkdir", Path: p, Err: syscall.ENOTDIR}
			}
			break
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		err := os.Mkdir(missing[i], 0o755)
		if err != nil {
			// Made meanwhile by someone else: theirs, not to remove.
			if info, statErr := os.Stat(missing[i]); statErr == nil && info.IsDir() {
				continue
			}
			return made, err
		}
		made = append(made, missing[i])
	}
	return made, nil
}

func proveWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".nodeproof-write-check-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
