package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cairn-io/cairn/model"
)

// A package larger than one request may be goes as an upload: its
// documents cut into parts of whole documents, sent one by one, then run
// by an apply or dry-run that names the upload (Document.Upload). Apply
// and DryRun do this themselves for a package over SingleRequestBytes, or
// when the server answers 413 to one request.
const (
	// SingleRequestBytes is the largest package Apply and DryRun send in
	// one request (the server's default body limit is 10 MiB).
	SingleRequestBytes = 8 << 20
	// DefaultPartBytes is the size parts are cut to: small enough that
	// the server holds little of the package at a time.
	DefaultPartBytes = 2 << 20
	// partSlack is kept free below the server's part limit.
	partSlack = 4 << 10
)

// UploadOptions steer Upload.
type UploadOptions struct {
	// PartBytes bounds each part (0: DefaultPartBytes; never more than the
	// server's part limit). A document larger than that goes alone.
	PartBytes int
	// Name is the source the server names in positions and keeps with the
	// package ("" is "request", the name of a package sent in one request).
	Name string
}

// Part is one part of an upload: whole documents, in a format, and where
// they sit in the stream they were cut from (Line: its first line;
// Document: the index of its first document).
type Part struct {
	Number   int
	Data     []byte
	Format   string
	Name     string
	Line     int
	Document int
}

// CreateUpload opens an upload of a stack.
func (c *Client) CreateUpload(ctx context.Context, stackID string) (*model.Upload, error) {
	var out model.Upload
	_, err := c.do(ctx, http.MethodPost, "/v1/stacks/"+esc(stackID)+"/uploads", nil, nil, &out)
	return orNil(&out, err)
}

// GetUpload reads an upload with its parts.
func (c *Client) GetUpload(ctx context.Context, stackID, id string) (*model.Upload, error) {
	var out model.Upload
	_, err := c.do(ctx, http.MethodGet, "/v1/stacks/"+esc(stackID)+"/uploads/"+esc(id), nil, nil, &out)
	return orNil(&out, err)
}

// DeleteUpload drops an upload and its parts.
func (c *Client) DeleteUpload(ctx context.Context, stackID, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/v1/stacks/"+esc(stackID)+"/uploads/"+esc(id), nil, nil, nil)
	return err
}

// PutUploadPart sends one part. Sending the same part again changes
// nothing, so a part whose answer was lost can be sent again.
func (c *Client) PutUploadPart(ctx context.Context, stackID, id string, p Part) (*model.UploadPart, error) {
	r := docRequest(http.MethodPut, "/v1/stacks/"+esc(stackID)+"/uploads/"+esc(id)+"/parts/"+strconv.Itoa(p.Number),
		&Document{Data: p.Data, Format: p.Format})
	r.query = url.Values{}
	if p.Name != "" {
		r.query.Set("name", p.Name)
	}
	if p.Line > 1 {
		r.query.Set("line", strconv.Itoa(p.Line))
	}
	if p.Document > 0 {
		r.query.Set("document", strconv.Itoa(p.Document))
	}
	var out model.UploadPart
	_, err := c.roundTrip(ctx, r, &out)
	return orNil(&out, err)
}

// Upload sends doc to a stack in parts: it opens an upload, cuts doc into
// parts of whole documents (YAML at its document markers, a JSON list
// between its elements; anything else is one part), and sends them in
// order, each sent once more when the connection fails (a part sent again
// changes nothing). Positions in the server's errors are those of doc.
// The upload returned holds every part; name it in an apply or dry-run
// with Document{Upload: u.ID}.
func (c *Client) Upload(ctx context.Context, stackID string, doc Document, opts UploadOptions) (*model.Upload, error) {
	u, err := c.CreateUpload(ctx, stackID)
	if err != nil {
		return nil, fmt.Errorf("open an upload: %w", err)
	}
	size := opts.PartBytes
	if size <= 0 {
		size = DefaultPartBytes
	}
	if u.Limits != nil && u.Limits.PartBytes > 0 {
		// A JSON part adds a few bytes around the elements it holds.
		size = min(size, max(int(u.Limits.PartBytes)-partSlack, 1))
	}
	name := opts.Name
	if name == "" {
		name = "request"
	}
	parts, err := SplitDocument(doc, size)
	if err != nil {
		return nil, err
	}
	if u.Limits != nil && len(parts) > u.Limits.Parts {
		return nil, fmt.Errorf("the package makes %d parts of at most %d bytes; the server takes %d", len(parts), size, u.Limits.Parts)
	}
	kept := make([]*model.UploadPart, len(parts))
	// Parts go two at a time (the server reads two at once), unless the
	// package defines kinds: a part reads with the kinds of the parts kept
	// before it, so then they go in order.
	inFlight := partsInFlight
	if definesKinds(doc.Data) {
		inFlight = 1
	}
	var (
		mu     sync.Mutex
		failed error // the failure of the lowest part that failed
		at     int
		wg     sync.WaitGroup
	)
	turns := make(chan struct{}, inFlight)
	for i := range parts {
		p := parts[i]
		p.Number, p.Name = i+1, name
		select {
		case turns <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return nil, ctx.Err()
		}
		mu.Lock()
		stop := failed != nil
		mu.Unlock()
		if stop {
			<-turns
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-turns }()
			k, err := c.putPartOnce(ctx, stackID, u.ID, p)
			mu.Lock()
			defer mu.Unlock()
			kept[i] = k
			if err != nil && (failed == nil || i < at) {
				failed, at = fmt.Errorf("part %d of %d: %w", p.Number, len(parts), err), i
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		return nil, failed
	}
	for _, k := range kept {
		u.Parts = append(u.Parts, *k)
		u.Bytes += k.Bytes
		u.Resources += k.Resources
	}
	return u, nil
}

// partsInFlight is how many parts Upload sends at once.
const partsInFlight = 2

// putPartOnce sends a part, and once more when the connection failed (a
// part sent again changes nothing).
func (c *Client) putPartOnce(ctx context.Context, stackID, id string, p Part) (*model.UploadPart, error) {
	kept, err := c.PutUploadPart(ctx, stackID, id, p)
	var apiErr *APIError
	if err != nil && !errors.As(err, &apiErr) && ctx.Err() == nil {
		kept, err = c.PutUploadPart(ctx, stackID, id, p)
	}
	return kept, err
}

// kindDefinition finds a `kind: Kind` document (YAML or JSON, any case or
// quoting): when a package defines kinds, its parts go in order.
var kindDefinition = regexp.MustCompile(`(?i)["']?\bkind["']?\s*:\s*["']?kind\b`)

func definesKinds(data []byte) bool { return kindDefinition.Match(data) }

// SplitDocument cuts doc into parts of whole documents of at most size
// bytes each (a document larger than size goes alone): a YAML stream at
// its document markers (model.SplitYAML), a JSON list between its
// elements (each part a list of them, laid out so every position is the
// same as in doc); anything else, or a document that fits, is one part.
func SplitDocument(doc Document, size int) ([]Part, error) {
	format := strings.ToLower(doc.Format)
	switch {
	case len(doc.Data) <= size:
	case format == "json":
		return splitJSON(doc.Data, size)
	case format == "yaml" || format == "yml" || format == "":
		return splitYAML(doc.Data, size), nil
	}
	return []Part{{Data: doc.Data, Format: doc.Format, Line: 1}}, nil
}

// splitYAML groups a stream's chunks into parts of at most size bytes.
func splitYAML(data []byte, size int) []Part {
	var parts []Part
	var cur *Part
	start, docs := 0, 0
	model.SplitYAML(data, func(ch model.YAMLChunk) bool {
		end := ch.Offset + len(ch.Data)
		if cur != nil && end-start > size {
			cur.Data = data[start:ch.Offset]
			parts = append(parts, *cur)
			cur = nil
		}
		if cur == nil {
			cur = &Part{Format: "yaml", Line: ch.Line, Document: docs}
			start = ch.Offset
		}
		if holdsDocument(ch.Data) {
			docs++
		}
		return true
	})
	if cur != nil {
		cur.Data = data[start:]
		parts = append(parts, *cur)
	}
	return parts
}

// holdsDocument reports whether a chunk of a stream starts a document: it
// starts with a marker or holds more than comments.
func holdsDocument(chunk []byte) bool {
	if bytes.HasPrefix(chunk, []byte("---")) {
		return true
	}
	for _, line := range bytes.Split(chunk, []byte("\n")) {
		t := bytes.TrimLeft(line, " \t\r")
		if len(t) > 0 && t[0] != '#' {
			return true
		}
	}
	return false
}

// splitJSON cuts a JSON list into lists of its elements of at most size
// bytes. Each part is "[", a line break, the element's indentation, the
// elements as they are in data, and "]", with its Line one before the
// first element's: every element keeps its line and column.
func splitJSON(data []byte, size int) ([]Part, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return []Part{{Data: data, Format: "json", Line: 1}}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("read the JSON list: %w", err)
	}
	type span struct{ start, end int }
	var elems []span
	for dec.More() {
		off := int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("read the JSON list: element %d: %w", len(elems), err)
		}
		end := int(dec.InputOffset())
		start := off
		for start < end && strings.IndexByte(" \t\r\n,", data[start]) >= 0 {
			start++
		}
		elems = append(elems, span{start, end})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("read the JSON list: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("read the JSON list: unexpected data after it")
	}
	var parts []Part
	for i := 0; i < len(elems); {
		j := i + 1
		for j < len(elems) && elems[j].end-elems[i].start <= size {
			j++
		}
		first := elems[i].start
		line := 1 + bytes.Count(data[:first], []byte("\n"))
		// Columns count characters, as the server's positions do.
		col := utf8.RuneCount(data[bytes.LastIndexByte(data[:first], '\n')+1 : first])
		var b bytes.Buffer
		b.Grow(elems[j-1].end - first + col + 4)
		p := Part{Format: "json", Line: line, Document: i}
		if line > 1 {
			b.WriteString("[\n")
			b.Write(bytes.Repeat([]byte(" "), col))
			p.Line = line - 1
		} else {
			// On the list's own first line, after its bracket (col ≥ 1).
			b.WriteString("[")
			b.Write(bytes.Repeat([]byte(" "), max(col-1, 0)))
		}
		b.Write(data[first:elems[j-1].end])
		b.WriteString("\n]")
		p.Data = b.Bytes()
		parts = append(parts, p)
		i = j
	}
	if len(parts) == 0 {
		return []Part{{Data: data, Format: "json", Line: 1}}, nil
	}
	return parts, nil
}

// withPackage runs send with doc, or with an upload of it when it is over
// SingleRequestBytes or the server answers 413 to it in one request.
func (c *Client) withPackage(ctx context.Context, stackID string, doc *Document, send func(*Document) error) error {
	if doc == nil || doc.Upload != "" {
		return send(doc)
	}
	if len(doc.Data) <= SingleRequestBytes {
		err := send(doc)
		if !IsStatus(err, http.StatusRequestEntityTooLarge) {
			return err
		}
	}
	u, err := c.Upload(ctx, stackID, *doc, UploadOptions{})
	if err != nil {
		return err
	}
	return send(&Document{Upload: u.ID, Format: "json"})
}
