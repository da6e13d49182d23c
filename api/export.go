package api

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/internal/suggest"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
)

// export answers a package of existing resources, YAML or JSON by Accept or
// ?format=.
func (s *server) export(c echo.Context) error {
	var req model.ExportRequest
	if err := decodeJSON(c, &req, false); err != nil {
		return err
	}
	if err := s.mayExport(c, req); err != nil {
		return err
	}
	format, err := negotiate(c, "yaml")
	if err != nil {
		return err
	}
	var (
		defs      []kinds.Kind
		resources []*model.Resource
	)
	fromStacks := req.StackID != "" || req.All || len(req.Labels) > 0 || len(req.Resources) > 0
	badRequest := func(path, msg string) error {
		return &Error{Status: http.StatusBadRequest, Message: "invalid export request", Details: []model.ErrorDetail{{
			Document: requestSource, Path: path, Message: msg}}}
	}
	switch {
	case fromStacks && (len(req.Kinds) > 0 || req.Selector != nil):
		return badRequest("stackId", "give stackId, labels, resources or all, or kinds with a selector, not both")
	case req.All && req.StackID != "":
		return badRequest("all", "all exports every stack: give all or stackId, not both")
	case fromStacks:
		defs, resources, err = s.exportSelected(c.Request().Context(), req)
	case len(req.Kinds) > 0:
		resources, err = s.exportKinds(c.Request().Context(), req)
	default:
		return badRequest("stackId", "give stackId, labels, resources or all, or kinds with a selector")
	}
	if err != nil {
		return err
	}
	data, err := encodePackage(defs, resources, format)
	if err != nil {
		return internalError(fmt.Errorf("encode export: %w", err))
	}
	return c.Blob(http.StatusOK, contentTypeOf(format), data)
}

// stackResources are the resources a stack records, from the package it
// last applied, each refreshed from the object's current state where its
// kind can list it (files and directories on the control plane); the rest
// keep the spec they were applied with. The kinds are the package's own.
func (s *server) stackResources(ctx context.Context, st *model.Stack) ([]kinds.Kind, []*model.Resource, error) {
	if st.SnapshotHash == "" || len(st.Resources) == 0 {
		return nil, []*model.Resource{}, nil
	}
	snap, err := s.store.GetSnapshot(ctx, st.SnapshotHash)
	if err != nil {
		return nil, nil, storeError(err, "package snapshot "+st.SnapshotHash)
	}
	sources, err := prepare.PackageSources(ctx, s.store, snap.Content)
	if err != nil {
		return nil, nil, internalError(fmt.Errorf("package snapshot %s: %w", prepare.ShortHash(st.SnapshotHash), err))
	}
	// The sources passed the limits when they came, each as a request of
	// its own: read together they may add up to more than one request.
	opts := s.parseOptions()
	opts.MaxTotalBytes = max(int64(len(sources))*s.cfg.BodyLimit, opts.MaxBytes)
	docs, err := graphs.Parse(opts, sources...)
	if err != nil {
		return nil, nil, invalidDocuments("the last applied package of stack "+st.ID, err, nil)
	}
	recorded := map[string]bool{}
	for _, r := range st.Resources {
		recorded[strings.ToLower(r.Kind)+"/"+r.PkgName] = true
	}
	out := []*model.Resource{}
	for _, r := range docs.Package.Resources {
		if !recorded[r.Ref().Key()] {
			continue
		}
		cp := *r
		if spec, ok := s.currentSpec(ctx, r); ok {
			cp.Spec = spec
		}
		out = append(out, &cp)
	}
	return docs.Kinds, out, nil
}

// currentSpec lists the object a control-plane resource names by path and
// returns the spec that reproduces it as it is now.
func (s *server) currentSpec(ctx context.Context, r *model.Resource) (model.Spec, bool) {
	if s.registry == nil || r.Target != nil && (len(r.Target.Roles) > 0 || len(r.Target.Nodes) > 0) {
		return nil, false
	}
	p, ok := r.Spec["path"].(string)
	if !ok || !path.IsAbs(p) {
		return nil, false
	}
	dir, name := path.Split(path.Clean(p))
	items, err := s.registry.List(ctx, r.Kind, model.ListQuery{Dir: dir, Names: []string{name}})
	if err != nil || len(items) != 1 {
		return nil, false
	}
	spec := items[0].Spec
	// Keep the managed properties the listing does not report (ensure),
	// but not parameters (a template's vars) nor another way of giving
	// the content the listing already gives.
	for k, v := range r.Spec {
		if _, listed := spec[k]; listed || contentField[k] {
			continue
		}
		if ak := s.catalogue.AttrKind(r.Kind, k); ak == kinds.Property || ak == kinds.Namevar {
			spec[k] = v
		}
	}
	return spec, true
}

// contentField are the alternative ways a spec gives a file's bytes.
var contentField = map[string]bool{"content": true, "contentBase64": true, "template": true}

// exportKinds lists the objects of each kind the selector picks on the
// control plane or on the platform its spec names (an http API, an
// external kind's program), by name or by platform id. Exported objects
// carry their platform ids in their specs, so that a stack applying them
// adopts the objects instead of creating others.
func (s *server) exportKinds(ctx context.Context, req model.ExportRequest) ([]*model.Resource, error) {
	if s.registry == nil {
		return nil, newError(http.StatusServiceUnavailable, "export by kinds is unavailable: the server has no providers")
	}
	q, details := listQuery(req.Selector)
	if len(details) > 0 {
		return nil, invalid("cannot export", details)
	}
	var asked model.Spec
	if req.Selector != nil {
		asked = req.Selector.Spec
	}
	var out []*model.Resource
	found := map[string]bool{} // platform ids listed, of any kind
	var listedKinds []string
	for i, kind := range req.Kinds {
		at := fmt.Sprintf("kinds[%d]", i)
		k, ok := s.catalogue.Lookup(kind)
		if !ok {
			msg := fmt.Sprintf("unknown kind %q", kind) + suggest.Mean(s.catalogue.Suggest(kind))
			details = append(details, model.ErrorDetail{Document: requestSource, Path: at, Message: msg})
			continue
		}
		items, err := s.registry.List(ctx, k.Name, q)
		if err != nil {
			details = append(details, model.ErrorDetail{Document: requestSource, Path: at, Message: err.Error()})
			continue
		}
		listedKinds = append(listedKinds, k.Name)
		names := map[string]int{}
		for _, it := range items {
			found[it.ID] = true
			keepParameters(s.catalogue, k.Name, it.Spec, asked)
			out = append(out, &model.Resource{APIVersion: model.APIVersion, Kind: k.Name, Name: exportName(it.Name, names), Spec: it.Spec})
		}
	}
	if len(details) == 0 {
		details = missingIDs(listedKinds, q.IDs, found)
	}
	if len(details) > 0 {
		return nil, invalid("cannot export", details)
	}
	if errs := graphs.ValidatePackage(s.catalogue, &model.Package{Resources: out}); len(errs) > 0 {
		details, _ := documentDetails(errs)
		return nil, invalid("the exported objects do not make a valid package", details)
	}
	return out, nil
}

// exportName makes a listed object's name a valid, unique metadata.name.
func exportName(listed string, used map[string]int) string {
	name := strings.NewReplacer("@", "_", " ", "_", "\t", "_", "\n", "_").Replace(listed)
	if name == "" {
		name = "item"
	}
	used[name]++
	if n := used[name]; n > 1 {
		name = fmt.Sprintf("%s-%d", name, n)
	}
	return name
}
