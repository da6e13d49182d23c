package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/cairn-io/cairn/model"
)

// ownerTable is the table of a layer's owners.
func ownerTable(layer model.Layer) (string, error) {
	switch layer {
	case model.LayerRelease:
		return "releases", nil
	case model.LayerCluster:
		return "clusters", nil
	case model.LayerPlugin:
		return "plugins", nil
	default:
		return "", fmt.Errorf("unknown graph layer %q (want release, cluster or plugin)", layer)
	}
}

// PutGraph stores the owner's graph of g.Type (DefaultGraphType when empty),
// replacing the one there whole. The owner must exist (ErrNotFound). It
// fills Type and UpdatedAt.
func (s *sqlStore) PutGraph(ctx context.Context, g *model.StoredGraph) error {
	table, err := ownerTable(g.Layer)
	if err != nil {
		return fmt.Errorf("put graph: %w", err)
	}
	if g.Type == "" {
		g.Type = model.DefaultGraphType
		if g.Graph != nil && g.Graph.Type != "" {
			g.Type = g.Graph.Type
		}
	}
	parsed, err := encodeGraph(g.Graph)
	if err != nil {
		return fmt.Errorf("put %s graph %q of %s %q: %w", g.Type, g.Name, g.Layer, g.OwnerID, err)
	}
	source := g.Source
	if source == nil {
		source = []byte{}
	}
	at := now()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if ok, err := exists(ctx, tx, table, g.OwnerID); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("%s %q: %w", g.Layer, g.OwnerID, ErrNotFound)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO graphs (layer, owner_id, type, name, source, content_type, graph, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (layer, owner_id, type) DO UPDATE SET name = excluded.name, source = excluded.source,
				content_type = excluded.content_type, graph = excluded.graph, updated_at = excluded.updated_at`,
			string(g.Layer), g.OwnerID, g.Type, g.Name, source, g.ContentType, string(parsed), s.d.timeArg(at))
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return err
		}
		return fmt.Errorf("put %s graph of %s %q: %w", g.Type, g.Layer, g.OwnerID, err)
	}
	g.UpdatedAt = at
	return nil
}

const graphColumns = `layer, owner_id, type, name, source, content_type, graph, updated_at`

func scanGraph(row scanner) (*model.StoredGraph, error) {
	var g model.StoredGraph
	var layer, parsed string
	if err := row.Scan(&layer, &g.OwnerID, &g.Type, &g.Name, &g.Source, &g.ContentType, &parsed, timeCol{&g.UpdatedAt}); err != nil {
		return nil, err
	}
	g.Layer = model.Layer(layer)
	if g.Source == nil {
		g.Source = []byte{}
	}
	var err error
	if g.Graph, err = decodeGraph([]byte(parsed)); err != nil {
		return nil, fmt.Errorf("%s graph of %s %q: parsed form: %w", g.Type, g.Layer, g.OwnerID, err)
	}
	return &g, nil
}

func (s *sqlStore) GetGraph(ctx context.Context, layer model.Layer, ownerID, graphType string) (*model.StoredGraph, error) {
	if graphType == "" {
		graphType = model.DefaultGraphType
	}
	return getOne(ctx, s.r, scanGraph, fmt.Sprintf("%s graph of %s %q", graphType, layer, ownerID),
		`SELECT `+graphColumns+` FROM graphs WHERE layer = $1 AND owner_id = $2 AND type = $3`, string(layer), ownerID, graphType)
}

// ListGraphs returns the owner's graphs ordered by type; none is an empty
// list, not an error, even when the owner does not exist.
func (s *sqlStore) ListGraphs(ctx context.Context, layer model.Layer, ownerID string) ([]*model.StoredGraph, error) {
	out, err := queryAll(ctx, s.r, scanGraph, `SELECT `+graphColumns+` FROM graphs WHERE layer = $1 AND owner_id = $2 ORDER BY type`,
		string(layer), ownerID)
	if err != nil {
		return nil, fmt.Errorf("list graphs of %s %q: %w", layer, ownerID, err)
	}
	return out, nil
}

func (s *sqlStore) DeleteGraph(ctx context.Context, layer model.Layer, ownerID, graphType string) error {
	if graphType == "" {
		graphType = model.DefaultGraphType
	}
	n, err := execCount(ctx, s.w, `DELETE FROM graphs WHERE layer = $1 AND owner_id = $2 AND type = $3`,
		string(layer), ownerID, graphType)
	if err != nil {
		return fmt.Errorf("delete %s graph of %s %q: %w", graphType, layer, ownerID, err)
	}
	if n == 0 {
		return fmt.Errorf("%s graph of %s %q: %w", graphType, layer, ownerID, ErrNotFound)
	}
	return nil
}
