package providers

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cairn-io/cairn/model"
)

// ListQuery selects the objects an export lists (Puppet's get, whole or
// filtered by name or platform id).
type ListQuery = model.ListQuery

// Listed is one existing object in the form of a resource.
type Listed = model.Listed

// List enumerates the existing objects of kind on node, sorted by name.
// Kinds that hold no enumerable state (exec) refuse with a ConfigError.
func (r *Registry) List(ctx context.Context, kind string, node Node, q ListQuery) ([]Listed, error) {
	p, ok := r.Get(kind)
	if !ok {
		return nil, configErrorf("", "unknown kind %q", kind)
	}
	l, ok := p.(Lister)
	if !ok {
		return nil, configErrorf("", "kind %s cannot be listed: it has no state to export", p.Kind())
	}
	items, err := l.List(ctx, Env{Node: node}, q)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", p.Kind(), err)
	}
	if len(q.IDs) > 0 {
		items = slices.DeleteFunc(items, func(l Listed) bool { return l.ID == "" || !slices.Contains(q.IDs, l.ID) })
	}
	if len(q.Labels) > 0 {
		linked := func(ls []string) bool {
			return slices.ContainsFunc(ls, func(l string) bool { return slices.Contains(q.Labels, l) })
		}
		items = slices.DeleteFunc(items, func(l Listed) bool { return !linked(l.Labels) && !linked(l.LabelNames) })
	}
	slices.SortFunc(items, func(a, b Listed) int { return strings.Compare(a.Name, b.Name) })
	return items, nil
}

// List lists the regular files under q.Dir. Symlinks are not followed and
// the engine's own temporary files are left out. A file whose bytes are
// not UTF-8 is exported as contentBase64.
func (fileProvider) List(ctx context.Context, env Env, q ListQuery) ([]Listed, error) {
	return listTree(ctx, env, q, func(fi fs.FileInfo) bool { return fi.Mode().IsRegular() && !isTempFile(fi.Name()) },
		func(host, id string, fi fs.FileInfo) (model.Spec, error) {
			data, err := os.ReadFile(host)
			if err != nil {
				return nil, err
			}
			spec := model.Spec{"path": id, "mode": formatMode(unixMode(fi.Mode()))}
			if utf8.Valid(data) {
				spec["content"] = string(data)
			} else {
				spec["contentBase64"] = base64.StdEncoding.EncodeToString(data)
			}
			return spec, nil
		})
}

// List lists the directories under q.Dir.
func (directoryProvider) List(ctx context.Context, env Env, q ListQuery) ([]Listed, error) {
	return listTree(ctx, env, q, func(fi fs.FileInfo) bool { return fi.IsDir() },
		func(_, id string, fi fs.FileInfo) (model.Spec, error) {
			return model.Spec{"path": id, "mode": formatMode(unixMode(fi.Mode()))}, nil
		})
}

func isTempFile(name string) bool {
	return strings.HasSuffix(name, ".cairn-tmp") || strings.HasPrefix(name, ".cairn-") && strings.HasSuffix(name, ".tmp")
}

// listTree walks q.Dir (or looks up q.Names in it) and describes each
// entry that match accepts.
func listTree(ctx context.Context, env Env, q ListQuery, match func(fs.FileInfo) bool, describe func(host, id string, fi fs.FileInfo) (model.Spec, error)) ([]Listed, error) {
	if q.Dir == "" {
		return nil, configErrorf("dir", "required: the directory to list")
	}
	root, err := env.Node.Resolve(q.Dir)
	if err != nil {
		return nil, err
	}
	rootID, err := env.Node.OnNode(q.Dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("dir %s: %w", rootID, err)
	} else if !fi.IsDir() {
		return nil, configErrorf("dir", "%s is not a directory", rootID)
	}
	var out []Listed
	add := func(host, rel string, fi fs.FileInfo) error {
		id := filepath.Join(rootID, rel)
		spec, err := describe(host, id, fi)
		if err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		out = append(out, Listed{Name: filepath.ToSlash(rel), Spec: spec})
		return nil
	}
	if len(q.Names) > 0 {
		for _, name := range q.Names {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			rel := filepath.Clean(filepath.FromSlash(name))
			if rel == "." || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return nil, configErrorf("names", "%q is not a path inside %s", name, rootID)
			}
			host, err := env.Node.Resolve(filepath.Join(rootID, rel))
			if err != nil {
				return nil, err
			}
			if !q.Recursive && strings.ContainsRune(rel, filepath.Separator) {
				continue
			}
			fi, err := os.Lstat(host)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if match(fi) {
				if err := add(host, rel, fi); err != nil {
					return nil, err
				}
			}
		}
		return out, nil
	}
	err = filepath.WalkDir(root, func(host string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if host == root {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // gone while walking
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, host)
		if err != nil {
			return err
		}
		if match(fi) {
			if err := add(host, rel, fi); err != nil {
				return err
			}
		}
		if d.IsDir() && !q.Recursive {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
