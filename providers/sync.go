package providers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// syncProvider mirrors a directory (Fuel's sync task, which astute ran as
// `rsync -c -r --delete src dst`): after a run dst holds exactly the
// regular files and directories of src, compared by content, and nothing
// else. src is an rsync:// URL, fetched with the rsync program, or a
// directory on the node, mirrored natively (symlinks and other special
// files are skipped, as rsync -r skips them). A dry-run says how many
// entries would change. The run is bounded by timeout (the rsync process
// group is stopped, a native mirror interrupted between files).
//
// A sync is irreversible: what it replaced or removed is not kept (a tree
// can be far larger than a before-state); re-run it with the previous
// source to go back.
type syncProvider struct {
	// rsync is the rsync program (default: "rsync" on PATH).
	rsync string
}

// NewSync returns the provider of kind sync.
func NewSync() Provider { return syncProvider{rsync: "rsync"} }

func (syncProvider) Kind() string { return kinds.KindSync }

var syncAttrs = map[string]kinds.AttrKind{"src": kinds.Parameter, "dst": kinds.Namevar, "timeout": kinds.Parameter}

func (syncProvider) Attributes() map[string]kinds.AttrKind { return syncAttrs }

// defaultSyncTimeout bounds a sync without a timeout.
const defaultSyncTimeout = 10 * time.Minute

// Canonicalize checks src and dst and turns timeout into a duration string.
func (syncProvider) Canonicalize(spec model.Spec) (model.Spec, error) {
	if err := checkAttrs(kinds.KindSync, spec, syncAttrs); err != nil {
		return nil, err
	}
	out := model.Spec{}
	src, ok, err := specString(spec, "src")
	if err != nil {
		return nil, err
	}
	if !ok || src == "" {
		return nil, configErrorf("src", "required")
	}
	if strings.Contains(src, "://") && !strings.HasPrefix(src, "rsync://") {
		return nil, configErrorf("src", "want an rsync:// URL or a directory on the node, got %q", src)
	}
	out["src"] = src
	dst, ok, err := specString(spec, "dst")
	if err != nil {
		return nil, err
	}
	if !ok || dst == "" {
		return nil, configErrorf("dst", "required")
	}
	if out["dst"], err = canonicalSpecPath("dst", dst); err != nil {
		return nil, err
	}
	timeout := defaultSyncTimeout
	if v := spec["timeout"]; v != nil {
		if timeout, err = CanonicalDuration(v); err != nil {
			return nil, configErrorf("timeout", "%v", err)
		}
	}
	out["timeout"] = timeout.String()
	return out, nil
}

// Read compares src with dst: Exists means they are in sync (nothing to
// do). Outputs.pending counts the entries a run would change; for an
// rsync:// source rsync answers with a dry run (--dry-run --itemize-changes).
func (x syncProvider) Read(ctx context.Context, env Env, want model.Spec) (State, error) {
	dst, err := env.Node.Resolve(want["dst"].(string))
	if err != nil {
		return State{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, syncTimeout(want))
	defer cancel()
	var pending []string
	if src := want["src"].(string); isRsyncURL(src) {
		res, err := x.rsyncRun(ctx, env, src, dst, true)
		if err != nil {
			return State{}, err
		}
		for _, line := range strings.Split(string(res.Stdout), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, ".d") {
				pending = append(pending, line)
			}
		}
	} else {
		srcHost, err := env.Node.Resolve(src)
		if err != nil {
			return State{}, fmt.Errorf("src: %w", err)
		}
		plan, err := planMirror(ctx, srcHost, dst)
		if err != nil {
			return State{}, err
		}
		pending = plan.describe()
	}
	id, _ := env.Node.OnNode(want["dst"].(string))
	st := State{ID: id, Exists: len(pending) == 0, Outputs: map[string]any{"pending": int64(len(pending))}}
	if len(pending) > 0 {
		st.Outputs["sample"] = strings.Join(pending[:min(len(pending), 20)], ", ")
	}
	return st, nil
}

// Plan runs the mirror unless dst is in sync.
func (syncProvider) Plan(_ model.Spec, have State) model.Action {
	if have.Exists {
		return model.ActionNoop
	}
	return model.ActionRun
}

// Apply mirrors src into dst within the timeout.
func (x syncProvider) Apply(ctx context.Context, env Env, want model.Spec, have State) (State, error) {
	dst, err := env.Node.Resolve(want["dst"].(string))
	if err != nil {
		return State{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, syncTimeout(want))
	defer cancel()
	src := want["src"].(string)
	out := State{Exists: true, ID: have.ID, Outputs: map[string]any{}}
	if isRsyncURL(src) {
		res, err := x.rsyncRun(ctx, env, src, dst, false)
		out.Outputs = runOutputs(res)
		return out, err
	}
	srcHost, err := env.Node.Resolve(src)
	if err != nil {
		return State{}, fmt.Errorf("src: %w", err)
	}
	plan, err := planMirror(ctx, srcHost, dst)
	if err != nil {
		return State{}, err
	}
	if err := plan.apply(ctx); err != nil {
		return State{}, fmt.Errorf("sync %s: %w", want["dst"], err)
	}
	out.Outputs["copied"] = int64(len(plan.copy))
	out.Outputs["removed"] = int64(len(plan.remove))
	return out, nil
}

// Delete has nothing to remove: a mirror is not an object of its own.
func (syncProvider) Delete(context.Context, Env, State) error { return nil }

// Reversible: a mirror keeps nothing of what it replaced.
func (syncProvider) Reversible(model.Spec) bool { return false }

// Compensate reports that a sync that ran cannot be undone.
func (syncProvider) Compensate(_ context.Context, env Env, _ model.Spec, ch Change) error {
	if ch.Action != model.ActionRun {
		return nil
	}
	return fmt.Errorf("sync %s replaced files it did not keep: %w", env.Name, ErrIrreversible)
}

func syncTimeout(want model.Spec) time.Duration {
	if s, ok := want["timeout"].(string); ok {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			return d
		}
	}
	return defaultSyncTimeout
}

func isRsyncURL(src string) bool { return strings.HasPrefix(src, "rsync://") }

// rsyncRun runs `rsync -c -r --delete src dst/` (with --dry-run
// --itemize-changes for a preview) in its own process group, output
// bounded like exec's. A missing rsync program is a clear error.
func (x syncProvider) rsyncRun(ctx context.Context, env Env, src, dst string, preview bool) (commandResult, error) {
	prog, err := exec.LookPath(x.rsync)
	if err != nil {
		return commandResult{}, fmt.Errorf("sync from %s needs the rsync program on node %s: %w", src, env.Node.Name, err)
	}
	argv := []string{prog, "-c", "-r", "--delete"}
	if preview {
		argv = append(argv, "--dry-run", "--itemize-changes")
	}
	// "--" ends the options: src was checked to be an rsync:// URL and dst
	// is an absolute path, but neither may ever read as an option.
	argv = append(argv, "--", src, strings.TrimRight(dst, "/")+"/")
	if !preview {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return commandResult{}, fmt.Errorf("create %s: %w", dst, err)
		}
	}
	res, err := runCommand(ctx, command{Argv: argv, Env: commandEnv(env.Node, nil)})
	if err != nil {
		return res, fmt.Errorf("rsync: %w", err)
	}
	if res.ExitCode != 0 {
		return res, fmt.Errorf("rsync exited %d%s%s", res.ExitCode, cutHint(res), stderrHint(res.Stderr))
	}
	return res, nil
}

// mirrorPlan is what a native mirror of src into dst would do.
type mirrorPlan struct {
	src, dst string
	mkdir    []string // relative directories to create, parents first
	copy     []string // relative files to write
	remove   []string // relative entries of dst absent from src, deepest first
}

func (p mirrorPlan) describe() []string {
	var out []string
	for _, d := range p.mkdir {
		out = append(out, "+"+d+"/")
	}
	for _, f := range p.copy {
		out = append(out, ">"+f)
	}
	for _, r := range p.remove {
		out = append(out, "-"+r)
	}
	return out
}

// planMirror walks src and dst. A dst that does not exist yet needs
// everything; a src that is not a directory is an error.
func planMirror(ctx context.Context, src, dst string) (mirrorPlan, error) {
	p := mirrorPlan{src: src, dst: dst}
	fi, err := os.Stat(src)
	if err != nil {
		return p, fmt.Errorf("src: %w", err)
	}
	if !fi.IsDir() {
		return p, fmt.Errorf("src %s is not a directory", src)
	}
	inSrc := map[string]bool{}
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if rel == "." {
			if st, err := os.Stat(dst); err != nil || !st.IsDir() {
				p.mkdir = append(p.mkdir, ".")
			}
			return nil
		}
		switch {
		case d.IsDir():
			inSrc[rel] = true
			if st, err := os.Lstat(filepath.Join(dst, rel)); err != nil || !st.IsDir() {
				p.mkdir = append(p.mkdir, rel)
			}
		case d.Type().IsRegular():
			inSrc[rel] = true
			same, err := sameFile(path, filepath.Join(dst, rel))
			if err != nil {
				return err
			}
			if !same {
				p.copy = append(p.copy, rel)
			}
		}
		return nil // symlinks and special files are skipped, as rsync -r does
	})
	if err != nil {
		return p, err
	}
	if _, err := os.Stat(dst); err == nil {
		var extra []string
		err = filepath.WalkDir(dst, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dst, path)
			if rel == "." || inSrc[rel] && (d.IsDir() || d.Type().IsRegular()) {
				return nil
			}
			extra = append(extra, rel)
			if d.IsDir() {
				return filepath.SkipDir // removed whole
			}
			return nil
		})
		if err != nil {
			return p, err
		}
		sort.Sort(sort.Reverse(sort.StringSlice(extra)))
		p.remove = extra
	}
	return p, nil
}

// sameFile reports whether dst is a regular file with src's bytes and
// permission bits.
func sameFile(src, dst string) (bool, error) {
	ds, err := os.Lstat(dst)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ss, err := os.Stat(src)
	if err != nil {
		return false, err
	}
	if !ds.Mode().IsRegular() || ds.Size() != ss.Size() || ds.Mode().Perm() != ss.Mode().Perm() {
		return false, nil
	}
	return sameContent(src, dst)
}

// sameContent compares two files chunk by chunk.
func sameContent(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea != nil || eb != nil {
			return errors.Is(ea, io.EOF) || errors.Is(ea, io.ErrUnexpectedEOF), nil
		}
	}
}

// apply carries the plan out: removals first (a file may become a
// directory), then directories, then files, each written atomically.
func (p mirrorPlan) apply(ctx context.Context) error {
	for _, rel := range p.remove {
		if err := os.RemoveAll(filepath.Join(p.dst, rel)); err != nil {
			return err
		}
	}
	for _, rel := range p.mkdir {
		mode := fs.FileMode(0o755)
		if fi, err := os.Stat(filepath.Join(p.src, rel)); err == nil {
			mode = fi.Mode().Perm()
		}
		target := filepath.Join(p.dst, rel)
		if fi, err := os.Lstat(target); err == nil && !fi.IsDir() {
			if err := os.Remove(target); err != nil {
				return err
			}
		}
		if err := os.MkdirAll(target, mode); err != nil {
			return err
		}
	}
	for _, rel := range p.copy {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stopped before %s: %w", rel, context.Cause(ctx))
		}
		if err := copyOne(ctx, filepath.Join(p.src, rel), filepath.Join(p.dst, rel)); err != nil {
			return err
		}
	}
	return nil
}

// copyOne writes src's bytes and permission bits to dst atomically.
func copyOne(ctx context.Context, src, dst string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	data, err := readRegular(src, fi.Size())
	if err != nil {
		return err
	}
	if st, err := os.Lstat(dst); err == nil && st.IsDir() {
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
	}
	_, statErr := os.Lstat(dst)
	loc := fileLocation{id: dst, host: dst, target: dst}
	return writeAtomic(ctx, loc, data, unixMode(fi.Mode()), statErr == nil)
}
