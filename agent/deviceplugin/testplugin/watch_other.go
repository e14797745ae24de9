//go:build !linux

package testplugin

import (
	"errors"
	"os"
	"path/filepath"
	"time"
)

// dirWatcher notices a file being created by polling for it, where inotify
// does not exist. The ticker lives only inside the plugin's re-registration
// goroutine; nothing synchronises on it.
type dirWatcher struct {
	dir  string
	last map[string]os.FileInfo
	done chan struct{}
}

func watchDir(dir string) (*dirWatcher, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	return &dirWatcher{dir: dir, last: map[string]os.FileInfo{}, done: make(chan struct{})}, nil
}

// wait blocks until a file called name appears that was not there at the
// previous check, and returns an error once the watcher is closed.
func (w *dirWatcher) wait(name string) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		info, err := os.Lstat(filepath.Join(w.dir, name))
		if err != nil {
			info = nil
		}
		prev, seen := w.last[name]
		w.last[name] = info
		if seen && info != nil && (prev == nil || !os.SameFile(prev, info)) {
			return nil
		}
		select {
		case <-tick.C:
		case <-w.done:
			return errors.New("watcher closed")
		}
	}
}

func (w *dirWatcher) close() { close(w.done) }
