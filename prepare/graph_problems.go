package prepare

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
)

// ErrInvalidGraph marks a graph execution that cannot run as asked (a graph
// that does not merge, validate or expand, an unknown node or task, an
// expression that fails): retrying does not help. Every such error of this
// package wraps it; store failures do not.
var ErrInvalidGraph = errors.New("invalid graph execution")

// Problems is every problem found in a graph execution request, each
// positioned in its document (the request, a graph layer) where known.
type Problems struct {
	Message string
	Details []model.ErrorDetail
}

func (p *Problems) Error() string {
	parts := make([]string, len(p.Details))
	for i, d := range p.Details {
		parts[i] = d.String()
	}
	return p.Message + ": " + strings.Join(parts, "; ")
}

// Is makes Problems an ErrInvalidGraph.
func (p *Problems) Is(target error) bool { return target == ErrInvalidGraph }

// invalidGraph is one problem found while preparing an execution.
func invalidGraph(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidGraph, fmt.Sprintf(format, args...))
}

// InvalidReason is err's message without ErrInvalidGraph's prefix: what to tell the
// operator.
func InvalidReason(err error) string {
	var p *Problems
	if errors.As(err, &p) {
		return p.Error()
	}
	return strings.TrimPrefix(err.Error(), ErrInvalidGraph.Error()+": ")
}

// graphDetails are the positioned errors of a graphs failure, each message
// prefixed; ok is false when err carries none.
func graphDetails(err error, prefix string) ([]model.ErrorDetail, bool) {
	var list graphs.Errors
	var one graphs.Error
	var onePtr *graphs.Error
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = graphs.Errors{one}
	case errors.As(err, &onePtr):
		list = graphs.Errors{*onePtr}
	default:
		return nil, false
	}
	out := make([]model.ErrorDetail, 0, len(list))
	for _, e := range list {
		out = append(out, model.ErrorDetail{
			Document: e.Pos.Source, Index: e.Pos.Doc, Path: e.Path, Line: e.Pos.Line, Column: e.Pos.Column,
			Message: prefix + e.Message,
		})
	}
	return out, true
}
