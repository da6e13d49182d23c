package activities

import (
	"context"
	"fmt"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// GraphsLoader reads package snapshots with the graphs package: it parses
// and validates the sources (kinds they define join the catalogue) and
// builds the steps onto the given nodes.
type GraphsLoader struct {
	// Catalogue is the base catalogue (nil: kinds.Builtin()).
	Catalogue *kinds.Catalogue
}

// Load implements PackageLoader.
func (l GraphsLoader) Load(ctx context.Context, content []byte, nodes []model.Node) (*LoadedPackage, error) {
	snap, err := DecodePackageSnapshot(content)
	if err != nil {
		return nil, err
	}
	sources := make([]graphs.Source, len(snap.Sources))
	for i, s := range snap.Sources {
		sources[i] = graphs.Source{Name: s.Name, Data: []byte(s.Data), Format: graphs.Format(s.Format)}
	}
	// The snapshot passed the API's limits when it was stored; reading it
	// again must not refuse a large package those limits allowed.
	docs, err := graphs.Parse(graphs.Options{
		Catalogue: l.Catalogue, MaxBytes: 1 << 30, MaxTotalBytes: 4 << 30, MaxNodes: 1 << 30,
	}, sources...)
	if err != nil {
		return nil, err
	}
	if docs.Package == nil {
		return nil, fmt.Errorf("the snapshot holds no package")
	}
	steps, err := graphs.BuildPackage(docs.Package, docs.Catalogue, nodes)
	if err != nil {
		return nil, err
	}
	return &LoadedPackage{Package: docs.Package, Catalogue: docs.Catalogue, Steps: steps}, nil
}
