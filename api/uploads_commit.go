package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/store"
)

// uploadPackage is the package of an apply or dry-run that names an
// upload of the stack: the first run that takes the upload checks what
// spans its parts (duplicates, references, cycles: graphs.CheckIndex over
// every part's index entries, one part's read at a time) and makes it a
// snapshot (a manifest of the parts' snapshots, copied inside the store);
// later runs of the same upload take that snapshot. Every problem is a 422
// naming document, path and line, and nothing runs. Cost: one store read
// per part and the index of every resource in memory (about 300 bytes
// each), never the parts' documents.
func (s *server) uploadPackage(ctx context.Context, st *model.Stack, id string, allowEmpty bool) (string, *uploadSummary, error) {
	u, err := s.uploadOf(ctx, st.ID, id)
	if err != nil {
		return "", nil, err
	}
	if u.SnapshotHash != "" {
		hash, raw, err := s.store.CommitUpload(ctx, id, nil, prepare.PackagePartSnapshotKind, prepare.PackageSnapshotKind, nil, nil)
		if err != nil {
			return "", nil, commitError(err, id)
		}
		var sum uploadSummary
		if err := json.Unmarshal(raw, &sum); err != nil {
			return "", nil, internalError(fmt.Errorf("summary of upload %s: %w", id, err))
		}
		return hash, &sum, nil
	}
	if len(u.Parts) == 0 {
		return "", nil, invalid("the upload is empty", []model.ErrorDetail{{Document: "upload " + id,
			Message: "the upload has no parts: send them (PUT /v1/stacks/{id}/uploads/{upload}/parts/{n}) before applying it"}})
	}
	var index []graphs.IndexEntry
	sum := &uploadSummary{}
	env, secrets, vars := map[string]bool{}, map[string]bool{}, map[string]bool{}
	manifest := prepare.PackageManifest{Parts: make([]prepare.ManifestPart, 0, len(u.Parts))}
	for _, p := range u.Parts {
		raw, err := s.store.UploadPartInfo(ctx, id, p.Part)
		if err != nil {
			return "", nil, storeError(err, "upload part")
		}
		var info partInfo
		if err := json.Unmarshal(raw, &info); err != nil {
			return "", nil, internalError(fmt.Errorf("part %d of upload %s: %w", p.Part, id, err))
		}
		index = append(index, info.Index...)
		for _, k := range info.Env {
			env[k] = true
		}
		for _, k := range info.Secrets {
			secrets[k] = true
		}
		for _, k := range info.Vars {
			vars[k] = true
		}
		sum.Resources += p.Resources
		manifest.Parts = append(manifest.Parts, prepare.ManifestPart{Hash: p.Snapshot, Resources: p.Resources})
	}
	if errs := graphs.CheckIndex(index); len(errs) > 0 {
		return "", nil, invalidDocuments("package", errs, nil)
	}
	index = nil
	if sum.Resources == 0 && !allowEmpty {
		return "", nil, invalid("package is invalid", []model.ErrorDetail{{Document: "upload " + id,
			Message: "the package has no resources: applying it would delete everything the stack holds; delete the stack to do that"}})
	}
	sum.Env, sum.Secrets, sum.Vars = sortedKeys(env), sortedKeys(secrets), sortedKeys(vars)
	content, err := prepare.EncodePackageManifest(manifest)
	if err != nil {
		return "", nil, internalError(err)
	}
	rawSum, err := json.Marshal(sum)
	if err != nil {
		return "", nil, internalError(err)
	}
	hash, _, err := s.store.CommitUpload(ctx, id, u.Parts, prepare.PackagePartSnapshotKind, prepare.PackageSnapshotKind, content, rawSum)
	if err != nil {
		return "", nil, commitError(err, id)
	}
	return hash, sum, nil
}

// commitError maps the store's refusals of a commit to answers.
func commitError(err error, id string) error {
	switch {
	case errors.Is(err, store.ErrGone):
		return &Error{Status: http.StatusGone, Message: err.Error(), Cause: err}
	case errors.Is(err, store.ErrConflict):
		return &Error{Status: http.StatusConflict, Message: err.Error(), Cause: err}
	case errors.Is(err, store.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Message: fmt.Sprintf("upload %q not found", id), Cause: err}
	}
	return storeError(err, "upload")
}

func sortedKeys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
