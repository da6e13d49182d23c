package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

func graphInfo(g *model.StoredGraph) model.GraphInfo {
	info := model.GraphInfo{Layer: g.Layer, OwnerID: g.OwnerID, Type: g.Type, Name: g.Name, ContentType: g.ContentType, UpdatedAt: g.UpdatedAt}
	if g.Graph != nil {
		info.Tasks = len(g.Graph.Tasks)
	}
	return info
}

// ownerExists answers 404 unless the owner is stored.
func (s *server) ownerExists(ctx context.Context, o owner, id string) error {
	if _, err := s.getOwnerRecord(ctx, o, id); err != nil {
		return storeError(err, fmt.Sprintf("%s %q", o.name, id))
	}
	return nil
}

func graphType(c echo.Context) (string, error) {
	t := c.Param("type")
	if !validID(t) {
		return "", badRequest("graph type %q must be 1-128 letters, digits, '-', '_' or '.'", t)
	}
	return t, nil
}

func (s *server) listGraphs(o owner) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		id := c.Param("id")
		if err := s.ownerExists(ctx, o, id); err != nil {
			return err
		}
		list, err := s.store.ListGraphs(ctx, o.layer, id)
		if err != nil {
			return storeError(err, "graphs")
		}
		clusters, err := s.store.ListClusters(ctx)
		if err != nil {
			return storeError(err, "clusters")
		}
		var used []string
		for _, cl := range clusters {
			if usesGraphOf(cl, o.layer, id) {
				used = append(used, cl.ID)
			}
		}
		out := make([]model.GraphInfo, 0, len(list))
		for _, g := range list {
			info := graphInfo(g)
			info.UsedBy = used
			out = append(out, info)
		}
		return c.JSON(http.StatusOK, model.GraphInfoList{Graphs: out})
	}
}

// getGraph answers the source as uploaded, with its content type, unless
// Accept asks for another encoding; then the parsed graph is re-encoded.
func (s *server) getGraph(o owner) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		id := c.Param("id")
		typ, err := graphType(c)
		if err != nil {
			return err
		}
		g, err := s.store.GetGraph(ctx, o.layer, id, typ)
		if err != nil {
			return storeError(err, fmt.Sprintf("graph %q of %s %q", typ, o.name, id))
		}
		if g.ContentType != "" && len(g.Source) > 0 && acceptsVerbatim(c, g.ContentType) {
			return c.Blob(http.StatusOK, g.ContentType, g.Source)
		}
		return s.writeGraph(c, g.Graph, "yaml")
	}
}

// writeGraph encodes a graph as YAML or JSON by ?format= or Accept.
func (s *server) writeGraph(c echo.Context, g *model.Graph, def string) error {
	format, err := negotiate(c, def)
	if err != nil {
		return err
	}
	data, err := graphs.MarshalGraph(g, format)
	if err != nil {
		return internalError(err)
	}
	return c.Blob(http.StatusOK, contentTypeOf(format), data)
}

// putGraph validates and stores an owner's graph of a type, replacing the
// one stored before. Nothing is stored unless the whole graph is valid.
func (s *server) putGraph(o owner) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		id := c.Param("id")
		typ, err := graphType(c)
		if err != nil {
			return err
		}
		if err := s.ownerExists(ctx, o, id); err != nil {
			return err
		}
		src, err := readDocument(c, false)
		if err != nil {
			return err
		}
		// Cluster and plugin graphs are layers over the release's: a task
		// may override a few fields of a task defined below it and refer to
		// tasks of other layers, so those are checked on the merged graph.
		opts := s.parseOptions()
		opts.Partial = o.layer != model.LayerRelease
		opts.Warn = warnHeader(c)
		g, err := graphs.ParseGraph(opts, *src)
		if err != nil {
			return invalidDocuments("graph", err, nil)
		}
		if g.Type != "" && g.Type != typ && g.Type != model.DefaultGraphType {
			return invalid("graph is invalid: 1 error", []model.ErrorDetail{{
				Document: requestSource, Path: "metadata.type",
				Message: fmt.Sprintf("the document says type %q but is uploaded as type %q", g.Type, typ),
			}})
		}
		g.Type = typ
		status := http.StatusOK
		if _, err := s.store.GetGraph(ctx, o.layer, id, typ); errors.Is(err, store.ErrNotFound) {
			status = http.StatusCreated
		} else if err != nil {
			return storeError(err, "graph")
		}
		sg := &model.StoredGraph{
			Layer: o.layer, OwnerID: id, Type: typ, Name: g.Name,
			Source: src.Data, ContentType: mediaTypeOf(src.Format), Graph: g,
		}
		if err := s.store.PutGraph(ctx, sg); err != nil {
			return storeError(err, fmt.Sprintf("graph %q of %s %q", typ, o.name, id))
		}
		if status == http.StatusCreated {
			c.Response().Header().Set(echo.HeaderLocation, fmt.Sprintf("/v1/%s/%s/graphs/%s", o.collection, id, typ))
		}
		return c.JSON(status, graphInfo(sg))
	}
}

func (s *server) deleteGraph(o owner) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		typ, err := graphType(c)
		if err != nil {
			return err
		}
		if err := s.store.DeleteGraph(c.Request().Context(), o.layer, id, typ); err != nil {
			return storeError(err, fmt.Sprintf("graph %q of %s %q", typ, o.name, id))
		}
		return c.NoContent(http.StatusNoContent)
	}
}

func (s *server) mergedGraph(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	typ, err := graphType(c)
	if err != nil {
		return err
	}
	only, err := layersParam(c.QueryParam("layers"))
	if err != nil {
		return err
	}
	cl, err := s.store.GetCluster(ctx, id)
	if err != nil {
		return storeError(err, fmt.Sprintf("cluster %q", id))
	}
	merged, found, err := s.graphs.Merge(ctx, cl, typ, only)
	if err != nil {
		return graphError(err, id)
	}
	if !found && only != nil {
		return notFound("no graph of type %q in the layers asked for (%s) of cluster %q", typ, c.QueryParam("layers"), id)
	}
	if !found {
		return notFound("no graph of type %q in cluster %q, its release or its plugins", typ, id)
	}
	return s.writeGraph(c, merged, "yaml")
}

// layersParam reads ?layers=release,cluster,plugins (plugin or plugins);
// "" is every layer (nil).
func layersParam(v string) ([]model.Layer, error) {
	if v == "" {
		return nil, nil
	}
	var out []model.Layer
	for _, name := range strings.Split(v, ",") {
		var l model.Layer
		switch strings.TrimSpace(name) {
		case "release":
			l = model.LayerRelease
		case "cluster":
			l = model.LayerCluster
		case "plugin", "plugins":
			l = model.LayerPlugin
		default:
			return nil, &Error{Status: http.StatusBadRequest, Message: "invalid layers",
				Details: []model.ErrorDetail{{Document: requestSource, Path: "layers", Message: fmt.Sprintf("layer %q is not release, cluster or plugins", name)}}}
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out, nil
}
