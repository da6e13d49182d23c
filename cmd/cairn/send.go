package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
)

// requestDocument is the name the API gives a request body in its error
// positions.
const requestDocument = "request"

// payload is the one document the CLI sends for a set of files, with what
// maps the server's error positions back to the files.
type payload struct {
	doc   client.Document
	parts []payloadPart
}

// payloadPart is one file inside the payload: its lines start at
// firstLine (1-based) of the payload; lines of evaluated Jsonnet or
// re-indented JSON do not correspond to the file (verbatim false).
type payloadPart struct {
	file      string
	firstLine int
	lines     int
	verbatim  bool
}

// loadPayload reads files and directories into one document to send.
// Jsonnet is evaluated here, with imports resolved relative to the
// importing file, because the server accepts only self-contained
// documents. One YAML or JSON file goes as it is; several files go as one
// YAML stream, JSON and evaluated Jsonnet as JSON documents inside it.
func loadPayload(ctx context.Context, a *app, df *documentFlags, paths []string) (*payload, error) {
	ext, srcs, err := df.read(paths)
	if err != nil {
		return nil, err
	}
	type evaluated struct {
		name     string
		data     []byte
		format   graphs.Format
		verbatim bool
	}
	var parts []evaluated
	var jsonnetErrs graphs.Errors
	for _, s := range srcs {
		format := s.Format
		if format == graphs.FormatAuto {
			format = graphs.FormatYAML
		}
		if format != graphs.FormatJsonnet {
			parts = append(parts, evaluated{s.Name, s.Data, format, true})
			continue
		}
		out, err := evaluateJsonnetFile(ctx, s, ext)
		if err != nil {
			var je *graphs.JsonnetError
			if !errors.As(err, &je) {
				return nil, fmt.Errorf("%s: jsonnet: %w", s.Name, err)
			}
			e := graphs.Error{Message: "jsonnet: " + je.Message}
			e.Pos.Source = s.Name
			if je.File == "" || je.File == filepath.Base(s.Name) {
				e.Pos.Line, e.Pos.Column = je.Line, je.Column
			} else if je.Line > 0 {
				e.Message = fmt.Sprintf("%s (in %s:%d:%d)", e.Message, filepath.Join(filepath.Dir(s.Name), je.File), je.Line, je.Column)
			}
			jsonnetErrs = append(jsonnetErrs, e)
			continue
		}
		parts = append(parts, evaluated{s.Name, out, graphs.FormatJSON, false})
	}
	if len(jsonnetErrs) > 0 {
		for _, e := range jsonnetErrs {
			fmt.Fprintln(a.stderr, e.Error())
		}
		return nil, &exitError{code: exitFailure, err: fmt.Errorf("%s: Jsonnet did not evaluate", plural(len(jsonnetErrs), "file", "files"))}
	}

	if len(parts) == 1 {
		p := parts[0]
		return &payload{
			doc:   client.Document{Data: p.data, Format: string(p.format)},
			parts: []payloadPart{{file: p.name, firstLine: 1, lines: lineCount(p.data), verbatim: p.verbatim}},
		}, nil
	}
	var buf bytes.Buffer
	pl := &payload{}
	line := 1
	for _, p := range parts {
		buf.WriteString("---\n")
		line++
		data, verbatim := p.data, true
		if p.format == graphs.FormatJSON {
			// JSON is YAML, but not with tabs for indentation: indent it
			// plainly (its lines then no longer match the file's).
			var ind bytes.Buffer
			if err := json.Indent(&ind, bytes.TrimSpace(p.data), "", "  "); err != nil {
				return nil, fmt.Errorf("%s: invalid JSON: %w", p.name, err)
			}
			data, verbatim = ind.Bytes(), false
		}
		n := lineCount(data)
		pl.parts = append(pl.parts, payloadPart{file: p.name, firstLine: line, lines: n, verbatim: verbatim})
		buf.Write(data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			buf.WriteByte('\n')
		}
		line += n
	}
	pl.doc = client.Document{Data: buf.Bytes(), Format: "yaml"}
	return pl, nil
}

// evaluateJsonnetFile evaluates a Jsonnet file with its imports resolved
// relative to, and confined to, the file's own directory.
func evaluateJsonnetFile(ctx context.Context, s graphs.Source, ext map[string]string) ([]byte, error) {
	dir, err := filepath.Abs(filepath.Dir(s.Name))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, graphs.DefaultTimeout)
	defer cancel()
	return graphs.InProcessJsonnet{}.EvaluateJsonnet(ctx, graphs.JsonnetRequest{
		Name:           filepath.Base(s.Name),
		Source:         string(s.Data),
		ExtVars:        ext,
		ImportDir:      dir,
		MaxStack:       graphs.DefaultJsonnetMaxStack,
		MaxDepth:       graphs.DefaultMaxDepth,
		MaxOutput:      graphs.DefaultMaxFileBytes,
		MaxImportBytes: graphs.DefaultMaxTotalBytes,
	})
}

// lineCount is the number of lines data spans.
func lineCount(data []byte) int {
	if len(data) == 0 {
		return 0
	}
	n := bytes.Count(data, []byte("\n"))
	if data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// optionalPayload is loadPayload of paths, or nil without any: a command
// that then sends no document (the stack's URLs are read instead).
func optionalPayload(ctx context.Context, a *app, df *documentFlags, paths []string) (*payload, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	return loadPayload(ctx, a, df, paths)
}

// document is the document to send: nil for a nil payload.
func (p *payload) document() *client.Document {
	if p == nil {
		return nil
	}
	return &p.doc
}

// detailNames maps a server error position in the payload back to the
// file it came from; a nil payload maps nothing.
func (p *payload) detailNames(d model.ErrorDetail) model.ErrorDetail {
	if p == nil || d.Document != requestDocument || len(p.parts) == 0 {
		return d
	}
	if len(p.parts) == 1 {
		d.Document = p.parts[0].file
		if !p.parts[0].verbatim {
			d.Line, d.Column = 0, 0
		}
		d.Index = 0
		return d
	}
	for _, part := range p.parts {
		if d.Line >= part.firstLine && d.Line < part.firstLine+max(part.lines, 1) {
			d.Document, d.Index = part.file, 0
			if part.verbatim {
				d.Line -= part.firstLine - 1
			} else {
				d.Line, d.Column = 0, 0
			}
			return d
		}
	}
	return d
}
