package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/cairn-io/cairn/model"
)

// SealedTreeKey is the one key of a settings or attributes tree stored
// sealed: its value is the tree's JSON sealed like step data (AES-256-GCM,
// bound to the cluster and node it belongs to), base64-encoded. Fuel's
// settings carry passwords, so with a sealing key none is kept in clear.
const SealedTreeKey = "$cairnSealed"

func settingsAD(clusterID string) string { return "cluster-settings\x00" + clusterID }

func attributesAD(clusterID, nodeID string) string {
	return "node-attributes\x00" + clusterID + "\x00" + nodeID
}

// sealTree seals a tree under the additional data ad; nil stays nil.
func (s *sealedStore) sealTree(ad string, m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	sealed := s.seal(ad, "", "tree", raw)
	return map[string]any{SealedTreeKey: base64.StdEncoding.EncodeToString(sealed)}, nil
}

// openTree opens what sealTree made; a tree stored before sealing was
// enabled is returned as it is.
func (s *sealedStore) openTree(ad string, m map[string]any) (map[string]any, error) {
	v, ok := m[SealedTreeKey].(string)
	if !ok || len(m) != 1 {
		return m, nil
	}
	sealed, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("sealed tree: %w", ErrUnsealable)
	}
	raw, err := s.open(ad, "", "tree", sealed)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("sealed tree: %w", err)
	}
	return out, nil
}

// openCluster opens a cluster's settings and its nodes' attributes in place.
func (s *sealedStore) openCluster(c *model.Cluster) error {
	var err error
	if c.Settings, err = s.openTree(settingsAD(c.ID), c.Settings); err != nil {
		return fmt.Errorf("settings of cluster %q: %w", c.ID, err)
	}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.Attributes, err = s.openTree(attributesAD(c.ID, n.ID), n.Attributes); err != nil {
			return fmt.Errorf("attributes of node %q of cluster %q: %w", n.ID, c.ID, err)
		}
	}
	return nil
}

// PutCluster stores c with its settings and node attributes sealed; c
// itself keeps them in clear.
func (s *sealedStore) PutCluster(ctx context.Context, c *model.Cluster) error {
	if c.ID == "" {
		c.ID = newID()
	}
	if err := checkCluster(c); err != nil { // fills node ids, which bind the seals
		return err
	}
	sealed := *c
	var err error
	if sealed.Settings, err = s.sealTree(settingsAD(c.ID), c.Settings); err != nil {
		return fmt.Errorf("put cluster %q: settings: %w", c.ID, err)
	}
	sealed.Nodes = make([]model.Node, len(c.Nodes))
	for i, n := range c.Nodes {
		if n.Attributes, err = s.sealTree(attributesAD(c.ID, n.ID), n.Attributes); err != nil {
			return fmt.Errorf("put cluster %q: node %q attributes: %w", c.ID, n.ID, err)
		}
		sealed.Nodes[i] = n
	}
	if err := s.Store.PutCluster(ctx, &sealed); err != nil {
		return err
	}
	c.CreatedAt, c.UpdatedAt = sealed.CreatedAt, sealed.UpdatedAt
	if c.Settings == nil { // kept: the stored ones
		if c.Settings, err = s.openTree(settingsAD(c.ID), sealed.Settings); err != nil {
			return fmt.Errorf("settings of cluster %q: %w", c.ID, err)
		}
	}
	return nil
}

func (s *sealedStore) GetCluster(ctx context.Context, id string) (*model.Cluster, error) {
	c, err := s.Store.GetCluster(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.openCluster(c); err != nil {
		return nil, err
	}
	return c, nil
}

func (s *sealedStore) ListClusters(ctx context.Context) ([]*model.Cluster, error) {
	list, err := s.Store.ListClusters(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range list {
		if err := s.openCluster(c); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// UpdateClusterSettings gives fn the settings in clear and stores what it
// returns sealed.
func (s *sealedStore) UpdateClusterSettings(ctx context.Context, id string, fn func(map[string]any) (map[string]any, error)) (map[string]any, error) {
	var out map[string]any
	_, err := s.Store.UpdateClusterSettings(ctx, id, func(stored map[string]any) (map[string]any, error) {
		current, err := s.openTree(settingsAD(id), stored)
		if err != nil {
			return nil, fmt.Errorf("settings of cluster %q: %w", id, err)
		}
		next, err := fn(current)
		if err != nil {
			return nil, err
		}
		out = next
		return s.sealTree(settingsAD(id), next)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
