package api

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/model"
)

// StackInput is the body of POST /v1/stacks.
type StackInput struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	URLs        []string `json:"urls,omitempty"`
}

// StackRecord is a stack as the API shows it: pkger's stack record, with
// "stack_id" and an empty "config" next to Cairn's own fields so it reads
// as the records in pkger's documentation. Resources keep model's
// distinction between never-associated (key absent) and associations
// removed (an empty list).
type StackRecord struct {
	ID           string                `json:"id"`
	StackID      string                `json:"stack_id"`
	Name         string                `json:"name"`
	Description  string                `json:"description"`
	URLs         []string              `json:"urls"`
	CreatedAt    model.Time            `json:"createdAt"`
	UpdatedAt    model.Time            `json:"updatedAt"`
	Config       map[string]any        `json:"config"`
	Resources    []model.StackResource `json:"resources"`
	SnapshotHash string                `json:"snapshotHash,omitempty"`
	// LastExecutionID is the apply or destroy that last wrote the record.
	LastExecutionID string `json:"lastExecutionId,omitempty"`
}

func stackRecord(st *model.Stack) StackRecord {
	r := StackRecord{
		ID: st.ID, StackID: st.ID, Name: st.Name, Description: st.Description,
		URLs: st.URLs, CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt,
		Config: map[string]any{}, Resources: st.Resources, SnapshotHash: st.SnapshotHash,
		LastExecutionID: st.LastExecutionID,
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
	var in StackInput
	if err := decodeJSON(c, &in, false); err != nil {
		return err
	}
	var details []ErrorDetail
	if in.Name == "" {
		details = append(details, ErrorDetail{Document: "request", Path: "name", Message: "name is required"})
	}
	for i, u := range in.URLs {
		if err := s.fetch.Check(u); err != nil {
			details = append(details, ErrorDetail{Document: "request", Path: fmt.Sprintf("urls[%d]", i), Message: err.Error()})
		}
	}
	if len(details) > 0 {
		return invalid("invalid stack", details)
	}
	st := &model.Stack{Name: in.Name, Description: in.Description, URLs: in.URLs}
	if st.URLs == nil {
		st.URLs = []string{}
	}
	if err := s.store.CreateStack(c.Request().Context(), st); err != nil {
		return storeError(err, "stack")
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/stacks/"+st.ID)
	return c.JSON(http.StatusCreated, stackRecord(st))
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
	out := make([]StackRecord, 0, len(list))
	for _, st := range list {
		out = append(out, stackRecord(st))
	}
	return c.JSON(http.StatusOK, map[string]any{"stacks": out})
}

func (s *server) getStack(c echo.Context) error {
	id := c.Param("id")
	st, err := s.store.GetStack(c.Request().Context(), id)
	if err != nil {
		return storeError(err, fmt.Sprintf("stack %q", id))
	}
	return c.JSON(http.StatusOK, stackRecord(st))
}
