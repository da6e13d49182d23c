package store

import (
	"context"
	"fmt"

	"github.com/cairn-io/cairn/model"
)

// ListAllGraphs lists every stored graph the filter selects, without its
// tasks or source (one indexed scan of the graphs table; no graph is
// decoded), ordered by layer, owner and type. UsedBy is left for the
// caller, which knows the clusters.
func (s *sqlStore) ListAllGraphs(ctx context.Context, f model.GraphFilter) ([]model.GraphMeta, error) {
	query := `SELECT layer, owner_id, type, name, updated_at FROM graphs WHERE 1 = 1`
	var args []any
	add := func(column, value string) {
		if value == "" {
			return
		}
		args = append(args, value)
		query += fmt.Sprintf(" AND %s = $%d", column, len(args))
	}
	add("layer", string(f.Layer))
	add("owner_id", f.OwnerID)
	add("type", f.Type)
	query += ` ORDER BY layer, owner_id, type`
	out, err := queryAll(ctx, s.r, func(row scanner) (model.GraphMeta, error) {
		var g model.GraphMeta
		var layer string
		err := row.Scan(&layer, &g.OwnerID, &g.Type, &g.Name, timeCol{&g.UpdatedAt})
		g.Layer = model.Layer(layer)
		return g, err
	}, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list graphs: %w", err)
	}
	return out, nil
}
