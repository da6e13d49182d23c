package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/store"
)

// A package larger than one request may be is sent in parts: POST
// /v1/stacks/{id}/uploads opens an upload, PUT …/uploads/{upload}/parts/{n}
// sends part n (whole documents, at most the body limit; each part is
// checked as it comes, document by document), and an apply or dry-run of
// the stack whose body is {"upload": ID, …parameters} checks the parts
// together and runs them as one package. Parts are kept in the store
// until the upload is used, deleted or expires; quotas bound what they
// hold.
const (
	// MaxUploadParts is the highest part number.
	MaxUploadParts = 10_000
	// uploadKeep is how long an expired upload still answers 410 before
	// it is forgotten (404).
	uploadKeep = 24 * time.Hour
	// maxPartsAtOnce bounds the parts read at the same time, so many
	// clients sending parts cannot make the server hold many parts' worth
	// of resources at once; further parts wait for a turn.
	maxPartsAtOnce = 2
)

// partInfo is what the commit reads of a part: its resources' index
// entries (graphs.CheckIndex), the refs and variables it needs values
// for, and the kinds it defines (which later parts may use).
type partInfo struct {
	Index   []graphs.IndexEntry `json:"index"`
	Env     []string            `json:"env,omitempty"`
	Secrets []string            `json:"secrets,omitempty"`
	Vars    []string            `json:"vars,omitempty"`
	Kinds   []kinds.Kind        `json:"kinds,omitempty"`
}

// uploadSummary is what a used upload keeps of its parts for later runs:
// the refs and variables its package needs values for.
type uploadSummary struct {
	Env       []string `json:"env,omitempty"`
	Secrets   []string `json:"secrets,omitempty"`
	Vars      []string `json:"vars,omitempty"`
	Resources int      `json:"resources"`
}

// uploadLimits are the bounds the server holds uploads to.
func (s *server) uploadLimits() *model.UploadLimits {
	return &model.UploadLimits{PartBytes: s.cfg.BodyLimit, UploadBytes: s.cfg.UploadMaxBytes, QuotaBytes: s.cfg.UploadQuota,
		Parts: MaxUploadParts, ExpiresIn: s.cfg.UploadTTL.String()}
}

// createUpload opens an upload of the stack: 201 with it (no parts yet)
// and the server's limits. Uploads expired long ago are dropped first.
func (s *server) createUpload(c echo.Context) error {
	st, err := s.stackOf(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.store.PruneUploads(ctx, time.Now(), uploadKeep); err != nil {
		requestLogger(c, s.log).Warn("pruning expired uploads failed", "error", err)
	}
	u := &model.Upload{StackID: st.ID, ExpiresAt: time.Now().Add(s.cfg.UploadTTL)}
	if err := s.store.CreateUpload(ctx, u); err != nil {
		return storeError(err, fmt.Sprintf("stack %q", st.ID))
	}
	u.Parts, u.Limits = []model.UploadPart{}, s.uploadLimits()
	c.Response().Header().Set(echo.HeaderLocation, "/v1/stacks/"+st.ID+"/uploads/"+u.ID)
	return c.JSON(http.StatusCreated, u)
}

// uploadOf reads the request's upload: 404 when it is not there or not
// the stack's, 410 when it expired.
func (s *server) uploadOf(ctx context.Context, stackID, id string) (*model.Upload, error) {
	u, err := s.store.GetUpload(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && u.StackID != stackID {
		return nil, &Error{Status: http.StatusNotFound, Message: fmt.Sprintf("upload %q of stack %q not found", id, stackID), Cause: err}
	}
	if err != nil {
		return nil, storeError(err, "upload")
	}
	if !u.ExpiresAt.After(time.Now()) {
		return nil, errUploadExpired(id, u.ExpiresAt)
	}
	return u, nil
}

func errUploadExpired(id string, at time.Time) *Error {
	return &Error{Status: http.StatusGone, Message: fmt.Sprintf("upload %q expired at %s: open a new upload and send its parts again", id, at.UTC().Format(time.RFC3339))}
}

// getUpload answers the upload with its parts.
func (s *server) getUpload(c echo.Context) error {
	u, err := s.uploadOf(c.Request().Context(), c.Param("id"), c.Param("upload"))
	if err != nil {
		return err
	}
	u.Limits = s.uploadLimits()
	return c.JSON(http.StatusOK, u)
}

// deleteUpload drops the upload and its parts: 204.
func (s *server) deleteUpload(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("upload")
	u, err := s.store.GetUpload(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && u.StackID != c.Param("id") {
		return &Error{Status: http.StatusNotFound, Message: fmt.Sprintf("upload %q of stack %q not found", id, c.Param("id")), Cause: err}
	}
	if err != nil {
		return storeError(err, "upload")
	}
	if err := s.store.DeleteUpload(ctx, id); err != nil {
		return storeError(err, fmt.Sprintf("upload %q", id))
	}
	return c.NoContent(http.StatusNoContent)
}

// partPlace reads where a part sits in the stream it was cut from:
// ?name= (default part-N), ?line= (its first line, default 1) and
// ?document= (the index of its first document, default 0).
func partPlace(c echo.Context, n int) (name string, line, doc int, err error) {
	name = c.QueryParam("name")
	if name == "" {
		name = "part-" + strconv.Itoa(n)
	}
	if len(name) > 256 {
		return "", 0, 0, badRequest("name: at most 256 bytes")
	}
	line, doc = 1, 0
	if v := c.QueryParam("line"); v != "" {
		if line, err = strconv.Atoi(v); err != nil || line < 1 {
			return "", 0, 0, badRequest("line %q: want the part's first line, 1 or more", v)
		}
	}
	if v := c.QueryParam("document"); v != "" {
		if doc, err = strconv.Atoi(v); err != nil || doc < 0 {
			return "", 0, 0, badRequest("document %q: want the index of the part's first document, 0 or more", v)
		}
	}
	return name, line, doc, nil
}

// putUploadPart keeps part n of an upload: 201 with the part once it is
// read and checked, 200 with it when the same body was kept already (a
// re-send changes nothing), 409 when part n holds another body, 422 with
// every error of its documents (nothing kept), 413 past the part's,
// upload's or server's bounds, 404 or 410 for an unknown or expired
// upload.
func (s *server) putUploadPart(c echo.Context) error {
	ctx := c.Request().Context()
	stackID, id := c.Param("id"), c.Param("upload")
	n, err := strconv.Atoi(c.Param("part"))
	if err != nil || n < 1 || n > MaxUploadParts {
		return badRequest("part %q: want a number from 1 to %d", c.Param("part"), MaxUploadParts)
	}
	name, line, doc, err := partPlace(c, n)
	if err != nil {
		return err
	}
	u, err := s.uploadOf(ctx, stackID, id)
	if err != nil {
		return err
	}
	if u.SnapshotHash != "" {
		return &Error{Status: http.StatusConflict, Message: fmt.Sprintf("upload %q was used by an apply or dry-run: its parts can no longer change", id)}
	}
	src, err := readDocument(c, false)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(src.Data)
	digest := hex.EncodeToString(sum[:])
	if kept, err := s.store.UploadPart(ctx, id, n); err == nil {
		if kept.SHA256 != digest {
			return &Error{Status: http.StatusConflict, Message: fmt.Sprintf("part %d of upload %q holds another body (sha256 %s); open a new upload to send other documents", n, id, kept.SHA256)}
		}
		return c.JSON(http.StatusOK, kept)
	} else if !errors.Is(err, store.ErrNotFound) {
		return storeError(err, "upload part")
	}
	src.Name, src.Line, src.Doc = name, line, doc
	data, err := s.readPart(ctx, u, n, *src)
	if err != nil {
		return err
	}
	data.Part, data.SHA256, data.Bytes = n, digest, int64(len(src.Data))
	data.Name, data.Line, data.Document = name, line, doc
	part, created, err := s.store.PutUploadPart(ctx, id, *data, store.UploadQuota{UploadBytes: s.cfg.UploadMaxBytes, TotalBytes: s.cfg.UploadQuota},
		time.Now().Add(s.cfg.UploadTTL))
	if err != nil {
		return uploadStoreError(err, id, n)
	}
	status := http.StatusCreated
	if !created {
		status = http.StatusOK
	}
	c.Response().Header().Set(echo.HeaderLocation, fmt.Sprintf("/v1/stacks/%s/uploads/%s/parts/%d", stackID, id, n))
	return c.JSON(status, part)
}

// readPart reads and checks a part's documents (one turn of s.parts at a
// time) with the kinds the parts before it define, and returns what to
// keep of it: the part snapshot and the commit's information. Every
// problem of its documents is a 422 naming document, path and line.
func (s *server) readPart(ctx context.Context, u *model.Upload, n int, src graphs.Source) (*store.UploadPartData, error) {
	select {
	case s.parts <- struct{}{}:
		defer func() { <-s.parts }()
	case <-ctx.Done():
		return nil, &Error{Status: http.StatusServiceUnavailable, Message: "request canceled while waiting to read the part", Cause: ctx.Err()}
	}
	cat, err := s.partCatalogue(ctx, u, n)
	if err != nil {
		return nil, err
	}
	opts := s.parseOptions()
	opts.Catalogue, opts.Part = cat, true
	docs, err := graphs.Parse(opts, src)
	if err != nil {
		return nil, invalidDocuments(fmt.Sprintf("part %d", n), err, nil)
	}
	if len(docs.Graphs) > 0 {
		return nil, invalid(fmt.Sprintf("part %d is invalid", n), []model.ErrorDetail{{Document: src.Name, Line: src.Line,
			Message: "graphs are uploaded to a release, cluster or plugin, not applied to a stack"}})
	}
	env, secrets := docs.RequiredRefs()
	vars := docs.MissingVars(nil)
	kept := model.UploadPart{Documents: documentCount(docs), Resources: len(docs.Package.Resources), Kinds: len(docs.Kinds)}
	content, err := prepare.EncodePartSnapshot(ctx, docs, s.evaluated, src)
	if err != nil {
		return nil, internalError(err)
	}
	// The resources are in content now: what is left to encode is their
	// index, so they can go while it is.
	docs.Package = nil
	info, err := json.Marshal(partInfo{Index: docs.Index, Env: env, Secrets: secrets, Vars: vars, Kinds: docs.Kinds})
	if err != nil {
		return nil, internalError(fmt.Errorf("encode part %d: %w", n, err))
	}
	return &store.UploadPartData{UploadPart: kept, Info: info, Content: content}, nil
}

// documentCount is how many documents a part held: its resources and the
// kinds it defines.
func documentCount(docs *graphs.Documents) int {
	return len(docs.Package.Resources) + len(docs.Kinds)
}

// partCatalogue is the catalogue part n is read with: the server's, with
// the kinds the upload's parts before n define.
func (s *server) partCatalogue(ctx context.Context, u *model.Upload, n int) (*kinds.Catalogue, error) {
	cat := s.catalogue
	cloned := false
	for _, p := range u.Parts {
		if p.Part >= n || p.Kinds == 0 {
			continue
		}
		raw, err := s.store.UploadPartInfo(ctx, u.ID, p.Part)
		if err != nil {
			return nil, storeError(err, "upload part")
		}
		var info partInfo
		if err := json.Unmarshal(raw, &info); err != nil {
			return nil, internalError(fmt.Errorf("part %d of upload %s: %w", p.Part, u.ID, err))
		}
		if !cloned {
			cat, cloned = cat.Clone(), true
		}
		for _, k := range info.Kinds {
			if err := cat.Add(k); err != nil {
				return nil, internalError(fmt.Errorf("part %d of upload %s: %w", p.Part, u.ID, err))
			}
		}
	}
	return cat, nil
}

// uploadStoreError maps the store's refusals of a part to answers.
func uploadStoreError(err error, id string, n int) error {
	var quota *store.QuotaError
	switch {
	case errors.As(err, &quota):
		setting := "CAIRN_UPLOAD_MAX_BYTES"
		if quota.Server {
			setting = "CAIRN_UPLOAD_QUOTA"
		}
		return &Error{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("part %d refused: %v (%s)", n, quota, setting), Cause: err,
			Extra: map[string]any{"limit": quota.Limit, "held": quota.Held}}
	case errors.Is(err, store.ErrGone):
		return &Error{Status: http.StatusGone, Message: err.Error(), Cause: err}
	case errors.Is(err, store.ErrConflict):
		return &Error{Status: http.StatusConflict, Message: err.Error(), Cause: err}
	case errors.Is(err, store.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Message: fmt.Sprintf("upload %q not found", id), Cause: err}
	}
	return storeError(err, "upload part")
}
