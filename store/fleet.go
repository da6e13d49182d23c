package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cairn-io/cairn/model"
)

// PutRelease creates the release or updates it in place by ID, keeping its
// CreatedAt. It fills ID (when empty), CreatedAt and UpdatedAt.
func (s *sqlStore) PutRelease(ctx context.Context, r *model.Release) error {
	if r.ID == "" {
		r.ID = newID()
	}
	at := now()
	err := s.w.QueryRowContext(ctx, `INSERT INTO releases (id, name, version, description, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $5)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, version = excluded.version,
			description = excluded.description, updated_at = excluded.updated_at
		RETURNING created_at`, r.ID, r.Name, r.Version, r.Description, s.d.timeArg(at)).Scan(timeCol{&r.CreatedAt})
	if err != nil {
		return fmt.Errorf("put release %q: %w", r.ID, err)
	}
	r.UpdatedAt = at
	return nil
}

const releaseColumns = `id, name, version, description, created_at, updated_at`

func scanRelease(row scanner) (*model.Release, error) {
	var r model.Release
	if err := row.Scan(&r.ID, &r.Name, &r.Version, &r.Description, timeCol{&r.CreatedAt}, timeCol{&r.UpdatedAt}); err != nil {
		return nil, err
	}
	return &r, nil
}

func (s *sqlStore) GetRelease(ctx context.Context, id string) (*model.Release, error) {
	return getOne(ctx, s.r, scanRelease, fmt.Sprintf("release %q", id), `SELECT `+releaseColumns+` FROM releases WHERE id = $1`, id)
}

func (s *sqlStore) ListReleases(ctx context.Context) ([]*model.Release, error) {
	out, err := queryAll(ctx, s.r, scanRelease, `SELECT `+releaseColumns+` FROM releases ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list releases: %w", err)
	}
	return out, nil
}

// DeleteRelease deletes the release and its graphs. A release that a
// cluster uses is not deleted (ErrConflict).
func (s *sqlStore) DeleteRelease(ctx context.Context, id string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var cluster string
		err := tx.QueryRowContext(ctx, `SELECT id FROM clusters WHERE release_id = $1 ORDER BY id LIMIT 1`, id).Scan(&cluster)
		if err == nil {
			return fmt.Errorf("release %q is used by cluster %q: %w", id, cluster, ErrConflict)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return deleteOwner(ctx, tx, "releases", model.LayerRelease, id)
	})
	return wrapDelete("release", id, err)
}

// PutPlugin creates the plugin or updates it in place by ID, keeping its
// CreatedAt. It fills ID (when empty), CreatedAt and UpdatedAt.
func (s *sqlStore) PutPlugin(ctx context.Context, p *model.Plugin) error {
	if p.ID == "" {
		p.ID = newID()
	}
	at := now()
	err := s.w.QueryRowContext(ctx, `INSERT INTO plugins (id, name, version, description, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $5)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, version = excluded.version,
			description = excluded.description, updated_at = excluded.updated_at
		RETURNING created_at`, p.ID, p.Name, p.Version, p.Description, s.d.timeArg(at)).Scan(timeCol{&p.CreatedAt})
	if err != nil {
		return fmt.Errorf("put plugin %q: %w", p.ID, err)
	}
	p.UpdatedAt = at
	return nil
}

const pluginColumns = `id, name, version, description, created_at, updated_at`

func scanPlugin(row scanner) (*model.Plugin, error) {
	var p model.Plugin
	if err := row.Scan(&p.ID, &p.Name, &p.Version, &p.Description, timeCol{&p.CreatedAt}, timeCol{&p.UpdatedAt}); err != nil {
		return nil, err
	}
	return &p, nil
}

func (s *sqlStore) GetPlugin(ctx context.Context, id string) (*model.Plugin, error) {
	return getOne(ctx, s.r, scanPlugin, fmt.Sprintf("plugin %q", id), `SELECT `+pluginColumns+` FROM plugins WHERE id = $1`, id)
}

func (s *sqlStore) ListPlugins(ctx context.Context) ([]*model.Plugin, error) {
	out, err := queryAll(ctx, s.r, scanPlugin, `SELECT `+pluginColumns+` FROM plugins ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list plugins: %w", err)
	}
	return out, nil
}

// DeletePlugin deletes the plugin and its graphs. A plugin attached to a
// cluster is not deleted (ErrConflict).
func (s *sqlStore) DeletePlugin(ctx context.Context, id string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var cluster string
		err := tx.QueryRowContext(ctx, `SELECT cluster_id FROM cluster_plugins WHERE plugin_id = $1 ORDER BY cluster_id LIMIT 1`, id).Scan(&cluster)
		if err == nil {
			return fmt.Errorf("plugin %q is attached to cluster %q: %w", id, cluster, ErrConflict)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return deleteOwner(ctx, tx, "plugins", model.LayerPlugin, id)
	})
	return wrapDelete("plugin", id, err)
}

// PutCluster creates the cluster or updates it by ID, replacing its nodes
// and its ordered plugins whole. The release and plugins must exist
// (ErrNotFound otherwise). Nodes without an ID get their name as ID (so the
// node keeps its history across saves), or a random one.
func (s *sqlStore) PutCluster(ctx context.Context, c *model.Cluster) error {
	if c.ID == "" {
		c.ID = newID()
	}
	if err := checkCluster(c); err != nil {
		return err
	}
	at := now()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var release any
		if c.ReleaseID != "" {
			if ok, err := exists(ctx, tx, "releases", c.ReleaseID); err != nil {
				return err
			} else if !ok {
				return fmt.Errorf("cluster %q: release %q: %w", c.ID, c.ReleaseID, ErrNotFound)
			}
			release = c.ReleaseID
		}
		for _, p := range c.PluginIDs {
			if ok, err := exists(ctx, tx, "plugins", p); err != nil {
				return err
			} else if !ok {
				return fmt.Errorf("cluster %q: plugin %q: %w", c.ID, p, ErrNotFound)
			}
		}
		// Settings left nil keep what is stored: they are edited on their
		// own (SetClusterSettings, UpdateClusterSettings).
		keep := c.Settings == nil
		settings, err := marshalTree(c.Settings)
		if err != nil {
			return fmt.Errorf("settings: %w", err)
		}
		var stored string
		if err := tx.QueryRowContext(ctx, `INSERT INTO clusters (id, name, release_id, settings, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $5)
			ON CONFLICT (id) DO UPDATE SET name = excluded.name, release_id = excluded.release_id,
				settings = CASE WHEN $6 THEN clusters.settings ELSE excluded.settings END,
				updated_at = excluded.updated_at
			RETURNING created_at, settings`, c.ID, c.Name, release, settings, s.d.timeArg(at), keep).
			Scan(timeCol{&c.CreatedAt}, &stored); err != nil {
			return err
		}
		if c.Settings, err = unmarshalTree(stored); err != nil {
			return fmt.Errorf("settings: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM cluster_plugins WHERE cluster_id = $1`, c.ID); err != nil {
			return err
		}
		for i, p := range c.PluginIDs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO cluster_plugins (cluster_id, position, plugin_id) VALUES ($1, $2, $3)`,
				c.ID, i, p); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM nodes WHERE cluster_id = $1`, c.ID); err != nil {
			return err
		}
		for i, n := range c.Nodes {
			roles, err := json.Marshal(n.Roles)
			if err != nil {
				return fmt.Errorf("node %q roles: %w", n.ID, err)
			}
			attrs, err := marshalTree(n.Attributes)
			if err != nil {
				return fmt.Errorf("node %q attributes: %w", n.ID, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO nodes (cluster_id, id, position, name, roles, mode, attributes) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
				c.ID, n.ID, i, n.Name, string(roles), string(n.Mode), attrs); err != nil {
				return err
			}
		}
		if err := dropStaleNodeFacts(ctx, tx, c.ID); err != nil {
			return err
		}
		return dropStaleNodeTokens(ctx, tx, c.ID)
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return err
		}
		return fmt.Errorf("put cluster %q: %w", c.ID, err)
	}
	c.UpdatedAt = at
	return nil
}

// checkCluster fills missing node ids and rejects duplicates, which would
// make Cluster.Node ambiguous.
func checkCluster(c *model.Cluster) error {
	ids := map[string]bool{}
	names := map[string]bool{}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.ID == "" {
			n.ID = n.Name
			if n.ID == "" || ids[n.ID] {
				n.ID = newID()
			}
		}
		if ids[n.ID] {
			return fmt.Errorf("cluster %q: node id %q appears twice: %w", c.ID, n.ID, ErrConflict)
		}
		ids[n.ID] = true
		if n.Name != "" {
			if names[n.Name] {
				return fmt.Errorf("cluster %q: node name %q appears twice: %w", c.ID, n.Name, ErrConflict)
			}
			names[n.Name] = true
		}
	}
	plugins := map[string]bool{}
	for _, p := range c.PluginIDs {
		if plugins[p] {
			return fmt.Errorf("cluster %q: plugin %q attached twice: %w", c.ID, p, ErrConflict)
		}
		plugins[p] = true
	}
	return nil
}

func (s *sqlStore) GetCluster(ctx context.Context, id string) (*model.Cluster, error) {
	var c *model.Cluster
	err := s.inReadTx(ctx, func(tx *sql.Tx) error {
		var err error
		c, err = scanCluster(tx.QueryRowContext(ctx, `SELECT `+clusterColumns+` FROM clusters WHERE id = $1`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("cluster %q: %w", id, ErrNotFound)
		}
		if err != nil {
			return err
		}
		byID := map[string]*model.Cluster{c.ID: c}
		if err := loadClusterParts(ctx, tx, byID, `WHERE cluster_id = $1`, id); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("get cluster %q: %w", id, err)
	}
	return c, nil
}

func (s *sqlStore) ListClusters(ctx context.Context) ([]*model.Cluster, error) {
	out := []*model.Cluster{}
	err := s.inReadTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+clusterColumns+` FROM clusters ORDER BY created_at, id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		byID := map[string]*model.Cluster{}
		for rows.Next() {
			c, err := scanCluster(rows)
			if err != nil {
				return err
			}
			out = append(out, c)
			byID[c.ID] = c
		}
		if err := rows.Err(); err != nil {
			return err
		}
		_ = rows.Close()
		return loadClusterParts(ctx, tx, byID, ``)
	})
	if err != nil {
		return nil, fmt.Errorf("list clusters: %w", err)
	}
	return out, nil
}

const clusterColumns = `id, name, release_id, settings, created_at, updated_at`

func scanCluster(row scanner) (*model.Cluster, error) {
	var c model.Cluster
	var release sql.NullString
	var settings string
	if err := row.Scan(&c.ID, &c.Name, &release, &settings, timeCol{&c.CreatedAt}, timeCol{&c.UpdatedAt}); err != nil {
		return nil, err
	}
	var err error
	if c.Settings, err = unmarshalTree(settings); err != nil {
		return nil, fmt.Errorf("cluster %q settings: %w", c.ID, err)
	}
	c.ReleaseID = release.String
	c.Nodes = []model.Node{}
	return &c, nil
}

// loadClusterParts fills the plugins and nodes of the clusters in byID,
// reading the rows that where (a filter on cluster_id, or empty) selects.
func loadClusterParts(ctx context.Context, tx *sql.Tx, byID map[string]*model.Cluster, where string, args ...any) error {
	rows, err := tx.QueryContext(ctx, `SELECT cluster_id, plugin_id FROM cluster_plugins `+where+` ORDER BY cluster_id, position`, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		var cid, pid string
		if err := rows.Scan(&cid, &pid); err != nil {
			_ = rows.Close()
			return err
		}
		if c := byID[cid]; c != nil {
			c.PluginIDs = append(c.PluginIDs, pid)
		}
	}
	if err := rows.Err(); err != nil {
		_ = rows.Close()
		return err
	}
	_ = rows.Close()

	rows, err = tx.QueryContext(ctx, `SELECT cluster_id, id, name, roles, mode, attributes FROM nodes `+where+` ORDER BY cluster_id, position`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var cid, roles, mode, attrs string
		var n model.Node
		if err := rows.Scan(&cid, &n.ID, &n.Name, &roles, &mode, &attrs); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(roles), &n.Roles); err != nil {
			return fmt.Errorf("node %q of cluster %q: roles: %w", n.ID, cid, err)
		}
		if n.Attributes, err = unmarshalTree(attrs); err != nil {
			return fmt.Errorf("node %q of cluster %q: attributes: %w", n.ID, cid, err)
		}
		n.Mode = model.NodeMode(mode)
		if c := byID[cid]; c != nil {
			c.Nodes = append(c.Nodes, n)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	_ = rows.Close()
	return loadNodeFacts(ctx, tx, byID, where, args...)
}

// DeleteCluster deletes the cluster with its nodes, plugin attachments,
// node history and graphs.
func (s *sqlStore) DeleteCluster(ctx context.Context, id string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// A stack's resources on the cluster's nodes would be left where
		// no run of the stack can reach them.
		var stack string
		err := tx.QueryRowContext(ctx, `SELECT id FROM stacks WHERE cluster_id = $1 ORDER BY id LIMIT 1`, id).Scan(&stack)
		if err == nil {
			return fmt.Errorf("cluster %q holds the resources of stack %q (delete the stack first): %w", id, stack, ErrConflict)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return deleteOwner(ctx, tx, "clusters", model.LayerCluster, id)
	})
	return wrapDelete("cluster", id, err)
}

// deleteOwner deletes the row id of table and the graphs it owns in layer;
// rows that reference it with ON DELETE CASCADE go with it.
func deleteOwner(ctx context.Context, tx *sql.Tx, table string, layer model.Layer, id string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM graphs WHERE layer = $1 AND owner_id = $2`, string(layer), id); err != nil {
		return err
	}
	n, err := execCount(ctx, tx, `DELETE FROM `+table+` WHERE id = $1`, id)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s %q: %w", layer, id, ErrNotFound)
	}
	return nil
}

func wrapDelete(what, id string, err error) error {
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) {
		return err
	}
	return fmt.Errorf("delete %s %q: %w", what, id, err)
}
