package prepare

import (
	"context"
	"errors"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// placeholderValues are the values of a cluster's placeholders: its id,
// settings and its release's version.
func placeholderValues(ctx context.Context, st GraphStore, c *model.Cluster) (graphs.PlaceholderValues, error) {
	var rel *model.Release
	if c.ReleaseID != "" {
		r, err := st.GetRelease(ctx, c.ReleaseID)
		switch {
		case err == nil:
			rel = r
		case !errors.Is(err, store.ErrNotFound):
			return graphs.PlaceholderValues{}, err
		}
	}
	return graphs.ValuesFor(c, rel), nil
}
