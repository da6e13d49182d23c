package api

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
)

// listAllGraphs answers GET /v1/graphs[?layer=&owner=&type=]: every stored
// graph with its owner, type and name, and the clusters that merge it
// ({"graphs": [model.GraphMeta]}). It reads the graph table once and the
// clusters once; no graph is decoded.
func (s *server) listAllGraphs(c echo.Context) error {
	f := model.GraphFilter{
		Layer:   model.Layer(c.QueryParam("layer")),
		OwnerID: c.QueryParam("owner"),
		Type:    c.QueryParam("type"),
	}
	var details []model.ErrorDetail
	switch f.Layer {
	case "", model.LayerRelease, model.LayerCluster, model.LayerPlugin:
	default:
		details = append(details, model.ErrorDetail{Document: requestSource, Path: "layer",
			Message: fmt.Sprintf("layer must be release, cluster or plugin, got %q", f.Layer)})
	}
	if f.Type != "" && !validID(f.Type) {
		details = append(details, model.ErrorDetail{Document: requestSource, Path: "type",
			Message: fmt.Sprintf("graph type %q must be 1-128 letters, digits, '-', '_' or '.'", f.Type)})
	}
	if len(details) > 0 {
		return &Error{Status: http.StatusBadRequest, Message: "invalid graph filter", Details: details}
	}
	ctx := c.Request().Context()
	list, err := s.store.ListAllGraphs(ctx, f)
	if err != nil {
		return storeError(err, "graphs")
	}
	clusters, err := s.store.ListClusters(ctx)
	if err != nil {
		return storeError(err, "clusters")
	}
	if list, err = s.visibleGraphs(c, list); err != nil {
		return err
	}
	for i := range list {
		g := &list[i]
		g.UsedBy = []string{}
		for _, cl := range clusters {
			if usesGraphOf(cl, g.Layer, g.OwnerID) {
				g.UsedBy = append(g.UsedBy, cl.ID)
			}
		}
	}
	return c.JSON(http.StatusOK, model.GraphMetaList{Graphs: list})
}

// usesGraphOf reports whether cl's executions merge the graphs of owner id
// in layer.
func usesGraphOf(cl *model.Cluster, layer model.Layer, id string) bool {
	switch layer {
	case model.LayerRelease:
		return cl.ReleaseID == id
	case model.LayerCluster:
		return cl.ID == id
	case model.LayerPlugin:
		return slices.Contains(cl.PluginIDs, id)
	}
	return false
}
