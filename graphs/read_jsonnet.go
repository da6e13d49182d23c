package graphs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	jsonnet "github.com/google/go-jsonnet"
	"github.com/google/go-jsonnet/ast"
)

// JsonnetRequest is one Jsonnet program to evaluate to JSON.
type JsonnetRequest struct {
	Name      string            `json:"name"`
	Source    string            `json:"source"`
	ExtVars   map[string]string `json:"extVars,omitempty"`
	ImportDir string            `json:"importDir,omitempty"`
	MaxStack  int               `json:"maxStack"`
	MaxDepth  int               `json:"maxDepth"`
	// MaxOutput bounds the evaluated JSON; MaxImportBytes all imported
	// files together.
	MaxOutput      int64 `json:"maxOutput"`
	MaxImportBytes int64 `json:"maxImportBytes"`
}

// JsonnetError is a Jsonnet program's own error (syntax, runtime, a
// refused import) with the place in the program it names, when known.
type JsonnetError struct {
	Message string `json:"message"`
	// File is the program or imported file the location is in.
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

func (e *JsonnetError) Error() string { return e.Message }

// JsonnetEvaluator evaluates Jsonnet. Errors of the program itself are
// *JsonnetError; anything else (a timeout, a crashed sandbox) is another
// error.
type JsonnetEvaluator interface {
	EvaluateJsonnet(ctx context.Context, req JsonnetRequest) ([]byte, error)
}

// InProcessJsonnet evaluates Jsonnet inside this process. Evaluation
// cannot be interrupted: when the deadline passes the caller gets an error
// at once, but the abandoned evaluation runs on until it ends. Programs
// are checked before they run (bracket nesting, no tailstrict, which lets
// recursion grow without bound), yet go-jsonnet has programs that exhaust
// memory or the goroutine stack within a few seconds, so untrusted Jsonnet
// (documents posted to the API) belongs in JsonnetProcess.
type InProcessJsonnet struct{}

// EvaluateJsonnet implements JsonnetEvaluator.
func (InProcessJsonnet) EvaluateJsonnet(ctx context.Context, req JsonnetRequest) ([]byte, error) {
	if err := checkJsonnetSource(req.Name, req.Source, req.MaxDepth, false); err != nil {
		return nil, err
	}
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1) // buffered: an abandoned evaluation must not block forever
	go func() {
		out, err := evaluateJsonnet(req)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("jsonnet evaluation stopped: %w", ctx.Err())
	}
}

// evaluateJsonnet runs the evaluation itself, in the calling goroutine.
func evaluateJsonnet(req JsonnetRequest) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("jsonnet evaluation crashed: %v", p)
		}
	}()
	vm := jsonnet.MakeVM()
	vm.MaxStack = req.MaxStack
	if vm.MaxStack <= 0 {
		vm.MaxStack = DefaultJsonnetMaxStack
	}
	vm.SetTraceOut(discard{})
	for k, v := range req.ExtVars {
		vm.ExtVar(k, v)
	}
	imp := &confinedImporter{dir: req.ImportDir, budget: req.MaxImportBytes}
	vm.Importer(imp)
	ef := &capturingFormatter{}
	vm.ErrorFormatter = ef
	s, evalErr := vm.EvaluateAnonymousSnippet(req.Name, req.Source)
	imp.close()
	if evalErr != nil {
		return nil, ef.jsonnetError(req.Name, evalErr)
	}
	if req.MaxOutput > 0 && int64(len(s)) > req.MaxOutput {
		return nil, &JsonnetError{Message: fmt.Sprintf("evaluated JSON is %s, larger than the limit of %s", byteSize(int64(len(s))), byteSize(req.MaxOutput))}
	}
	return []byte(s), nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// capturingFormatter keeps the error go-jsonnet reports so its location
// can be returned as data rather than parsed out of text.
type capturingFormatter struct {
	err error
}

func (f *capturingFormatter) Format(err error) string {
	f.err = err
	return err.Error()
}

func (f *capturingFormatter) SetMaxStackTraceSize(int)                 {}
func (f *capturingFormatter) SetColorFormatter(jsonnet.ColorFormatter) {}

func (f *capturingFormatter) jsonnetError(name string, formatted error) *JsonnetError {
	je := &JsonnetError{Message: formatted.Error()}
	var loc *ast.LocationRange
	switch e := f.err.(type) {
	case jsonnet.RuntimeError:
		je.Message = e.Msg
		// Outermost frame first: the error happened in the last one.
		for i := len(e.StackTrace) - 1; i >= 0; i-- {
			if l := e.StackTrace[i].Loc; l.IsSet() && l.File != nil && !strings.HasPrefix(string(l.File.DiagnosticFileName), "<") {
				loc = &l
				break
			}
		}
	case interface{ Loc() ast.LocationRange }:
		l := e.Loc()
		if l.IsSet() {
			loc = &l
			je.Message = strings.TrimSpace(strings.TrimPrefix(je.Message, l.String()))
		}
	}
	if loc != nil && loc.File != nil {
		je.File = string(loc.File.DiagnosticFileName)
		je.Line, je.Column = loc.Begin.Line, loc.Begin.Column
	}
	return je
}

// confinedImporter refuses imports unless a directory is configured, and
// then reads only files inside it (symbolic links included: os.Root
// refuses to leave the directory).
type confinedImporter struct {
	dir    string
	root   *os.Root
	budget int64
	used   int64
	cache  map[string]jsonnet.Contents
}

func (imp *confinedImporter) Import(importedFrom, importedPath string) (jsonnet.Contents, string, error) {
	if imp.dir == "" {
		return jsonnet.Contents{}, "", fmt.Errorf("imports are not allowed: the document must be self-contained (import %q)", importedPath)
	}
	if path.IsAbs(importedPath) || strings.HasPrefix(importedPath, "\\") {
		return jsonnet.Contents{}, "", fmt.Errorf("import %q: only paths relative to the import directory are allowed", importedPath)
	}
	rel := path.Clean(path.Join(path.Dir(importedFrom), importedPath))
	if importedFrom == "" {
		rel = path.Clean(importedPath)
	}
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return jsonnet.Contents{}, "", fmt.Errorf("import %q: leaves the import directory", importedPath)
	}
	if c, ok := imp.cache[rel]; ok {
		return c, rel, nil
	}
	if imp.root == nil {
		root, err := os.OpenRoot(imp.dir)
		if err != nil {
			return jsonnet.Contents{}, "", fmt.Errorf("import %q: %w", importedPath, err)
		}
		imp.root = root
		imp.cache = map[string]jsonnet.Contents{}
	}
	info, err := imp.root.Stat(rel)
	if err != nil {
		return jsonnet.Contents{}, "", fmt.Errorf("import %q: %w", importedPath, unwrapPathError(err))
	}
	if !info.Mode().IsRegular() {
		return jsonnet.Contents{}, "", fmt.Errorf("import %q: not a regular file", importedPath)
	}
	if imp.budget > 0 && imp.used+info.Size() > imp.budget {
		return jsonnet.Contents{}, "", fmt.Errorf("import %q: imported files add up to more than the limit of %s", importedPath, byteSize(imp.budget))
	}
	data, err := imp.root.ReadFile(rel)
	if err != nil {
		return jsonnet.Contents{}, "", fmt.Errorf("import %q: %w", importedPath, unwrapPathError(err))
	}
	imp.used += int64(len(data))
	c := jsonnet.MakeContentsRaw(data)
	imp.cache[rel] = c
	return c, rel, nil
}

func (imp *confinedImporter) close() {
	if imp.root != nil {
		imp.root.Close()
	}
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// checkJsonnetSource refuses programs the evaluator cannot bound: brackets
// nested deeper than maxDepth (the parser recurses on them) and, unless
// allowed, tailstrict calls (go-jsonnet trims its own call stack for them
// while Go's grows, so an endless tailstrict loop ends in a fatal stack
// overflow instead of "max stack frames exceeded"; a sandboxed child may
// run them, since such a crash ends only the child).
func checkJsonnetSource(name, src string, maxDepth int, allowTailstrict bool) error {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	depth := 0
	line, col := 1, 1
	advance := func(s string) {
		for _, r := range s {
			if r == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
	}
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			i++
			line, col = line+1, 1
			continue
		case c == '#' || (c == '/' && i+1 < len(src) && src[i+1] == '/'):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			advance(src[i : i+end])
			i += end
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil // the parser reports the unterminated comment
			}
			advance(src[i : i+2+end+2])
			i += 2 + end + 2
			continue
		case strings.HasPrefix(src[i:], "|||"):
			end := strings.Index(src[i+3:], "|||")
			if end < 0 {
				return nil
			}
			advance(src[i : i+3+end+3])
			i += 3 + end + 3
			continue
		case c == '"' || c == '\'' || (c == '@' && i+1 < len(src) && (src[i+1] == '"' || src[i+1] == '\'')):
			verbatim := c == '@'
			j := i + 1
			if verbatim {
				j++
			}
			quote := src[j-1]
			for j < len(src) {
				if src[j] == '\\' && !verbatim {
					j += 2
					continue
				}
				if src[j] == quote {
					if verbatim && j+1 < len(src) && src[j+1] == quote {
						j += 2
						continue
					}
					j++
					break
				}
				j++
			}
			j = min(j, len(src))
			advance(src[i:j])
			i = j
			continue
		case c == '(' || c == '[' || c == '{':
			depth++
			if depth > maxDepth {
				return &JsonnetError{Message: fmt.Sprintf("brackets are nested more than %d levels deep", maxDepth), File: name, Line: line, Column: col}
			}
		case c == ')' || c == ']' || c == '}':
			depth--
		case isIdentStart(c) && (i == 0 || !isIdentChar(src[i-1])):
			j := i
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			if !allowTailstrict && src[i:j] == "tailstrict" {
				return &JsonnetError{Message: "tailstrict is not supported", File: name, Line: line, Column: col}
			}
			col += j - i
			i = j
			continue
		}
		i++
		col++
	}
	return nil
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' }

// readJsonnet evaluates a Jsonnet source and reads the JSON it yields.
func (r *reader) readJsonnet(at origin, data []byte, emit func(*document)) {
	name := at.name
	srcPos := at.pos(0, 0, 0)
	req := JsonnetRequest{
		Name:           name,
		Source:         string(data),
		ExtVars:        r.opts.ExtVars,
		ImportDir:      r.opts.ImportDir,
		MaxStack:       r.lim.maxStack,
		MaxDepth:       r.lim.maxDepth,
		MaxOutput:      r.lim.maxBytes,
		MaxImportBytes: max(r.lim.maxTotalBytes-r.totalBytes, 1),
	}
	eval := r.opts.Jsonnet
	if eval == nil {
		eval = InProcessJsonnet{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.lim.timeout)
	defer cancel()
	start := time.Now()
	out, err := eval.EvaluateJsonnet(ctx, req)
	if err != nil {
		var je *JsonnetError
		switch {
		case errors.As(err, &je):
			pos := srcPos
			msg := je.Message
			if je.File == "" || je.File == name {
				pos = at.pos(0, je.Line, je.Column)
			} else if je.Line > 0 {
				msg = fmt.Sprintf("%s (in %s:%d:%d)", msg, je.File, je.Line, je.Column)
			}
			r.c.add(pos, "", "jsonnet: %s", msg)
		case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
			r.c.add(srcPos, "", "jsonnet: evaluation took longer than %s (after %s)", r.lim.timeout, time.Since(start).Round(time.Millisecond))
		default:
			r.c.add(srcPos, "", "jsonnet: %v", err)
		}
		return
	}
	if int64(len(out)) > r.lim.maxBytes {
		r.c.add(srcPos, "", "jsonnet: evaluated JSON is larger than the limit of %s", byteSize(r.lim.maxBytes))
		return
	}
	r.readJSON(at, out, FormatJsonnet, emit)
}
