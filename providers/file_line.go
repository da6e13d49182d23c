package providers

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"sync"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// fileLineProvider manages one line of an existing file, as Puppet
// stdlib's file_line does: present (appended, put after the line
// matching after, or replacing the lines matching match) or absent (the
// equal line, or with match_for_absence every line matching match,
// removed). The decision whether the file already complies is stdlib's
// exists? rule by rule, so a manifest behaves as it did under Puppet.
// Regular expressions are Go's RE2 (no look-around or backreferences)
// and are matched against a line without its newline.
//
// The file must exist (declare a file resource for it: file_line
// depends on it through an auto-edge); a dry-run reads a missing file as
// empty, as Puppet's noop does. Writes are atomic and keep the file's
// mode; undo puts the file's previous bytes back exactly. Cost: one read
// of the file per plan and one atomic write per change, the file held in
// memory (bounded by readRegular's limits).
//
// Several file_line resources may edit one file in the same wave: each
// change re-reads the file and is written under a lock of its path, so
// none is lost (the plan's read decides only whether a change is due).
type fileLineProvider struct{ locks *pathLocks }

// NewFileLine returns the provider of kind file_line.
func NewFileLine() Provider { return fileLineProvider{locks: newPathLocks()} }

func (fileLineProvider) Kind() string { return kinds.KindFileLine }

var fileLineAttrs = map[string]kinds.AttrKind{
	"path":   kinds.Namevar,
	"ensure": kinds.Property,
	"line":   kinds.Property,
	"match":  kinds.Parameter, "match_for_absence": kinds.Parameter, "multiple": kinds.Parameter,
	"after": kinds.Parameter, "replace": kinds.Parameter, "append_on_no_match": kinds.Parameter,
	"replace_all_matches_not_matching_line": kinds.Parameter,
}

func (fileLineProvider) Attributes() map[string]kinds.AttrKind { return fileLineAttrs }

// fileLineBools are the boolean parameters and their defaults (stdlib's).
var fileLineBools = map[string]bool{
	"match_for_absence": false, "multiple": false, "replace": true, "append_on_no_match": true,
	"replace_all_matches_not_matching_line": false,
}

func (fileLineProvider) Canonicalize(spec model.Spec) (model.Spec, error) {
	if err := checkAttrs(kinds.KindFileLine, spec, fileLineAttrs); err != nil {
		return nil, err
	}
	path, err := specPath(spec)
	if err != nil {
		return nil, err
	}
	ensure, err := canonicalEnsure(spec, kinds.KindFileLine)
	if err != nil {
		return nil, err
	}
	out := model.Spec{"path": path, "ensure": ensure}
	for _, attr := range []string{"line", "match", "after"} {
		s, ok, err := specString(spec, attr)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if attr == "line" && bytes.ContainsAny([]byte(s), "\r\n") {
			return nil, configErrorf("line", "one line: no newline in it")
		}
		if attr != "line" {
			if _, err := regexp.Compile(s); err != nil {
				return nil, configErrorf(attr, "not a regular expression (RE2): %v", err)
			}
		}
		out[attr] = s
	}
	for attr, def := range fileLineBools {
		b := def
		switch v := spec[attr].(type) {
		case nil:
		case bool:
			b = v
		case string:
			// Puppet manifests often quote their booleans.
			switch v {
			case "true":
				b = true
			case "false":
				b = false
			default:
				return nil, configErrorf(attr, "want true or false, got %q", v)
			}
		default:
			return nil, configErrorf(attr, "want true or false, got %T", v)
		}
		out[attr] = b
	}
	if out["replace_all_matches_not_matching_line"] == true {
		if out["multiple"] == false {
			return nil, configErrorf("multiple", "multiple must be true when replace_all_matches_not_matching_line is true")
		}
		if out["replace"] == false {
			return nil, configErrorf("replace", "replace must be true when replace_all_matches_not_matching_line is true")
		}
	}
	if _, ok := out["line"]; !ok && (ensure != "absent" || out["match_for_absence"] != true || out["match"] == nil) {
		return nil, configErrorf("line", "required (unless ensure is absent, match_for_absence is true and match is given)")
	}
	return out, nil
}

// fileLineSpec is a canonical spec in typed form.
type fileLineSpec struct {
	text                     string
	lineSet                  bool
	match, after             *regexp.Regexp
	absent                   bool
	matchForAbsence          bool
	multiple, replace        bool
	appendOnNoMatch, replAll bool
}

func parseFileLine(want model.Spec) fileLineSpec {
	s := fileLineSpec{absent: want["ensure"] == "absent"}
	s.text, s.lineSet = want["line"].(string)
	if m, ok := want["match"].(string); ok {
		s.match = regexp.MustCompile(m) // checked by Canonicalize
	}
	if a, ok := want["after"].(string); ok {
		s.after = regexp.MustCompile(a)
	}
	s.matchForAbsence, _ = want["match_for_absence"].(bool)
	s.multiple, _ = want["multiple"].(bool)
	s.replace, _ = want["replace"].(bool)
	s.appendOnNoMatch, _ = want["append_on_no_match"].(bool)
	s.replAll, _ = want["replace_all_matches_not_matching_line"].(bool)
	return s
}

// splitLines splits data into lines that keep their "\n" (Ruby's
// readlines): joined again they are data, byte for byte.
func splitLines(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, data)
			break
		}
		out = append(out, data[:i+1])
		data = data[i+1:]
	}
	return out
}

// chomp is a line without its terminator ("\n", "\r\n").
func chomp(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r"))
}

// countMatches is stdlib's count_matches.
func (s fileLineSpec) countMatches(lines [][]byte, re *regexp.Regexp) int {
	if re == nil {
		return 0
	}
	n := 0
	for _, l := range lines {
		if s.replAll && s.lineSet && string(chomp(l)) == s.text {
			continue
		}
		if re.Match(chomp(l)) {
			n++
		}
	}
	return n
}

// exists is stdlib's exists?: whether the file is already as ensure
// wants it (for absent: whether there is something to remove).
func (s fileLineSpec) exists(lines [][]byte) bool {
	linesCount := 0
	for _, l := range lines {
		if s.lineSet && string(chomp(l)) == s.text {
			linesCount++
		}
	}
	if s.match == nil {
		return linesCount > 0
	}
	matchCount := s.countMatches(lines, s.match)
	if !s.absent {
		switch {
		case matchCount == 0:
			return !(linesCount == 0 && s.appendOnNoMatch)
		case s.replAll:
			return false
		case linesCount == 0:
			return !s.replace
		}
		return true
	}
	switch {
	case matchCount == 0:
		return linesCount > 0
	case linesCount == 0:
		return s.matchForAbsence
	}
	return true
}

// puts is Ruby's IO#puts of one line: its bytes and a "\n" unless it
// ends with one.
func puts(b *bytes.Buffer, line []byte) {
	b.Write(line)
	if !bytes.HasSuffix(line, []byte("\n")) {
		b.WriteByte('\n')
	}
}

// create is stdlib's create: the file's new bytes with the line present.
func (s fileLineSpec) create(path string, lines [][]byte) ([]byte, error) {
	var b bytes.Buffer
	line := []byte(s.text)
	if !s.replace && s.countMatches(lines, s.match) > 0 {
		return nil, nil
	}
	switch {
	case s.match != nil:
		count := s.countMatches(lines, s.match)
		if count > 1 && !s.multiple {
			return nil, fmt.Errorf("more than one line in file %s matches pattern %q (set multiple: true to replace them all)", path, s.match)
		}
		for _, l := range lines {
			if s.match.Match(chomp(l)) {
				puts(&b, line)
			} else {
				puts(&b, l)
			}
			if count == 0 && s.after != nil && s.after.Match(chomp(l)) {
				puts(&b, line)
				count++
			}
		}
		if count == 0 {
			puts(&b, line)
		}
	case s.after != nil:
		count := s.countMatches(lines, s.after)
		if count > 1 && !s.multiple {
			return nil, fmt.Errorf("%d lines match pattern %q in file %s: one or no line must match it (or set multiple: true)", count, s.after, path)
		}
		for _, l := range lines {
			puts(&b, l)
			if s.after.Match(chomp(l)) {
				puts(&b, line)
			}
		}
		if count == 0 {
			puts(&b, line)
		}
	default:
		for _, l := range lines {
			puts(&b, l)
		}
		puts(&b, line)
	}
	return b.Bytes(), nil
}

// destroy is stdlib's destroy: the file's new bytes with the line (or
// with match_for_absence the matching lines) gone.
func (s fileLineSpec) destroy(path string, lines [][]byte) ([]byte, error) {
	byMatch := s.matchForAbsence && s.match != nil
	if byMatch && s.countMatches(lines, s.match) > 1 && !s.multiple {
		return nil, fmt.Errorf("more than one line in file %s matches pattern %q (set multiple: true to remove them all)", path, s.match)
	}
	var b bytes.Buffer
	for _, l := range lines {
		if byMatch && s.match.Match(chomp(l)) || !byMatch && s.lineSet && string(chomp(l)) == s.text {
			continue
		}
		b.Write(l)
	}
	return b.Bytes(), nil
}

// Read reads the file and decides, as stdlib does, whether the line is
// "there": Exists for present means nothing is left to do, for absent
// that something is to be removed. Private keeps the file's bytes for
// undo. Without a spec (a resource that left its stack) nothing is found:
// the line it managed is not known any more, so it is left in place.
func (fileLineProvider) Read(_ context.Context, env Env, want model.Spec) (State, error) {
	loc, fi, err := locateStat(env, want)
	if err != nil {
		return State{}, err
	}
	if _, ok := want["ensure"]; !ok {
		return State{ID: loc.id}, nil
	}
	var data []byte
	switch {
	case fi == nil && env.Noop:
	case fi == nil:
		return State{}, fmt.Errorf("%s does not exist: declare a file resource for it (file_line only edits an existing file)", loc.id)
	case !fi.Mode().IsRegular():
		return State{}, fmt.Errorf("%s is not a regular file", loc.id)
	default:
		if data, err = readRegular(loc.target, fi.Size()); err != nil {
			return State{}, err
		}
	}
	s := parseFileLine(want)
	st := State{ID: loc.id, Exists: s.exists(splitLines(data)), Private: data}
	if fi != nil {
		st.Outputs = map[string]any{"path": loc.id, "mode": formatMode(unixMode(fi.Mode()))}
	}
	if st.Exists {
		st.Attrs = map[string]any{"path": loc.id, "ensure": "present"}
		if s.lineSet {
			st.Attrs["line"] = s.text
		}
	}
	return st, nil
}

// Apply puts the line in (stdlib's create), in one atomic write that
// keeps the file's mode.
func (p fileLineProvider) Apply(ctx context.Context, env Env, want model.Spec, have State) (State, error) {
	return p.rewrite(ctx, env, want, have, fileLineSpec.create)
}

// DeleteSpec takes the line out (stdlib's destroy). Without a spec it
// does nothing: see Read.
func (p fileLineProvider) DeleteSpec(ctx context.Context, env Env, want model.Spec, have State) error {
	if _, ok := want["ensure"]; !ok {
		return nil
	}
	_, err := p.rewrite(ctx, env, want, have, fileLineSpec.destroy)
	return err
}

// Delete is never reached (DeleteSpec is); it changes nothing.
func (fileLineProvider) Delete(context.Context, Env, State) error { return nil }

// rewrite edits the file's current bytes with edit and writes them back
// when they changed, holding the lock of the file's path throughout.
func (p fileLineProvider) rewrite(ctx context.Context, env Env, want model.Spec, _ State,
	edit func(fileLineSpec, string, [][]byte) ([]byte, error)) (State, error) {
	loc, err := locate(env, want)
	if err != nil {
		return State{}, err
	}
	unlock := p.locks.lock(loc.target)
	defer unlock()
	fi, err := os.Stat(loc.target)
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, fmt.Errorf("%s does not exist: declare a file resource for it (file_line only edits an existing file)", loc.id)
	}
	if err != nil {
		return State{}, err
	}
	if !fi.Mode().IsRegular() {
		return State{}, fmt.Errorf("%s is not a regular file", loc.id)
	}
	data, err := readRegular(loc.target, fi.Size())
	if err != nil {
		return State{}, err
	}
	s := parseFileLine(want)
	lines := splitLines(data)
	var next []byte
	// The file may have changed since the plan read it: edit only when
	// stdlib's rule still says there is something to do.
	if s.exists(lines) == s.absent {
		if next, err = edit(s, loc.id, lines); err != nil {
			return State{}, err
		}
	}
	after := State{ID: loc.id, Private: data, Outputs: map[string]any{"path": loc.id, "mode": formatMode(unixMode(fi.Mode()))}}
	if next != nil && !bytes.Equal(next, data) {
		if err := writeAtomic(ctx, loc, next, unixMode(fi.Mode()), true); err != nil {
			return State{}, err
		}
		after.Private = next
	}
	if !s.absent {
		after.Exists = true
		after.Attrs = map[string]any{"path": loc.id, "ensure": "present"}
		if s.lineSet {
			after.Attrs["line"] = s.text
		}
	}
	return after, nil
}

// Reversible: a file_line change is undone by putting the file's bytes
// back.
func (fileLineProvider) Reversible(model.Spec) bool { return true }

// Compensate restores the bytes the file had before the change, byte for
// byte, keeping its current mode. A file removed since is left removed.
func (p fileLineProvider) Compensate(ctx context.Context, env Env, want model.Spec, ch Change) error {
	spec := model.Spec{"path": cmp.Or(ch.Before.ID, env.ObjectID)}
	loc, err := locate(env, spec)
	if err != nil {
		return err
	}
	unlock := p.locks.lock(loc.target)
	defer unlock()
	fi, err := os.Stat(loc.target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := writeAtomic(ctx, loc, ch.Before.Private, unixMode(fi.Mode()), true); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("restore %s: %w", loc.id, err)
	}
	return nil
}

// pathLocks serialize the edits of one file; an entry lives while it is
// held or awaited, so the map never outgrows the edits in flight.
type pathLocks struct {
	mu sync.Mutex
	m  map[string]*pathLock
}

type pathLock struct {
	mu   sync.Mutex
	refs int
}

func newPathLocks() *pathLocks { return &pathLocks{m: map[string]*pathLock{}} }

// lock takes path's lock and returns its release.
func (l *pathLocks) lock(path string) func() {
	l.mu.Lock()
	e := l.m[path]
	if e == nil {
		e = &pathLock{}
		l.m[path] = e
	}
	e.refs++
	l.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		l.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(l.m, path)
		}
		l.mu.Unlock()
	}
}
