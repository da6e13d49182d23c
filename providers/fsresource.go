package providers

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cairn-io/cairn/model"
)

// The parts of a file and a directory resource that are the same: the
// required path, the mode attribute, what a read, an apply and a delete
// find at the path, and the errors that name a missing parent.

// specPath reads a spec's required path attribute, cleaned by
// canonicalSpecPath.
func specPath(spec model.Spec) (string, error) {
	path, ok, err := specString(spec, "path")
	if err != nil {
		return "", err
	}
	if !ok || path == "" {
		return "", configErrorf("path", "required")
	}
	return canonicalSpecPath("path", path)
}

// canonicalModeAttr puts spec's mode attribute attr, when given, into out
// as four octal digits (CanonicalMode).
func canonicalModeAttr(spec, out model.Spec, attr string) error {
	m, ok := spec[attr]
	if !ok || m == nil {
		return nil
	}
	mode, err := CanonicalMode(m)
	if err != nil {
		return configErrorf(attr, "%v", err)
	}
	out[attr] = mode
	return nil
}

// locateStat resolves want's path (locate) and stats its target; fi is nil
// when nothing is there.
func locateStat(env Env, want model.Spec) (loc fileLocation, fi fs.FileInfo, err error) {
	if loc, err = locate(env, want); err != nil {
		return fileLocation{}, nil, err
	}
	fi, err = loc.stat()
	if errors.Is(err, fs.ErrNotExist) {
		return loc, nil, nil
	}
	return loc, fi, err
}

// locateRecorded resolves the path a state records (have.ID) and lstats
// it, for a delete; fi is nil when nothing is there.
func locateRecorded(env Env, have State) (loc fileLocation, fi fs.FileInfo, err error) {
	if loc, err = locate(env, model.Spec{"path": have.ID}); err != nil {
		return fileLocation{}, nil, err
	}
	fi, err = os.Lstat(loc.host)
	if errors.Is(err, fs.ErrNotExist) {
		return loc, nil, nil
	}
	return loc, fi, err
}

// desiredMode is the mode an apply leaves: want's mode when it names one,
// else the one have records, else def.
func desiredMode(want model.Spec, have State, def uint32) (uint32, error) {
	mode := def
	if have.Exists {
		if m, ok := have.Attrs["mode"].(string); ok {
			var err error
			if mode, err = parseMode(m); err != nil {
				return 0, err
			}
		}
	}
	if m, ok := want["mode"].(string); ok {
		wanted, err := parseMode(m)
		if err != nil {
			return 0, configErrorf("mode", "%v", err)
		}
		mode = wanted
	}
	return mode, nil
}

// chmodChanged sets the mode of loc's target when want names one that have
// does not record.
func chmodChanged(loc fileLocation, want model.Spec, have State, mode uint32) error {
	if m, ok := want["mode"].(string); !ok || m == have.Attrs["mode"] {
		return nil
	}
	if err := os.Chmod(loc.target, fileMode(mode)); err != nil {
		return fmt.Errorf("chmod %s: %w", loc.id, err)
	}
	return nil
}

// errNoParent is the error of creating id whose parent directory is
// missing.
func errNoParent(id string) error {
	return fmt.Errorf("parent directory of %s does not exist: declare a directory resource for %s", id, filepath.Dir(id))
}

// errParentNotDir is the error of creating id whose parent is no directory.
func errParentNotDir(id string) error {
	return fmt.Errorf("parent of %s is not a directory", id)
}
