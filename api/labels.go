package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
)

func (s *server) registerLabels(e *echo.Echo) {
	for _, l := range []struct {
		collection string
		kind       model.ScopeKind
	}{{"stacks", model.ScopeStack}, {"clusters", model.ScopeCluster}, {"releases", model.ScopeRelease}} {
		e.Add(http.MethodPut, "/v1/"+l.collection+"/:id/labels", s.putLabels(l.kind))
	}
}

// putLabels replaces a resource's labels (an empty object removes them).
func (s *server) putLabels(kind model.ScopeKind) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		var in model.LabelsBody
		if err := decodeJSON(c, &in, false); err != nil {
			return err
		}
		if err := labelsProblem(in.Labels); err != nil {
			return err
		}
		ctx := c.Request().Context()
		if err := s.exists(ctx, kind, id); err != nil {
			return err
		}
		if err := s.store.SetLabels(ctx, kind, id, in.Labels); err != nil {
			return storeError(err, fmt.Sprintf("labels of %s %q", kind, id))
		}
		if in.Labels == nil {
			in.Labels = map[string]string{}
		}
		return c.JSON(http.StatusOK, in)
	}
}

// exists answers 404 for a resource that is not there.
func (s *server) exists(ctx context.Context, kind model.ScopeKind, id string) error {
	var err error
	switch kind {
	case model.ScopeStack:
		_, err = s.store.GetStack(ctx, id)
	case model.ScopeCluster:
		_, err = s.store.GetCluster(ctx, id)
	default:
		_, err = s.store.GetRelease(ctx, id)
	}
	if err != nil {
		return storeError(err, fmt.Sprintf("%s %q", kind, id))
	}
	return nil
}

// labelsProblem is the 422 of labels that are not valid.
func labelsProblem(labels map[string]string) error {
	if err := model.CheckLabels(labels); err != nil {
		return invalid("invalid labels", []model.ErrorDetail{{Document: requestSource, Path: "labels", Message: err.Error()}})
	}
	return nil
}

// ownerLabels is the labels field of a release or cluster (nil for
// plugins, which have none).
func ownerLabels(v any) (model.ScopeKind, *map[string]string) {
	switch r := v.(type) {
	case *model.Release:
		return model.ScopeRelease, &r.Labels
	case *model.Cluster:
		return model.ScopeCluster, &r.Labels
	}
	return "", nil
}

// saveOwnerLabels keeps a created or updated release's or cluster's
// labels: given ones replace the stored, none keeps them (and shows them).
func (s *server) saveOwnerLabels(ctx context.Context, v any) error {
	kind, labels := ownerLabels(v)
	if labels == nil {
		return nil
	}
	id := ownerID(v)
	if *labels == nil {
		return s.fillOwnerLabels(ctx, v)
	}
	if err := s.store.SetLabels(ctx, kind, id, *labels); err != nil {
		return storeError(err, fmt.Sprintf("labels of %s %q", kind, id))
	}
	return nil
}

// fillOwnerLabels reads a release's or cluster's labels into it.
func (s *server) fillOwnerLabels(ctx context.Context, v any) error {
	kind, labels := ownerLabels(v)
	if labels == nil {
		return nil
	}
	l, err := s.store.Labels(ctx, kind, ownerID(v))
	if err != nil {
		return storeError(err, fmt.Sprintf("labels of %s", kind))
	}
	*labels = l
	return nil
}

// labelledVisible fills each listed item's labels and keeps those the
// request may view.
func labelledVisible[T any](s *server, c echo.Context, kind model.ScopeKind, list []T, field func(T) (string, *map[string]string)) ([]T, error) {
	all, err := s.store.AllLabels(c.Request().Context(), kind)
	if err != nil {
		return nil, err
	}
	visible, err := s.visibleFilter(c, kind)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(list))
	for _, v := range list {
		id, labels := field(v)
		if !visible(id) {
			continue
		}
		*labels = all[id]
		out = append(out, v)
	}
	return out, nil
}

// scope is the scope kind of an owner's records ("" for plugins, which
// scopes do not name).
func (o owner) scope() model.ScopeKind {
	switch o.layer {
	case model.LayerRelease:
		return model.ScopeRelease
	case model.LayerCluster:
		return model.ScopeCluster
	}
	return ""
}

// mayCreateStack lets a deployer create a stack its scope would hold: an
// unscoped deployer any, one with a selector a stack whose labels match
// it. Ids are made by the server, so a grant naming stacks by id does not
// let its holder create one.
func (s *server) mayCreateStack(c echo.Context, labels map[string]string) error {
	id := identityOf(c)
	if id == nil {
		return nil
	}
	for _, g := range id.grants {
		if !g.Role.Implies(model.RoleDeployer) {
			continue
		}
		if g.Unscoped() {
			return nil
		}
		if g.Selector != "" && len(labels) > 0 && g.Holds(model.RoleDeployer, model.ScopeStack, "", labels) {
			return nil
		}
	}
	return forbidden(id, model.RoleDeployer, model.ScopeStack, "(new) with labels "+fmt.Sprint(labels))
}
