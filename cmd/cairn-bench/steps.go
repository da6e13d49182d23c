package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/cairn-io/cairn/model"
)

// allSteps is every step state of a finished execution: the execution's
// own list when it holds them all, else the pages of GET
// /v1/executions/{id}/steps (the execution's answer is bounded; at a
// hundred nodes fuel-library's graph has more steps than fit).
func allSteps(ctx context.Context, e *env, ex *model.Execution) ([]model.StepProgress, error) {
	if ex.Progress != nil && ex.Progress.Total <= len(ex.Steps) {
		return ex.Steps, nil
	}
	var out []model.StepProgress
	for {
		u := fmt.Sprintf("%s/v1/executions/%s/steps?offset=%d&limit=5000", e.apiURL, url.PathEscape(ex.ID), len(out))
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		var page model.ExecutionSteps
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("steps of %s: %s: %w", ex.ID, resp.Status, err)
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("steps of %s: %s", ex.ID, resp.Status)
		}
		out = append(out, page.Steps...)
		if len(page.Steps) == 0 || len(out) >= page.Entries {
			return out, nil
		}
	}
}
