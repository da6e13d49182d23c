package server

import (
	"context"

	"github.com/cairn-io/cairn/api"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/providers"
)

// exportLister is the API's export lister over the providers' registry:
// it lists on the control plane, the only node an export reads.
type exportLister struct{ reg *providers.Registry }

// NewExportLister adapts reg for the API (nil: no lister, which refuses
// export by kinds).
func NewExportLister(reg *providers.Registry) api.Lister {
	if reg == nil {
		return nil
	}
	return exportLister{reg: reg}
}

// List implements api.Lister.
func (l exportLister) List(ctx context.Context, kind string, q model.ListQuery) ([]model.Listed, error) {
	return l.reg.List(ctx, kind, providers.Node{}, q)
}
