package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
)

// requestSource is the name request bodies carry in error positions.
const requestSource = "request"

// documentTypes maps the accepted media types to encodings.
var documentTypes = map[string]graphs.Format{
	"application/yaml":      graphs.FormatYAML,
	"application/x-yaml":    graphs.FormatYAML,
	"text/yaml":             graphs.FormatYAML,
	"text/x-yaml":           graphs.FormatYAML,
	"application/json":      graphs.FormatJSON,
	"application/jsonnet":   graphs.FormatJsonnet,
	"application/x-jsonnet": graphs.FormatJsonnet,
}

// mediaTypeOf is the canonical media type of an encoding.
func mediaTypeOf(f graphs.Format) string {
	switch f {
	case graphs.FormatJSON:
		return "application/json"
	case graphs.FormatJsonnet:
		return "application/jsonnet"
	default:
		return "application/yaml"
	}
}

// readDocument reads the request body as one source. With optional, an
// empty body returns nil (the caller falls back to a stack's URLs).
func readDocument(c echo.Context, optional bool) (*graphs.Source, error) {
	data, err := readBody(c)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if optional {
			return nil, nil
		}
		return nil, badRequest("empty request body: send a document (YAML, JSON or Jsonnet)")
	}
	mt, err := mediaType(c)
	if err != nil {
		return nil, err
	}
	format, ok := documentTypes[mt]
	if !ok && strings.HasSuffix(mt, "+json") {
		format, ok = graphs.FormatJSON, true
	}
	if !ok {
		shown := mt
		if shown == "" {
			shown = "none"
		}
		return nil, newError(http.StatusUnsupportedMediaType,
			"Content-Type %s is not a document type: send application/yaml, application/json or application/jsonnet", shown)
	}
	return &graphs.Source{Name: requestSource, Data: data, Format: format}, nil
}

// parseOptions are the options of every parse of a document from the
// network: the server's catalogue, Jsonnet evaluated in the sandbox, and
// no import directory, so Jsonnet must be self-contained.
func (s *server) parseOptions() graphs.Options {
	return graphs.Options{Catalogue: s.catalogue, MaxBytes: s.cfg.BodyLimit, Jsonnet: s.jsonnet}
}

// evaluated returns a source as the executor should read it: Jsonnet
// evaluated to JSON (in the sandbox, as the parse did), anything else as
// it came. So no worker ever evaluates a program posted to the API.
func (s *server) evaluated(ctx context.Context, src graphs.Source) (graphs.Source, error) {
	if src.Format != graphs.FormatJsonnet {
		return src, nil
	}
	ctx, cancel := context.WithTimeout(ctx, graphs.DefaultTimeout)
	defer cancel()
	out, err := s.jsonnet.EvaluateJsonnet(ctx, graphs.JsonnetRequest{
		Name: src.Name, Source: string(src.Data),
		MaxStack: graphs.DefaultJsonnetMaxStack, MaxDepth: graphs.DefaultMaxDepth, MaxOutput: s.cfg.BodyLimit,
	})
	if err != nil {
		return graphs.Source{}, fmt.Errorf("evaluate %s: %w", src.Name, err)
	}
	return graphs.Source{Name: src.Name, Data: out, Format: graphs.FormatJSON}, nil
}

// documentDetails turns a parse failure into error details; ok is false
// when err is not about the documents (then it is a server fault).
func documentDetails(err error) ([]model.ErrorDetail, bool) {
	var errs graphs.Errors
	if errors.As(err, &errs) {
		out := make([]model.ErrorDetail, 0, len(errs))
		for _, e := range errs {
			out = append(out, detailAt(e.Pos, e.Path, e.Message))
		}
		return out, true
	}
	var one graphs.Error
	if errors.As(err, &one) {
		return []model.ErrorDetail{detailAt(one.Pos, one.Path, one.Message)}, true
	}
	var onePtr *graphs.Error
	if errors.As(err, &onePtr) {
		return []model.ErrorDetail{detailAt(onePtr.Pos, onePtr.Path, onePtr.Message)}, true
	}
	return nil, false
}

// invalidDocuments answers 422 with every error of a parse, or hides an
// unexpected failure behind a 500.
func invalidDocuments(what string, err error, extra map[string]any) error {
	details, ok := documentDetails(err)
	if !ok {
		return internalError(fmt.Errorf("parse %s: %w", what, err))
	}
	msg := fmt.Sprintf("%s is invalid: %d error", what, len(details))
	if len(details) != 1 {
		msg += "s"
	}
	return &Error{Status: http.StatusUnprocessableEntity, Message: msg, Details: details, Extra: extra}
}

// refStrings renders references as "Kind/name" (nil for none).
func refStrings(refs []model.Ref) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.String())
	}
	return out
}

func summarize(docs *graphs.Documents) model.PackageSummary {
	sum := model.PackageSummary{Kinds: map[string]int{}, Items: []model.SummaryItem{}, EnvRefs: []string{}, SecretRefs: []string{}}
	if docs == nil {
		return sum
	}
	sum.Graphs = len(docs.Graphs)
	if docs.Package == nil {
		return sum
	}
	specs := map[string]any{}
	for i, r := range docs.Package.Resources {
		sum.Resources++
		sum.Kinds[r.Kind]++
		item := model.SummaryItem{Kind: r.Kind, Name: r.Name, DependsOn: refStrings(r.DependsOn),
			Associations: refStrings(r.Associations), Notify: refStrings(r.Notify), Subscribe: refStrings(r.Subscribe)}
		sum.Items = append(sum.Items, item)
		specs[strconv.Itoa(i)] = map[string]any(r.Spec)
	}
	// One walker for every reference: envRef/secretRef values and the
	// env/secret template functions alike.
	env, secrets, _ := expr.Scan(specs)
	sum.EnvRefs = append(sum.EnvRefs, env...)
	sum.SecretRefs = append(sum.SecretRefs, secrets...)
	return sum
}

// validatePackage answers 200 with a summary, or 422 with every error.
func (s *server) validatePackage(c echo.Context) error {
	src, err := readDocument(c, false)
	if err != nil {
		return err
	}
	opts := s.parseOptions()
	opts.Warn = warnHeader(c)
	docs, err := graphs.Parse(opts, *src)
	if err != nil {
		return invalidDocuments("package", err, nil)
	}
	return c.JSON(http.StatusOK, summarize(docs))
}

// negotiate picks "yaml" or "json" for an answer from ?format= or Accept;
// def when neither says. An Accept that allows neither is 406.
func negotiate(c echo.Context, def string) (string, error) {
	if f := strings.ToLower(c.QueryParam("format")); f != "" {
		switch f {
		case "yaml", "yml":
			return "yaml", nil
		case "json":
			return "json", nil
		}
		return "", badRequest("format %q: want yaml or json", f)
	}
	accept := c.Request().Header.Get(echo.HeaderAccept)
	if accept == "" {
		return def, nil
	}
	best, bestQ := "", -1.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if parsed, err := strconv.ParseFloat(v, 64); err == nil {
				q = parsed
			}
		}
		var f string
		switch {
		case mt == "*/*" || mt == "application/*":
			f = def
		case mt == "text/*" || documentTypes[mt] == graphs.FormatYAML:
			f = "yaml"
		case documentTypes[mt] == graphs.FormatJSON || strings.HasSuffix(mt, "+json"):
			f = "json"
		}
		if f != "" && q > bestQ && q > 0 {
			best, bestQ = f, q
		}
	}
	if best == "" {
		return "", newError(http.StatusNotAcceptable, "cannot answer in %q: ask for application/yaml or application/json", accept)
	}
	return best, nil
}

// contentTypeOf is the media type an answer in format is sent with.
func contentTypeOf(format string) string {
	if format == "json" {
		return "application/json"
	}
	return "application/yaml"
}

// acceptsVerbatim reports whether the request's Accept admits the stored
// media type as it is (no Accept, a wildcard, or the type itself).
func acceptsVerbatim(c echo.Context, stored string) bool {
	accept := c.Request().Header.Get(echo.HeaderAccept)
	if accept == "" {
		return true
	}
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || params["q"] == "0" {
			continue
		}
		if mt == "*/*" || mt == stored || documentTypes[mt] != "" && documentTypes[mt] == documentTypes[stored] {
			return true
		}
	}
	return false
}
