package api

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
)

func stackRecord(st *model.Stack) model.StackRecord {
	r := model.StackRecord{
		ID: st.ID, StackID: st.ID, Name: st.Name, Description: st.Description,
		URLs: st.URLs, CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt,
		Config: map[string]any{}, Resources: st.Resources, SnapshotHash: st.SnapshotHash,
		LastExecutionID: st.LastExecutionID, ClusterID: st.ClusterID,
	}
	if r.URLs == nil {
		r.URLs = []string{}
	}
	if r.Resources == nil {
		r.Resources = []model.StackResource{}
	}
	return r
}

func (s *server) createStack(c echo.Context) error {
	var in model.StackInput
	if err := decodeJSON(c, &in, false); err != nil {
		return err
	}
	var details []model.ErrorDetail
	if in.Name == "" {
		details = append(details, model.ErrorDetail{Document: "request", Path: "name", Message: "name is required"})
	}
	for i, u := range in.URLs {
		if err := s.fetch.Check(u); err != nil {
			details = append(details, model.ErrorDetail{Document: "request", Path: fmt.Sprintf("urls[%d]", i), Message: err.Error()})
		}
	}
	if err := model.CheckLabels(in.Labels); err != nil {
		details = append(details, model.ErrorDetail{Document: "request", Path: "labels", Message: err.Error()})
	}
	if len(details) > 0 {
		return invalid("invalid stack", details)
	}
	if err := s.mayCreateStack(c, in.Labels); err != nil {
		return err
	}
	st := &model.Stack{Name: in.Name, Description: in.Description, URLs: in.URLs}
	if st.URLs == nil {
		st.URLs = []string{}
	}
	if err := s.store.CreateStack(c.Request().Context(), st); err != nil {
		return storeError(err, "stack")
	}
	if err := s.store.SetLabels(c.Request().Context(), model.ScopeStack, st.ID, in.Labels); err != nil {
		return storeError(err, "stack labels")
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/stacks/"+st.ID)
	r := stackRecord(st)
	r.Labels = in.Labels
	return c.JSON(http.StatusCreated, r)
}

// listStacks lists every stack, or with ?name= those of that name.
func (s *server) listStacks(c echo.Context) error {
	ctx := c.Request().Context()
	var (
		list []*model.Stack
		err  error
	)
	if c.QueryParams().Has("name") {
		list, err = s.store.StacksNamed(ctx, c.QueryParam("name"))
	} else {
		list, err = s.store.ListStacks(ctx)
	}
	if err != nil {
		return storeError(err, "stacks")
	}
	labels, err := s.store.AllLabels(ctx, model.ScopeStack)
	if err != nil {
		return storeError(err, "stack labels")
	}
	visible, err := s.visibleFilter(c, model.ScopeStack)
	if err != nil {
		return err
	}
	out := make([]model.StackRecord, 0, len(list))
	for _, st := range list {
		if !visible(st.ID) {
			continue
		}
		r := stackRecord(st)
		r.Labels = labels[st.ID]
		out = append(out, r)
	}
	return c.JSON(http.StatusOK, model.StackList{Stacks: out})
}

func (s *server) getStack(c echo.Context) error {
	id := c.Param("id")
	st, err := s.store.GetStack(c.Request().Context(), id)
	if err != nil {
		return storeError(err, fmt.Sprintf("stack %q", id))
	}
	r := stackRecord(st)
	if r.Labels, err = s.store.Labels(c.Request().Context(), model.ScopeStack, id); err != nil {
		return storeError(err, "stack labels")
	}
	return c.JSON(http.StatusOK, r)
}
