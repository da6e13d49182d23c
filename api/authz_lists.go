package api

import (
	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// visibleExecutions answers which listed executions the request may view:
// a graph execution by its cluster, any other by its stack. The list's
// pages are filtered after paging, so a page may hold fewer than asked.
func (s *server) visibleExecutions(c echo.Context) (func(*starter.Execution) bool, error) {
	stacks, err := s.visibleFilter(c, model.ScopeStack)
	if err != nil {
		return nil, err
	}
	clusters, err := s.visibleFilter(c, model.ScopeCluster)
	if err != nil {
		return nil, err
	}
	return func(e *starter.Execution) bool {
		if e.Kind == model.ExecGraph || e.StackID == "" {
			return e.ClusterID != "" && clusters(e.ClusterID)
		}
		return stacks(e.StackID)
	}, nil
}

// visibleGraphs keeps the graphs of releases and clusters the request may
// view, and every plugin's (plugins are shared and readable by anyone
// signed in).
func (s *server) visibleGraphs(c echo.Context, list []model.GraphMeta) ([]model.GraphMeta, error) {
	releases, err := s.visibleFilter(c, model.ScopeRelease)
	if err != nil {
		return nil, err
	}
	clusters, err := s.visibleFilter(c, model.ScopeCluster)
	if err != nil {
		return nil, err
	}
	out := list[:0]
	for _, g := range list {
		switch g.Layer {
		case model.LayerRelease:
			if !releases(g.OwnerID) {
				continue
			}
		case model.LayerCluster:
			if !clusters(g.OwnerID) {
				continue
			}
		}
		out = append(out, g)
	}
	return out, nil
}

// mayExport checks an export's body: a stack's resources need viewer on
// it; every stack's (all, labels, resources) viewer everywhere; existing
// objects by kinds run the kinds' list programs and GETs on the server,
// so they need graph-author everywhere.
func (s *server) mayExport(c echo.Context, req model.ExportRequest) error {
	id := identityOf(c)
	if id == nil {
		return nil
	}
	switch {
	case len(req.Kinds) > 0:
		return s.require(c, id, model.RoleGraphAuthor, "", "")
	case req.StackID != "" && !req.All && len(req.Labels) == 0 && len(req.Resources) == 0:
		setTarget(c, model.ScopeStack, req.StackID)
		return s.require(c, id, model.RoleViewer, model.ScopeStack, req.StackID)
	default:
		return s.require(c, id, model.RoleViewer, "", "")
	}
}
