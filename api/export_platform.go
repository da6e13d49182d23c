package api

import (
	"fmt"
	"strings"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// listQuery is the providers' query of an export by kinds: where to list
// (the selector's spec, its references resolved from the request's own
// envRefs and secrets, never the server's), by name and by platform id.
// Errors never hold a secret's value.
func listQuery(sel *model.ExportSelector) (model.ListQuery, []model.ErrorDetail) {
	if sel == nil {
		return model.ListQuery{}, nil
	}
	q := model.ListQuery{Dir: sel.Dir, Names: sel.Names, Recursive: sel.Recursive, IDs: sel.IDs, Labels: sel.Labels}
	if len(sel.Spec) == 0 {
		return q, nil
	}
	env := func(k string) (string, bool) { v, ok := sel.EnvRefs[k]; return v, ok }
	secret := func(k string) (string, bool) { v, ok := sel.Secrets[k]; return v, ok }
	spec, missing, err := expr.Resolve(sel.Spec, expr.Context{Env: env, Secret: secret})
	var details []model.ErrorDetail
	if err != nil {
		details = append(details, model.ErrorDetail{Document: requestSource, Path: "selector.spec", Message: err.Error()})
	}
	for _, k := range missing.Env {
		details = append(details, model.ErrorDetail{Document: requestSource, Path: "selector.envRefs." + k, Message: "missing: the spec refers to it"})
	}
	for _, k := range missing.Secrets {
		details = append(details, model.ErrorDetail{Document: requestSource, Path: "selector.secrets." + k, Message: "missing: the spec refers to it"})
	}
	q.Spec = spec
	return q, details
}

// keepParameters puts into a listed object's spec the parameters of the
// request's spec as written: those the listing leaves out (an http kind's
// headers, an external kind's env and timeout) and those given as
// references (a url from an envRef), so the exported resource reaches the
// platform as the listing did, without holding a secret or a value of the
// environment the export ran in.
func keepParameters(cat *kinds.Catalogue, kind string, listed, asked model.Spec) {
	for k, v := range asked {
		if _, ok := listed[k]; ok && !expr.HasDynamic(v) {
			continue
		}
		if cat.AttrKind(kind, k) == kinds.Parameter {
			listed[k] = v
		}
	}
}

// missingIDs are the details of the ids asked for that no listed object
// of the kinds has (ids apply to every kind of the request).
func missingIDs(kinds []string, ids []string, found map[string]bool) []model.ErrorDetail {
	var out []model.ErrorDetail
	for i, id := range ids {
		if !found[id] {
			out = append(out, model.ErrorDetail{Document: requestSource, Path: fmt.Sprintf("selector.ids[%d]", i),
				Message: fmt.Sprintf("no %s object has id %q", strings.Join(kinds, " or "), id)})
		}
	}
	return out
}
