package prepare

import (
	"context"
	"fmt"

	"github.com/cairn-io/cairn/graphs"
)

// SourceEvaluator turns a Jsonnet source into the JSON source it
// evaluates to; a source of another format is returned as it is.
type SourceEvaluator func(ctx context.Context, src graphs.Source) (graphs.Source, error)

// EncodeSources is the snapshot content of sources that were validated
// into docs: each source as it came, Jsonnet evaluated by evaluate so the
// preparation (and export) never evaluate it again, together with the
// parsed package (see EncodeParsedPackageSnapshot). An evaluation failure
// is returned as evaluate gave it. Cost: one evaluation per Jsonnet
// source, and the package encoded once.
func EncodeSources(ctx context.Context, docs *graphs.Documents, evaluate SourceEvaluator, sources ...graphs.Source) ([]byte, error) {
	snap := make([]SnapshotSource, len(sources))
	for i, src := range sources {
		ev, err := evaluate(ctx, src)
		if err != nil {
			return nil, err
		}
		snap[i] = SnapshotSource{Name: ev.Name, Format: string(ev.Format), Data: string(ev.Data)}
	}
	content, err := EncodeParsedPackageSnapshot(docs, snap...)
	if err != nil {
		return nil, fmt.Errorf("encode package snapshot: %w", err)
	}
	return content, nil
}
