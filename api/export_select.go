package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// labelKind is the kind pkger's label mappings associate resources with.
const labelKind = "label"

// stackResource is a resource a stack records, with the stack's id.
type stackResource struct {
	res   *model.Resource
	stack string
}

// exportSelected exports stacks' resources as pkger does: one stack
// (stackId) or every stack, narrowed to the resources carrying one of the
// labels and the resources named in resources (kind/name), or all of them.
// Selected resources bring the labels they are associated with; a
// dependsOn on a resource left out is dropped, so the package stands alone.
func (s *server) exportSelected(ctx context.Context, req model.ExportRequest) ([]kinds.Kind, []*model.Resource, error) {
	stacks, err := s.exportScope(ctx, req.StackID)
	if err != nil {
		return nil, nil, err
	}
	var (
		defs    []kinds.Kind
		defSeen = map[string]bool{}
		all     []stackResource
		byKey   = map[string][]stackResource{}
	)
	for _, st := range stacks {
		d, rs, err := s.stackResources(ctx, st)
		if err != nil {
			return nil, nil, err
		}
		for _, k := range d {
			if key := strings.ToLower(k.Name); !defSeen[key] {
				defSeen[key] = true
				defs = append(defs, k)
			}
		}
		for _, r := range rs {
			sr := stackResource{res: r, stack: st.ID}
			all = append(all, sr)
			byKey[r.Ref().Key()] = append(byKey[r.Ref().Key()], sr)
		}
	}
	selected, err := selectResources(req, all, byKey)
	if err != nil {
		return nil, nil, err
	}
	return defs, selected, nil
}

// exportScope is the stacks an export reads: the one named, or all.
func (s *server) exportScope(ctx context.Context, stackID string) ([]*model.Stack, error) {
	if stackID != "" {
		st, err := s.store.GetStack(ctx, stackID)
		if err != nil {
			return nil, storeError(err, fmt.Sprintf("stack %q", stackID))
		}
		return []*model.Stack{st}, nil
	}
	stacks, err := s.store.ListStacks(ctx)
	if err != nil {
		return nil, storeError(err, "stacks")
	}
	return stacks, nil
}

// selectResources picks the resources req asks for out of all, adds the
// labels they are associated with and drops dependsOn refs that leave the
// selection. A resource recorded by two stacks of the scope is an error
// naming both.
func selectResources(req model.ExportRequest, all []stackResource, byKey map[string][]stackResource) ([]*model.Resource, error) {
	pick := map[string]bool{}
	var details []model.ErrorDetail
	everything := req.All || req.StackID != "" && len(req.Labels) == 0 && len(req.Resources) == 0
	for _, sr := range all {
		if everything || carriesLabel(sr.res, req.Labels, byKey) {
			pick[sr.res.Ref().Key()] = true
		}
	}
	for i, id := range req.Resources {
		ref, ok := model.ParseRef(id)
		if !ok {
			details = append(details, model.ErrorDetail{Document: requestSource, Path: fmt.Sprintf("resources[%d]", i), Message: fmt.Sprintf("%q is not kind/name", id)})
			continue
		}
		if len(byKey[ref.Key()]) == 0 {
			details = append(details, model.ErrorDetail{Document: requestSource, Path: fmt.Sprintf("resources[%d]", i), Message: fmt.Sprintf("no stack of the export records %s", ref)})
			continue
		}
		pick[ref.Key()] = true
	}
	if len(details) > 0 {
		return nil, &Error{Status: http.StatusNotFound, Message: "cannot export", Details: details}
	}
	// Selected resources bring the labels they are associated with.
	for _, sr := range all {
		if !pick[sr.res.Ref().Key()] {
			continue
		}
		for _, a := range sr.res.Associations {
			if len(byKey[a.Key()]) > 0 {
				pick[a.Key()] = true
			}
		}
	}
	var out []*model.Resource
	emitted := map[string]bool{}
	for _, sr := range all {
		key := sr.res.Ref().Key()
		if !pick[key] || emitted[key] {
			continue
		}
		emitted[key] = true
		if owners := byKey[key]; len(owners) > 1 {
			ids := make([]string, len(owners))
			for i, o := range owners {
				ids[i] = o.stack
			}
			details = append(details, model.ErrorDetail{Document: requestSource, Path: "stackId",
				Message: fmt.Sprintf("%s is recorded by stacks %s: export one of them with stackId", sr.res.Ref(), strings.Join(ids, ", "))})
			continue
		}
		cp := *sr.res
		cp.DependsOn = slices.DeleteFunc(slices.Clone(cp.DependsOn), func(r model.Ref) bool { return !pick[r.Key()] })
		out = append(out, &cp)
	}
	if len(details) > 0 {
		return nil, &Error{Status: http.StatusConflict, Message: "cannot export", Details: details}
	}
	if out == nil {
		out = []*model.Resource{}
	}
	return out, nil
}

// carriesLabel reports whether r is associated with a label named in
// labels (by its metadata.name or its spec's name, as pkger's labelName),
// or is such a label itself.
func carriesLabel(r *model.Resource, labels []string, byKey map[string][]stackResource) bool {
	if len(labels) == 0 {
		return false
	}
	named := func(ref model.Ref, spec model.Spec) bool {
		if !strings.EqualFold(ref.Kind, labelKind) {
			return false
		}
		specName, _ := spec["name"].(string)
		return slices.Contains(labels, ref.Name) || specName != "" && slices.Contains(labels, specName)
	}
	if named(r.Ref(), r.Spec) {
		return true
	}
	for _, a := range r.Associations {
		var spec model.Spec
		if owners := byKey[a.Key()]; len(owners) > 0 {
			spec = owners[0].res.Spec
		}
		if named(a, spec) {
			return true
		}
	}
	return false
}
