package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// owner is a kind of record that owns graphs: release, cluster or plugin.
type owner struct {
	collection string // URL segment: "releases"
	name       string // "release"
	layer      model.Layer
}

var owners = []owner{
	{"releases", "release", model.LayerRelease},
	{"plugins", "plugin", model.LayerPlugin},
	{"clusters", "cluster", model.LayerCluster},
}

func (s *server) createOwner(o owner) echo.HandlerFunc {
	return func(c echo.Context) error {
		v, err := s.readOwner(c, o, "")
		if err != nil {
			return err
		}
		ctx := c.Request().Context()
		id := ownerID(v)
		if id != "" {
			if _, err := s.getOwnerRecord(ctx, o, id); err == nil {
				return conflict("%s %q already exists", o.name, id)
			} else if !errors.Is(err, store.ErrNotFound) {
				return storeError(err, o.name)
			}
		}
		if _, labels := ownerLabels(v); labels != nil {
			if err := labelsProblem(*labels); err != nil {
				return err
			}
		}
		if err := s.putOwner(ctx, o, v); err != nil {
			return err
		}
		if err := s.saveOwnerLabels(ctx, v); err != nil {
			return err
		}
		c.Response().Header().Set(echo.HeaderLocation, "/v1/"+o.collection+"/"+ownerID(v))
		return c.JSON(http.StatusCreated, v)
	}
}

func (s *server) updateOwner(o owner) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		ctx := c.Request().Context()
		if _, err := s.getOwnerRecord(ctx, o, id); err != nil {
			return storeError(err, fmt.Sprintf("%s %q", o.name, id))
		}
		v, err := s.readOwner(c, o, id)
		if err != nil {
			return err
		}
		if _, labels := ownerLabels(v); labels != nil {
			if err := labelsProblem(*labels); err != nil {
				return err
			}
		}
		if err := s.putOwner(ctx, o, v); err != nil {
			return err
		}
		if err := s.saveOwnerLabels(ctx, v); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, v)
	}
}

func (s *server) getOwner(o owner) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		v, err := s.getOwnerRecord(c.Request().Context(), o, id)
		if err != nil {
			return storeError(err, fmt.Sprintf("%s %q", o.name, id))
		}
		if err := s.fillOwnerLabels(c.Request().Context(), v); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, v)
	}
}

func (s *server) listOwners(o owner) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		var (
			answer any
			err    error
		)
		switch o.layer {
		case model.LayerRelease:
			var l model.ReleaseList
			l.Releases, err = s.store.ListReleases(ctx)
			if err == nil {
				l.Releases, err = labelledVisible(s, c, model.ScopeRelease, l.Releases, func(r *model.Release) (string, *map[string]string) { return r.ID, &r.Labels })
			}
			answer = l
		case model.LayerPlugin:
			var l model.PluginList
			l.Plugins, err = s.store.ListPlugins(ctx)
			answer = l
		default:
			var l model.ClusterList
			l.Clusters, err = s.store.ListClusters(ctx)
			if err == nil {
				l.Clusters, err = labelledVisible(s, c, model.ScopeCluster, l.Clusters, func(r *model.Cluster) (string, *map[string]string) { return r.ID, &r.Labels })
			}
			answer = l
		}
		if err != nil {
			return storeError(err, o.collection)
		}
		return c.JSON(http.StatusOK, answer)
	}
}

func (s *server) deleteOwner(o owner) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		ctx := c.Request().Context()
		var err error
		switch o.layer {
		case model.LayerRelease:
			err = s.store.DeleteRelease(ctx, id)
		case model.LayerPlugin:
			err = s.store.DeletePlugin(ctx, id)
		default:
			err = s.store.DeleteCluster(ctx, id)
		}
		switch {
		case errors.Is(err, store.ErrConflict):
			// The store says who still uses it; that is the useful message.
			return &Error{Status: http.StatusConflict, Message: err.Error(), Cause: err}
		case err != nil:
			return storeError(err, fmt.Sprintf("%s %q", o.name, id))
		}
		if kind := o.scope(); kind != "" {
			if err := s.store.SetLabels(ctx, kind, id, nil); err != nil {
				return storeError(err, fmt.Sprintf("labels of %s %q", o.name, id))
			}
		}
		return c.NoContent(http.StatusNoContent)
	}
}

func (s *server) getOwnerRecord(ctx context.Context, o owner, id string) (any, error) {
	switch o.layer {
	case model.LayerRelease:
		return s.store.GetRelease(ctx, id)
	case model.LayerPlugin:
		return s.store.GetPlugin(ctx, id)
	default:
		return s.store.GetCluster(ctx, id)
	}
}

func ownerID(v any) string {
	switch r := v.(type) {
	case *model.Release:
		return r.ID
	case *model.Plugin:
		return r.ID
	case *model.Cluster:
		return r.ID
	}
	return ""
}

// readOwner decodes and validates a create (pathID "") or update body into
// the model record, reporting every problem at once.
func (s *server) readOwner(c echo.Context, o owner, pathID string) (any, error) {
	var details []model.ErrorDetail
	problem := func(path, format string, args ...any) {
		details = append(details, model.ErrorDetail{Document: "request", Path: path, Message: fmt.Sprintf(format, args...)})
	}
	checkID := func(id string) string {
		switch {
		case pathID != "" && id != "" && id != pathID:
			problem("id", "id %q differs from the id in the URL %q", id, pathID)
		case pathID != "":
			return pathID
		case id != "" && !validID(id):
			problem("id", "id %q must be 1-128 letters, digits, '-', '_' or '.'", id)
		}
		return id
	}
	requireName := func(name string) {
		if name == "" {
			problem("name", "name is required")
		}
	}

	var out any
	switch o.layer {
	case model.LayerRelease:
		var in model.ReleaseInput
		if err := decodeJSON(c, &in, false); err != nil {
			return nil, err
		}
		requireName(in.Name)
		out = &model.Release{ID: checkID(in.ID), Name: in.Name, Version: in.Version, Description: in.Description, Labels: in.Labels}
	case model.LayerPlugin:
		var in model.PluginInput
		if err := decodeJSON(c, &in, false); err != nil {
			return nil, err
		}
		requireName(in.Name)
		out = &model.Plugin{ID: checkID(in.ID), Name: in.Name, Version: in.Version, Description: in.Description}
	default:
		var in model.ClusterInput
		if err := decodeJSON(c, &in, false); err != nil {
			return nil, err
		}
		requireName(in.Name)
		cl := &model.Cluster{ID: checkID(in.ID), Name: in.Name, ReleaseID: in.ReleaseID, PluginIDs: in.PluginIDs, Nodes: in.Nodes, Settings: in.Settings, Labels: in.Labels}
		details = append(details, checkSettings(in.Settings, "settings")...)
		if cl.Nodes == nil {
			cl.Nodes = []model.Node{}
		}
		details = append(details, s.checkCluster(c.Request().Context(), cl)...)
		out = cl
	}
	if len(details) > 0 {
		return nil, invalid(fmt.Sprintf("invalid %s", o.name), details)
	}
	return out, nil
}

// checkCluster validates references and nodes: the release and plugins
// must exist, a plugin is attached once, node ids and names are unique and
// URL-safe, and a node's mode is local or agent.
func (s *server) checkCluster(ctx context.Context, cl *model.Cluster) []model.ErrorDetail {
	var details []model.ErrorDetail
	problem := func(path, format string, args ...any) {
		details = append(details, model.ErrorDetail{Document: "request", Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if cl.ReleaseID != "" {
		if _, err := s.store.GetRelease(ctx, cl.ReleaseID); errors.Is(err, store.ErrNotFound) {
			problem("releaseId", "release %q does not exist", cl.ReleaseID)
		} else if err != nil {
			problem("releaseId", "release %q could not be read", cl.ReleaseID)
		}
	}
	for i, p := range cl.PluginIDs {
		path := fmt.Sprintf("pluginIds[%d]", i)
		if slices.Index(cl.PluginIDs, p) < i {
			problem(path, "plugin %q is attached twice", p)
			continue
		}
		if _, err := s.store.GetPlugin(ctx, p); errors.Is(err, store.ErrNotFound) {
			problem(path, "plugin %q does not exist", p)
		} else if err != nil {
			problem(path, "plugin %q could not be read", p)
		}
	}
	ids := map[string]int{}
	names := map[string]int{}
	for i := range cl.Nodes {
		n := &cl.Nodes[i]
		path := fmt.Sprintf("nodes[%d]", i)
		if n.ID == "" {
			n.ID = n.Name
		}
		if n.Name == "" {
			n.Name = n.ID
		}
		switch {
		case n.ID == "":
			problem(path, "a node needs an id or a name")
		case !validID(n.ID):
			problem(path+".id", "node id %q must be 1-128 letters, digits, '-', '_' or '.'", n.ID)
		}
		if j, dup := ids[n.ID]; dup && n.ID != "" {
			problem(path+".id", "node id %q is also used by nodes[%d]", n.ID, j)
		} else {
			ids[n.ID] = i
		}
		if j, dup := names[n.Name]; dup && n.Name != "" {
			problem(path+".name", "node name %q is also used by nodes[%d]", n.Name, j)
		} else {
			names[n.Name] = i
		}
		if n.Name == model.ControlPlane || n.ID == model.ControlPlane {
			problem(path, "%q names the control plane and cannot be a node", model.ControlPlane)
		}
		switch n.Mode {
		case "", model.NodeLocal, model.NodeAgent:
		default:
			problem(path+".mode", "mode %q is neither %q nor %q", n.Mode, model.NodeLocal, model.NodeAgent)
		}
		if n.Roles == nil {
			n.Roles = []string{}
		}
	}
	return details
}

func (s *server) putOwner(ctx context.Context, o owner, v any) error {
	var err error
	switch r := v.(type) {
	case *model.Release:
		err = s.store.PutRelease(ctx, r)
	case *model.Plugin:
		err = s.store.PutPlugin(ctx, r)
	case *model.Cluster:
		err = s.store.PutCluster(ctx, r)
	}
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrConflict):
		// A reference vanished or a duplicate slipped past the checks
		// between read and write.
		return &Error{Status: http.StatusConflict, Message: err.Error(), Cause: err}
	case err != nil:
		return storeError(err, o.name)
	}
	return nil
}
