package deviceplugin

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
)

// readCheckpoint reads and decodes the checkpoint file in dir. A missing file
// is checkpoint.ErrNotFound, as in the kubelet's checkpoint manager.
func readCheckpoint(dir string) (checkpoint.Data, error) {
	path := filepath.Join(dir, devicemanager.CheckpointName)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return checkpoint.Data{}, checkpoint.ErrNotFound
	}
	if err != nil {
		return checkpoint.Data{}, err
	}
	defer f.Close()
	// Read one byte past the limit, so that an oversized file reaches
	// Decode's size check instead of being loaded whole.
	b, err := io.ReadAll(io.LimitReader(f, checkpoint.MaxFileBytes+1))
	if err != nil {
		return checkpoint.Data{}, err
	}
	return checkpoint.Decode(b)
}

// keepAside renames a checkpoint the agent could not load, so the next write
// does not destroy the evidence (upstream leaves it to be overwritten). The
// new name carries the time and, if that name is taken, a counter.
func keepAside(dir string, now time.Time) (string, error) {
	path := filepath.Join(dir, devicemanager.CheckpointName)
	base := path + ".corrupt-" + now.UTC().Format("20060102T150405.000000000Z")
	for i := 0; i < 100; i++ {
		target := base
		if i > 0 {
			target = fmt.Sprintf("%s-%d", base, i)
		}
		if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		return target, os.Rename(path, target)
	}
	return "", fmt.Errorf("no free name to keep %s aside (tried %s and 99 more)", path, base)
}

// writeCheckpoint replaces the checkpoint file atomically: a crash leaves
// either the old file or the new one, never a torn one. As the kubelet's
// file store does, it writes a temporary file whose name starts with "."
// in the same directory, syncs and closes it, renames it over the
// checkpoint, then syncs the directory so the rename itself is durable.
func writeCheckpoint(dir string, d checkpoint.Data) error {
	b, err := checkpoint.Encode(d)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+devicemanager.CheckpointName+".tmp-*")
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, devicemanager.CheckpointName)); err != nil {
		return err
	}
	renamed = true
	return syncDir(dir)
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
