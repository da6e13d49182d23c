package providers

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// copyFilesProvider writes files read on the control plane (Fuel's
// copy_files task) on the node: each dst gets its src's bytes and the
// spec's permissions (default 0644); missing parent directories are
// created with dir_permissions (default 0755). The control plane reads the
// sources, inside CAIRN_FILES_DIR, when the graph is prepared and puts
// their bytes in the step as files[].contentBase64, which travels through
// the store, never through workflow history; a step without them fails.
//
// Only files whose bytes or mode differ are written (atomically). A change
// is compensated like file's: each file written gets its previous bytes
// and mode back, or is removed when it did not exist, and the directories
// the step created are removed when empty.
type copyFilesProvider struct{}

// NewCopyFiles returns the provider of kind copy_files.
func NewCopyFiles() Provider { return copyFilesProvider{} }

func (copyFilesProvider) Kind() string { return kinds.KindCopyFiles }

var copyFilesAttrs = map[string]kinds.AttrKind{
	"files": kinds.Property, "permissions": kinds.Property, "dir_permissions": kinds.Parameter, "timeout": kinds.Parameter,
}

func (copyFilesProvider) Attributes() map[string]kinds.AttrKind { return copyFilesAttrs }

// copiedFile is one file of a copy_files step, canonical: dst as the spec
// says it, content as base64.
type copiedFile struct {
	Src     string `json:"src"`
	Dst     string `json:"dst"`
	Content []byte `json:"content"`
}

// Canonicalize checks the files (each with its content read on the
// control plane) and the modes.
func (copyFilesProvider) Canonicalize(spec model.Spec) (model.Spec, error) {
	if err := checkAttrs(kinds.KindCopyFiles, spec, copyFilesAttrs); err != nil {
		return nil, err
	}
	files, err := copyFilesOf(spec)
	if err != nil {
		return nil, err
	}
	list := make([]any, len(files))
	for i, f := range files {
		list[i] = map[string]any{"src": f.Src, "dst": f.Dst, "contentBase64": base64.StdEncoding.EncodeToString(f.Content)}
	}
	out := model.Spec{"files": list, "permissions": "0644", "dir_permissions": "0755"}
	for attr := range map[string]bool{"permissions": true, "dir_permissions": true} {
		if v := spec[attr]; v != nil {
			m, err := CanonicalMode(v)
			if err != nil {
				return nil, configErrorf(attr, "%v", err)
			}
			out[attr] = m
		}
	}
	if v := spec["timeout"]; v != nil {
		d, err := CanonicalDuration(v)
		if err != nil {
			return nil, configErrorf("timeout", "%v", err)
		}
		out["timeout"] = d.String()
	}
	return out, nil
}

// copyFilesOf reads the spec's files; each needs src, dst and the content
// the control plane read.
func copyFilesOf(spec model.Spec) ([]copiedFile, error) {
	raw, ok := spec["files"].([]any)
	if !ok || len(raw) == 0 {
		return nil, configErrorf("files", "want a list of {src, dst}")
	}
	out := make([]copiedFile, 0, len(raw))
	seen := map[string]bool{}
	for i, item := range raw {
		at := fmt.Sprintf("files[%d]", i)
		m, ok := item.(map[string]any)
		if !ok {
			return nil, configErrorf(at, "want {src, dst}, got %s", nested.Describe(item))
		}
		src, _ := m["src"].(string)
		dst, _ := m["dst"].(string)
		if dst == "" {
			return nil, configErrorf(at+".dst", "required")
		}
		dst, err := canonicalSpecPath(at+".dst", dst)
		if err != nil {
			return nil, err
		}
		if seen[dst] {
			return nil, configErrorf(at+".dst", "%s is written twice", dst)
		}
		seen[dst] = true
		enc, ok := m["contentBase64"].(string)
		if !ok {
			return nil, configErrorf(at+".src", "%s was not read on the control plane: copy_files runs in graph executions, whose preparation reads sources inside CAIRN_FILES_DIR", src)
		}
		data, err := decodeBase64(enc)
		if err != nil {
			return nil, configErrorf(at+".contentBase64", "%v", err)
		}
		out = append(out, copiedFile{Src: src, Dst: dst, Content: data})
	}
	return out, nil
}

// previousFile is a file as it was before a step wrote it.
type previousFile struct {
	Dst    string `json:"dst"`
	Exists bool   `json:"exists"`
	Mode   string `json:"mode,omitempty"`
	Data   []byte `json:"data,omitempty"`
}

// Read compares every dst with what it should hold. Exists means all are
// in place; Outputs.pending names the others; Private keeps their bytes
// and modes for compensation.
func (copyFilesProvider) Read(_ context.Context, env Env, want model.Spec) (State, error) {
	files, err := copyFilesOf(want)
	if err != nil {
		return State{}, err
	}
	mode, _ := parseMode(want["permissions"].(string))
	var pending []string
	var prev []previousFile
	for _, f := range files {
		host, err := env.Node.Resolve(f.Dst)
		if err != nil {
			return State{}, err
		}
		fi, err := os.Stat(host)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			pending = append(pending, f.Dst)
			prev = append(prev, previousFile{Dst: f.Dst})
			continue
		case err != nil:
			return State{}, err
		case !fi.Mode().IsRegular():
			return State{}, fmt.Errorf("%s is not a regular file (%s)", f.Dst, fi.Mode().Type())
		}
		data, err := readRegular(host, fi.Size())
		if err != nil {
			return State{}, err
		}
		if string(data) == string(f.Content) && unixMode(fi.Mode()) == mode {
			continue
		}
		pending = append(pending, f.Dst)
		prev = append(prev, previousFile{Dst: f.Dst, Exists: true, Mode: formatMode(unixMode(fi.Mode())), Data: data})
	}
	st := State{Exists: len(pending) == 0, Outputs: map[string]any{"files": int64(len(files)), "pending": strings.Join(pending, ", ")}}
	if len(prev) > 0 {
		if st.Private, err = json.Marshal(prev); err != nil {
			return State{}, err
		}
	}
	return st, nil
}

// Plan writes unless every file is in place.
func (copyFilesProvider) Plan(_ model.Spec, have State) model.Action {
	if have.Exists {
		return model.ActionNoop
	}
	return model.ActionUpdate
}

// Apply writes the files that differ. Outputs lists each file's digest
// (never its bytes) and the directories it created.
func (copyFilesProvider) Apply(ctx context.Context, env Env, want model.Spec, _ State) (State, error) {
	files, err := copyFilesOf(want)
	if err != nil {
		return State{}, err
	}
	mode, _ := parseMode(want["permissions"].(string))
	dirMode, _ := parseMode(want["dir_permissions"].(string))
	var created []any
	digests := map[string]any{}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return State{}, context.Cause(ctx)
		}
		host, err := env.Node.Resolve(f.Dst)
		if err != nil {
			return State{}, err
		}
		dirs, err := mkdirParents(host, fileMode(dirMode))
		for _, d := range dirs {
			created = append(created, env.Node.onNodeOf(d))
		}
		if err != nil {
			return State{}, err
		}
		loc, err := locate(env, model.Spec{"path": f.Dst})
		if err != nil {
			return State{}, err
		}
		sum := sha256.Sum256(f.Content)
		digests[f.Dst] = hex.EncodeToString(sum[:])
		if fi, err := loc.stat(); err == nil && fi.Mode().IsRegular() && unixMode(fi.Mode()) == mode {
			if data, err := readRegular(loc.target, fi.Size()); err == nil && string(data) == string(f.Content) {
				continue
			}
		}
		if err := writeAtomic(ctx, loc, f.Content, mode, !loc.absent); err != nil {
			return State{}, err
		}
	}
	out := State{Exists: true, Outputs: map[string]any{"sha256": digests}}
	if len(created) > 0 {
		out.Outputs["createdDirs"] = created
	}
	return out, nil
}

// Delete has nothing to remove on its own: copy_files is undone by
// compensation.
func (copyFilesProvider) Delete(context.Context, Env, State) error { return nil }

// Reversible: the previous bytes are kept in the before-state.
func (copyFilesProvider) Reversible(model.Spec) bool { return true }

// Compensate restores each file the step wrote from the before-state and
// removes the directories it created, when empty.
func (copyFilesProvider) Compensate(_ context.Context, env Env, _ model.Spec, ch Change) error {
	if ch.Action == model.ActionNoop || ch.Action == "" {
		return nil
	}
	var prev []previousFile
	if len(ch.Before.Private) > 0 {
		if err := json.Unmarshal(ch.Before.Private, &prev); err != nil {
			return fmt.Errorf("before-state: %w", err)
		}
	}
	var errs []error
	for _, p := range prev {
		host, err := env.Node.Resolve(p.Dst)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !p.Exists {
			if err := os.Remove(host); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		mode, err := parseMode(p.Mode)
		if err != nil {
			mode = 0o644
		}
		loc := fileLocation{id: p.Dst, host: host, target: host}
		if err := writeAtomic(context.Background(), loc, p.Data, mode, true); err != nil {
			errs = append(errs, err)
		}
	}
	if dirs, ok := ch.After.Outputs["createdDirs"].([]any); ok {
		list := make([]string, 0, len(dirs))
		for _, d := range dirs {
			s, _ := d.(string)
			if host, err := env.Node.Resolve(s); err == nil && s != "" && host != filepath.Clean(env.Node.Root) {
				list = append(list, host)
			}
		}
		removeEmptyDirs(list)
	}
	return errors.Join(errs...)
}
