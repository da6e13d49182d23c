package prepare

import (
	"context"
	"fmt"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// PackageLoader parses a stored package snapshot and builds its steps
// (graphs.Parse and graphs.BuildPackage), expanding targeted resources
// onto nodes.
type PackageLoader interface {
	Load(ctx context.Context, content []byte, nodes []model.Node) (*LoadedPackage, error)
}

// LoadedPackage is a parsed package: its resources, the catalogue its kinds
// resolve in (built-in kinds plus those the package defines) and its steps
// with dependencies.
type LoadedPackage struct {
	Package   *model.Package
	Catalogue *kinds.Catalogue
	Steps     []*model.Step
}

// GraphsLoader reads package snapshots. A snapshot that carries the
// package as the API parsed and validated it is decoded from that form; any
// other (older snapshots, raw documents) is parsed and validated again with
// the graphs package, kinds it defines joining the catalogue. Either way
// the steps are built onto the given nodes.
type GraphsLoader struct {
	// Catalogue is the base catalogue (nil: kinds.Builtin()).
	Catalogue *kinds.Catalogue
}

// Load implements PackageLoader.
func (l GraphsLoader) Load(ctx context.Context, content []byte, nodes []model.Node) (*LoadedPackage, error) {
	pkg, err := decodeParsedSnapshot(content)
	if err != nil {
		return nil, err
	}
	cat := l.Catalogue
	if pkg == nil {
		docs, err := l.parse(content)
		if err != nil {
			return nil, err
		}
		pkg, cat = docs.Package, docs.Catalogue
	} else if cat == nil {
		cat = kinds.Builtin()
	}
	steps, err := graphs.BuildPackage(pkg, cat, nodes)
	if err != nil {
		return nil, err
	}
	return &LoadedPackage{Package: pkg, Catalogue: cat, Steps: steps}, nil
}

// parse reads the snapshot's sources again.
func (l GraphsLoader) parse(content []byte) (*graphs.Documents, error) {
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
	return docs, nil
}
