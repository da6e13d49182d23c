package providers

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// ErrNotEmpty is wrapped by the error of removing a directory that holds
// entries.
var ErrNotEmpty = errors.New("directory not empty")

// directoryProvider manages one directory: it creates only the leaf (a
// missing parent is an error, not something to create silently) and
// removes only an empty directory. Whatever is inside a directory was not
// created by the directory resource — files and subdirectories are
// resources of their own, deleted or compensated before it in reverse
// dependency order — so deleting a directory that still holds entries, or
// compensating its creation, fails with ErrNotEmpty and names them instead
// of taking someone else's data with it.
type directoryProvider struct{}

// NewDirectory returns the provider of kind directory.
func NewDirectory() Provider { return directoryProvider{} }

func (directoryProvider) Kind() string { return "directory" }

var directoryAttrs = map[string]kinds.AttrKind{
	"path":   kinds.Namevar,
	"mode":   kinds.Property,
	"ensure": kinds.Property,
}

func (directoryProvider) Attributes() map[string]kinds.AttrKind { return directoryAttrs }

// defaultDirMode is the mode of a directory created without one.
const defaultDirMode = 0o755

func (directoryProvider) Canonicalize(spec model.Spec) (model.Spec, error) {
	if err := checkAttrs("directory", spec, directoryAttrs); err != nil {
		return nil, err
	}
	clean, err := specPath(spec)
	if err != nil {
		return nil, err
	}
	ensure, err := canonicalEnsure(spec, "directory")
	if err != nil {
		return nil, err
	}
	out := model.Spec{"path": clean, "ensure": ensure}
	if err := canonicalModeAttr(spec, out, "mode"); err != nil {
		return nil, err
	}
	return out, nil
}

func (directoryProvider) Read(_ context.Context, env Env, want model.Spec) (State, error) {
	loc, fi, err := locateStat(env, want)
	if err != nil {
		return State{}, err
	}
	if fi == nil {
		return State{ID: loc.id}, nil
	}
	if !fi.IsDir() {
		return State{}, fmt.Errorf("%s exists and is not a directory", loc.id)
	}
	return dirState(loc.id, unixMode(fi.Mode())), nil
}

// Apply creates the directory when missing and sets its mode. The mode is
// set with chmod after mkdir, so the umask does not change it.
func (directoryProvider) Apply(ctx context.Context, env Env, want model.Spec, have State) (State, error) {
	loc, err := locate(env, want)
	if err != nil {
		return State{}, err
	}
	mode, err := desiredMode(want, have, defaultDirMode)
	if err != nil {
		return State{}, err
	}
	if !have.Exists {
		parent := filepath.Dir(loc.target)
		if fi, err := os.Stat(parent); errors.Is(err, fs.ErrNotExist) {
			return State{}, errNoParent(loc.id)
		} else if err != nil {
			return State{}, err
		} else if !fi.IsDir() {
			return State{}, errParentNotDir(loc.id)
		}
		// Created private, opened up by the chmod below: never wider than
		// asked, even for a moment.
		if err := os.Mkdir(loc.target, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return State{}, fmt.Errorf("mkdir %s: %w", loc.id, err)
		}
		if err := os.Chmod(loc.target, fileMode(mode)); err != nil {
			return State{}, fmt.Errorf("chmod %s: %w", loc.id, err)
		}
		if d := deferredSync(ctx); d != nil {
			// A batch makes the new entry durable with its files.
			d.addDir(parent)
		}
		return dirState(loc.id, mode), nil
	}
	if err := chmodChanged(loc, want, have, mode); err != nil {
		return State{}, err
	}
	return dirState(loc.id, mode), nil
}

// Delete removes the directory if it is empty; one already gone is fine.
func (directoryProvider) Delete(_ context.Context, env Env, have State) error {
	loc, fi, err := locateRecorded(env, have)
	if err != nil || fi == nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink == 0 && !fi.IsDir() {
		return fmt.Errorf("%s exists and is not a directory", loc.id)
	}
	err = os.Remove(loc.host)
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
		return fmt.Errorf("%w: %s holds %s; only an empty directory is removed", ErrNotEmpty, loc.id, entrySample(loc.host))
	default:
		return fmt.Errorf("remove %s: %w", loc.id, err)
	}
}

// entrySample names a few entries of dir for a message.
func entrySample(dir string) string {
	f, err := os.Open(dir)
	if err != nil {
		return "entries"
	}
	defer f.Close()
	names, _ := f.Readdirnames(6)
	slices.Sort(names)
	if len(names) > 5 {
		names = append(names[:5], "…")
	}
	return strings.Join(names, ", ")
}

func dirState(id string, mode uint32) State {
	m := formatMode(mode)
	return State{
		Exists:  true,
		ID:      id,
		Attrs:   map[string]any{"path": id, "ensure": "present", "mode": m},
		Outputs: map[string]any{"path": id, "mode": m},
	}
}
