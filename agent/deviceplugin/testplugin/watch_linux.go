package testplugin

import (
	"bytes"
	"encoding/binary"
	"os"

	"golang.org/x/sys/unix"
)

// dirWatcher reports files created in one directory, through inotify. The
// descriptor is non-blocking, so os.File parks reads in the runtime's poller
// and close wakes a pending wait.
type dirWatcher struct {
	f   *os.File
	buf []byte
}

func watchDir(dir string) (*dirWatcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	// A socket appears through bind (IN_CREATE); a file renamed into the
	// directory appears through IN_MOVED_TO.
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &dirWatcher{f: os.NewFile(uintptr(fd), "inotify:"+dir), buf: make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))}, nil
}

// wait blocks until a file called name is created in the directory, and
// returns an error once the watcher is closed.
func (w *dirWatcher) wait(name string) error {
	for {
		n, err := w.f.Read(w.buf)
		if err != nil {
			return err
		}
		for b := w.buf[:n]; len(b) >= unix.SizeofInotifyEvent; {
			nameLen := int(binary.NativeEndian.Uint32(b[12:16]))
			end := unix.SizeofInotifyEvent + nameLen
			if end > len(b) {
				break
			}
			created := string(bytes.TrimRight(b[unix.SizeofInotifyEvent:end], "\x00"))
			if created == name {
				return nil
			}
			b = b[end:]
		}
	}
}

func (w *dirWatcher) close() { w.f.Close() }
