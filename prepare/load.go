package prepare

import (
	"context"
	"fmt"
	"runtime"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// PackageLoader parses a stored package snapshot and builds its steps
// (graphs.Parse and graphs.BuildPackage), expanding targeted resources
// onto nodes. The snapshot of a package sent in parts (a manifest) has
// its parts read through parts.
type PackageLoader interface {
	Load(ctx context.Context, content []byte, parts SnapshotReader, nodes []model.Node) (*LoadedPackage, error)
}

// LoadedPackage is a parsed package: its resources, the catalogue its kinds
// resolve in (built-in kinds plus those the package defines) and its steps
// with dependencies.
type LoadedPackage struct {
	Package   *model.Package
	Catalogue *kinds.Catalogue
	Steps     []*model.Step
	// shared is set on a package Snapshots keeps for others: it must not
	// be changed. An unshared one is its caller's alone (see release).
	shared bool
}

// settle collects the garbage of a large (unshared) package's loading or
// planning at once (see collect). A shared (small) package is left to the
// collector's own pace.
func (p *LoadedPackage) settle() {
	if p == nil || p.shared {
		return
	}
	runtime.GC()
}

// release drops what planning no longer needs of an unshared package: its
// steps (the plan holds its own copies) and its resources' specs (the
// steps hold clones of them). The resources keep their identity and
// positions, which messages about the run's steps name. A shared package
// is left as it is. For 100,000 resources this frees about half the
// memory the package took.
func (p *LoadedPackage) release() {
	if p == nil || p.shared {
		return
	}
	p.Steps = nil
	if p.Package != nil {
		for _, r := range p.Package.Resources {
			r.Spec = nil
		}
	}
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

// Load implements PackageLoader. A manifest's parts are decoded one at a
// time (loadManifest).
func (l GraphsLoader) Load(ctx context.Context, content []byte, parts SnapshotReader, nodes []model.Node) (*LoadedPackage, error) {
	cat := l.Catalogue
	if cat == nil {
		cat = kinds.Builtin()
	}
	if m, ok, err := DecodePackageManifest(content); ok {
		if err != nil {
			return nil, err
		}
		if parts == nil {
			return nil, fmt.Errorf("the package is in %d parts and no store was given to read them", len(m.Parts))
		}
		pkg, pcat, err := loadManifest(ctx, parts, m, cat)
		if err != nil {
			return nil, err
		}
		build := graphs.BuildPackage
		if len(pkg.Resources) > cacheMaxSteps {
			// Too large to be kept for later runs (see Snapshots): the
			// caller alone holds it.
			build = graphs.BuildPackageInPlace
		}
		steps, err := build(pkg, pcat, nodes)
		if err != nil {
			return nil, err
		}
		return &LoadedPackage{Package: pkg, Catalogue: pcat, Steps: steps}, nil
	}
	pkg, err := decodeParsedSnapshot(content)
	if err != nil {
		return nil, err
	}
	if pkg == nil {
		docs, err := l.parse(content)
		if err != nil {
			return nil, err
		}
		pkg, cat = docs.Package, docs.Catalogue
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
