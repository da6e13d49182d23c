package providers

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// fileProvider manages one regular file: its bytes (content, contentBase64
// or a rendered template) and mode. Writes are atomic: a temporary file in
// the same directory is written, synced and renamed over the target, so a
// reader sees the old bytes or the new ones, and an apply cut off half-way
// leaves the target untouched (the next apply replaces the stale temporary
// file). A new file is made unnamed and linked in once written
// (createUnnamed): the name shows all of it or nothing. The parent directory must exist: creating it is the job of a
// directory resource, which the file depends on through an auto-edge.
type fileProvider struct{}

// NewFile returns the provider of kind file.
func NewFile() Provider { return fileProvider{} }

func (fileProvider) Kind() string { return "file" }

var fileAttrs = map[string]kinds.AttrKind{
	"path":          kinds.Namevar,
	"content":       kinds.Property,
	"contentBase64": kinds.Property,
	"template":      kinds.Property,
	"vars":          kinds.Parameter,
	"mode":          kinds.Property,
	"ensure":        kinds.Property,
	"checksum":      kinds.ReadOnly,
	"size":          kinds.ReadOnly,
	"dirMode":       kinds.Parameter,
}

func (fileProvider) Attributes() map[string]kinds.AttrKind { return fileAttrs }

// maxTemplateOutput bounds a rendered file template.
const maxTemplateOutput = 64 << 20

// Canonicalize reduces the three ways of giving bytes to one: content holds
// the bytes (a Go string, binary-safe; a template is rendered with vars as
// its data, .x and .vars.x). Read-only attributes are dropped.
func (fileProvider) Canonicalize(spec model.Spec) (model.Spec, error) {
	if err := checkAttrs("file", spec, fileAttrs); err != nil {
		return nil, err
	}
	out := model.Spec{}
	var err error
	if out["path"], err = specPath(spec); err != nil {
		return nil, err
	}
	ensure, err := canonicalEnsure(spec, "file")
	if err != nil {
		return nil, err
	}
	out["ensure"] = ensure

	sources := 0
	for _, k := range []string{"content", "contentBase64", "template"} {
		if spec[k] != nil {
			sources++
		}
	}
	if sources > 1 {
		return nil, configErrorf("content", "give only one of content, contentBase64 and template")
	}
	if spec["vars"] != nil && spec["template"] == nil {
		return nil, configErrorf("vars", "vars are the data of a template; there is no template")
	}
	switch c := spec["content"].(type) {
	case nil:
	case string:
		out["content"] = c
	case int64, float64, bool:
		// An expression over a dependency's output keeps its type
		// ("{{ .deps.counter.value }}"); the file holds its text.
		out["content"] = fmt.Sprint(c)
	default:
		return nil, configErrorf("content", "want a string, got %s", nested.Describe(c))
	}
	if s, ok, err := specString(spec, "contentBase64"); err != nil {
		return nil, err
	} else if ok {
		b, err := decodeBase64(s)
		if err != nil {
			return nil, configErrorf("contentBase64", "%v", err)
		}
		out["content"] = string(b)
	}
	if s, ok, err := specString(spec, "template"); err != nil {
		return nil, err
	} else if ok {
		text, err := renderFileTemplate(s, spec["vars"])
		if err != nil {
			return nil, err
		}
		out["content"] = text
	}
	for _, attr := range []string{"mode", "dirMode"} {
		if err := canonicalModeAttr(spec, out, attr); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// renderFileTemplate renders a file's template with vars as its only data:
// env, secrets and dependency outputs reach it through vars, which are
// resolved before the step runs.
func renderFileTemplate(src string, vars any) (string, error) {
	var data map[string]any
	switch v := vars.(type) {
	case nil:
	case map[string]any:
		data = v
	default:
		return "", configErrorf("vars", "want an object, got %s", nested.Describe(vars))
	}
	text, missing, err := expr.Render(src, expr.Context{
		Env:    func(string) (string, bool) { return "", false },
		Vars:   data,
		Limits: expr.Limits{MaxOutput: maxTemplateOutput},
	})
	if err != nil {
		return "", configErrorf("template", "%v", err)
	}
	if !missing.Empty() {
		return "", configErrorf("template", "reads env %v or secrets %v directly; pass them in through vars", missing.Env, missing.Secrets)
	}
	return text, nil
}

func decodeBase64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	return b, nil
}

// DiffValue compares and shows content as its fingerprint, never as
// bytes: a plain sha256, or a keyed one when the content holds a secret.
func (fileProvider) DiffValue(env Env, want model.Spec, attr string) any {
	if s, ok := want[attr].(string); ok && attr == "content" {
		return fingerprintOf(env, want).sum([]byte(s))
	}
	return want[attr]
}

// fingerprintOf is how a file's bytes are fingerprinted for want in env:
// keyed when the desired content holds one of the step's secrets.
func fingerprintOf(env Env, want model.Spec) fingerprinter {
	content, _ := want["content"].(string)
	return contentFingerprinter(env, content)
}

// Read reports the file at the spec's path (or, for a delete without a
// spec, at the recorded id). Private holds the current bytes so that
// compensation can put them back exactly.
func (fileProvider) Read(_ context.Context, env Env, want model.Spec) (State, error) {
	loc, fi, err := locateStat(env, want)
	if err != nil {
		return State{}, err
	}
	if fi == nil {
		return State{ID: loc.id}, nil
	}
	if fi.IsDir() {
		return State{}, fmt.Errorf("%s is a directory, not a file", loc.id)
	}
	if !fi.Mode().IsRegular() {
		return State{}, fmt.Errorf("%s is not a regular file (%s)", loc.id, fi.Mode().Type())
	}
	data, err := readRegular(loc.target, fi.Size())
	if err != nil {
		return State{}, err
	}
	st := fileState(loc.id, data, unixMode(fi.Mode()), fingerprintOf(env, want))
	st.Private = data
	return st, nil
}

// Apply writes the bytes when they differ (or the file is missing) and
// sets the mode when it differs.
func (fileProvider) Apply(ctx context.Context, env Env, want model.Spec, have State) (State, error) {
	loc, err := locate(env, want)
	if err != nil {
		return State{}, err
	}
	content, hasContent := want["content"].(string)
	mode, err := desiredMode(want, have, 0o644)
	if err != nil {
		return State{}, err
	}
	fp := fingerprintOf(env, want)
	rewrite := !have.Exists || hasContent && fp.sum([]byte(content)) != have.Attrs["content"]
	if dm, ok := want["dirMode"].(string); ok && !have.Exists {
		// Fuel's upload_file creates the directories it writes into.
		dirMode, err := parseMode(dm)
		if err != nil {
			return State{}, configErrorf("dirMode", "%v", err)
		}
		if _, err := mkdirParents(loc.host, fileMode(dirMode)); err != nil {
			return State{}, err
		}
	}
	if rewrite {
		if err := writeAtomic(ctx, loc, []byte(content), mode, have.Exists); err != nil {
			return State{}, err
		}
		return fileState(loc.id, []byte(content), mode, fp), nil
	}
	if err := chmodChanged(loc, want, have, mode); err != nil {
		return State{}, err
	}
	after := State{Exists: true, ID: loc.id, Attrs: copyMap(have.Attrs), Outputs: copyMap(have.Outputs)}
	after.Attrs["mode"] = formatMode(mode)
	after.Outputs["mode"] = formatMode(mode)
	return after, nil
}

// Delete removes the file; one already gone is fine.
func (fileProvider) Delete(_ context.Context, env Env, have State) error {
	loc, fi, err := locateRecorded(env, have)
	if err != nil || fi == nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory, not a file", loc.id)
	}
	_ = os.Remove(tempPath(loc.target))
	if err := os.Remove(loc.host); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", loc.id, err)
	}
	return nil
}

// RestoreSpec recreates a previous file from its bytes and mode.
func (fileProvider) RestoreSpec(before State) (model.Spec, error) {
	path, _ := before.Attrs["path"].(string)
	if path == "" {
		path = before.ID
	}
	if path == "" {
		return nil, errors.New("previous state names no path")
	}
	spec := model.Spec{"path": path, "contentBase64": base64.StdEncoding.EncodeToString(before.Private)}
	if m, ok := before.Attrs["mode"]; ok {
		spec["mode"] = m
	}
	return spec, nil
}

// fileLocation is where a file or directory resource lives.
type fileLocation struct {
	id     string // the path as the node sees it: the object's identity
	host   string // the path on the worker
	target string // host, or where host leads when it is a symlink (inside the root)
	// What locate's lstat of host found, so that a read need not stat
	// again: absent when nothing was there, info when host is no symlink
	// (its target then is host itself).
	absent bool
	info   fs.FileInfo
}

// stat is os.Stat of the target, answered from locate's lstat when that
// already told.
func (loc fileLocation) stat() (fs.FileInfo, error) {
	switch {
	case loc.absent:
		return nil, &fs.PathError{Op: "lstat", Path: loc.host, Err: fs.ErrNotExist}
	case loc.info != nil:
		return loc.info, nil
	}
	return os.Stat(loc.target)
}

// locate resolves the spec's path (or the recorded id) on env's node.
func locate(env Env, want model.Spec) (fileLocation, error) {
	path, _ := want["path"].(string)
	if path == "" {
		path = env.ObjectID
	}
	if path == "" {
		return fileLocation{}, configErrorf("path", "required")
	}
	id, err := env.Node.OnNode(path)
	if err != nil {
		return fileLocation{}, err
	}
	host, err := env.Node.Resolve(path)
	if err != nil {
		return fileLocation{}, err
	}
	loc := fileLocation{id: id, host: host, target: host}
	fi, err := os.Lstat(host)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		loc.absent = true
	case err != nil:
	case fi.Mode()&fs.ModeSymlink != 0:
		if t, err := filepath.EvalSymlinks(host); err == nil {
			loc.target = t // Resolve has checked it stays inside the root
		}
	default:
		loc.info = fi
	}
	return loc, nil
}

// fileState is a file's state: its bytes fingerprinted by fp (content and
// checksum), its size and mode.
func fileState(id string, data []byte, mode uint32, fp fingerprinter) State {
	sum := fp.sum(data)
	m := formatMode(mode)
	return State{
		Exists:  true,
		ID:      id,
		Attrs:   map[string]any{"path": id, "ensure": "present", "content": sum, "mode": m, "checksum": sum, "size": int64(len(data))},
		Outputs: map[string]any{"path": id, "checksum": sum, "size": int64(len(data)), "mode": m},
	}
}

// tempPath is the one temporary file a write of target uses. A fixed name
// means a write cut off half-way leaves at most one stale file, which the
// next write replaces.
func tempPath(target string) string {
	dir, base := filepath.Split(target)
	name := "." + base + ".cairn-tmp"
	if len(name) > 255 {
		sum := sha256.Sum256([]byte(base))
		name = ".cairn-" + hex.EncodeToString(sum[:8]) + ".tmp"
	}
	return filepath.Join(dir, name)
}

// writeAtomic replaces loc's target with data and mode: temporary file in
// the same directory, fsync, rename, fsync of the directory. A target
// that was not there is created unnamed and linked in (createUnnamed) when
// the system allows. The previous
// owner is kept when the worker may set it. Under a DeferredSync the two
// fsyncs are left to it: the file and directory are recorded instead, and
// the data reaches the disk when the DeferredSync is synced.
func writeAtomic(ctx context.Context, loc fileLocation, data []byte, mode uint32, existed bool) (err error) {
	if !existed {
		if made, err := createUnnamed(ctx, loc, data, mode); made || err != nil {
			return err
		}
	}
	tmp := tempPath(loc.target)
	// The temporary file is written through its bare descriptor: an
	// os.File would register it with the poller, a call per file that a
	// short write to a regular file does not need.
	fd, err := createTemp(loc, tmp)
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				_ = syscall.Close(fd)
			}
			_ = os.Remove(tmp)
		}
	}()
	if existed {
		// Only a file that was there has an owner to keep. Before the
		// chmod: a change of owner clears the setuid and setgid bits.
		if fi, serr := os.Stat(loc.target); serr == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				_ = syscall.Fchown(fd, int(st.Uid), int(st.Gid)) // best effort: needs privilege
			}
		}
	}
	if err = fill(ctx, fd, data, mode, loc.id, tmp); err != nil {
		return err
	}
	closed = true
	if err = syscall.Close(fd); err != nil {
		return fmt.Errorf("close %s: %w", loc.id, err)
	}
	if err = os.Rename(tmp, loc.target); err != nil {
		return fmt.Errorf("rename into %s: %w", loc.id, err)
	}
	named(ctx, loc.target)
	return nil
}

// fill writes data to the new file open at fd and sets its mode; unless
// ctx defers syncs, it syncs the file (path is what a sync observer is
// told). id names the file in errors.
func fill(ctx context.Context, fd int, data []byte, mode uint32, id, path string) error {
	if err := writeAll(fd, data); err != nil {
		return fmt.Errorf("write %s: %w", id, err)
	}
	if err := retryEINTR(func() error { return syscall.Fchmod(fd, mode&0o7777) }); err != nil {
		return fmt.Errorf("chmod %s: %w", id, err)
	}
	if deferredSync(ctx) != nil {
		return nil
	}
	observeSync(ctx, path)
	if err := retryEINTR(func() error { return syscall.Fsync(fd) }); err != nil {
		return fmt.Errorf("sync %s: %w", id, err)
	}
	return nil
}

// named makes the name a write just gave target durable: its directory
// synced now or, under a DeferredSync, target and its directory recorded
// for it.
func named(ctx context.Context, target string) {
	dir := filepath.Dir(target)
	if d := deferredSync(ctx); d != nil {
		d.addFile(target)
		d.addDir(dir)
		return
	}
	syncDir(ctx, dir)
}

// createTemp creates tmp, the temporary file of a write of loc, and
// returns its descriptor, open for writing. A stale one left by a write
// cut off half-way is replaced; it is looked for only when the create
// finds it, so a clean write spends no call on it. O_EXCL never follows a
// symlink planted at the name. The parent directory is judged from the
// create's error too.
func createTemp(loc fileLocation, tmp string) (int, error) {
	open := func() (int, error) {
		var fd int
		err := retryEINTR(func() (err error) {
			fd, err = syscall.Open(tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0o600)
			return err
		})
		return fd, err
	}
	fd, err := open()
	if errors.Is(err, fs.ErrExist) {
		if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return -1, fmt.Errorf("remove stale %s: %w", tmp, rerr)
		}
		fd, err = open()
	}
	switch {
	case err == nil:
		return fd, nil
	case errors.Is(err, fs.ErrNotExist):
		return -1, errNoParent(loc.id)
	case errors.Is(err, syscall.ENOTDIR):
		return -1, errParentNotDir(loc.id)
	}
	return -1, fmt.Errorf("write %s: %w", loc.id, &fs.PathError{Op: "open", Path: tmp, Err: err})
}

// writeAll writes data to fd, all of it.
func writeAll(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := syscall.Write(fd, data)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		data = data[n:]
	}
	return nil
}

// readRegular reads the regular file at path, which a stat has just found
// to hold size bytes, through its bare descriptor (an os.File would
// register it with the poller and stat it again). O_NONBLOCK keeps a FIFO
// swapped in since the stat from blocking the read; a regular file
// ignores it.
func readRegular(path string, size int64) ([]byte, error) {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	// One byte more than the stat saw, so that a file as large as it was
	// is read to its end without growing the buffer.
	buf := make([]byte, 0, max(size, 0)+1)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(len(buf), 512))
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// retryEINTR calls fn until a signal does not interrupt it.
func retryEINTR(fn func() error) error {
	for {
		if err := fn(); err != syscall.EINTR {
			return err
		}
	}
}

// syncDir makes a rename durable. Failing to is not an error: the bytes
// are in place either way, and a lost rename is repaired by the next apply.
func syncDir(ctx context.Context, dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	observeSync(ctx, dir)
	_ = d.Sync()
	_ = d.Close()
}

// unixMode converts Go's mode bits to the permission bits of chmod(2).
func unixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		u |= 0o1000
	}
	return u
}

// fileMode converts chmod(2) permission bits to Go's mode bits.
func fileMode(u uint32) fs.FileMode {
	m := fs.FileMode(u & 0o777)
	if u&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if u&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if u&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// canonicalEnsure reads ensure: present (the default; the kind's own name,
// "file" or "directory", is accepted as Puppet writes it) or absent.
func canonicalEnsure(spec model.Spec, kind string) (string, error) {
	s, ok, err := specString(spec, "ensure")
	if err != nil {
		return "", err
	}
	switch {
	case !ok, s == "present", s == kind:
		return "present", nil
	case s == "absent":
		return "absent", nil
	default:
		return "", configErrorf("ensure", "want present or absent, got %q", s)
	}
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
