package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// groupsYAML is n files under dir in groups of ten (a root and nine files
// that depend on it), one YAML stream.
func groupsYAML(dir string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kind: Directory\nmetadata: {name: root}\nspec: {path: %s}\n", dir)
	for i := range n {
		name := fmt.Sprintf("g%04d-m%d", i/10, i%10)
		fmt.Fprintf(&b, "---\nkind: File\nmetadata: {name: %s}\nspec: {path: %s/%s, content: \"file %d\\n\"}\n", name, dir, name, i)
		if i%10 != 0 {
			fmt.Fprintf(&b, "dependsOn: [File/g%04d-m0]\n", i/10)
		}
	}
	return b.String()
}

// call sends one request with the test's token and answers its status and
// body.
func (h *cairn) call(t *testing.T, method, path, ctype string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxTimeout(t, 2*time.Minute), method, h.url+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+h.token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

// errorOf decodes an error answer.
func errorOf(t *testing.T, body []byte) model.ErrorBody {
	t.Helper()
	var e model.ErrorBody
	require.NoError(t, json.Unmarshal(body, &e), "%s", body)
	return e
}

// A package larger than one request may be is sent as an upload in parts
// and applied as one package: every file is there, the stack records every
// resource, and the upload's package serves a plan and an export too.
func TestE2EUploadAppliesPackageOverBodyLimit(t *testing.T) {
	h := newCairn(t, cairnOptions{cfg: func(c *Config) { c.BodyLimit = 32 << 10 }})
	ctx := ctxTimeout(t, 3*time.Minute)
	dir := filepath.Join(t.TempDir(), "files")
	pkg := []byte(groupsYAML(dir, 600))
	require.Greater(t, len(pkg), 32<<10*2, "the package must need several parts")
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "large"})
	require.NoError(t, err)

	status, body := h.call(t, http.MethodPost, "/v1/stacks/"+st.ID+"/apply", "application/yaml", pkg)
	require.Equal(t, http.StatusRequestEntityTooLarge, status, "%s", body)

	u, err := h.client.Upload(ctx, st.ID, client.Document{Data: pkg, Format: "yaml"}, client.UploadOptions{})
	require.NoError(t, err)
	require.Greater(t, len(u.Parts), 2, "parts: %+v", u.Parts)
	assert.Equal(t, 601, u.Resources)
	assert.Equal(t, int64(32<<10), u.Limits.PartBytes)
	got, err := h.client.GetUpload(ctx, st.ID, u.ID)
	require.NoError(t, err)
	require.Len(t, got.Parts, len(u.Parts))
	for i, p := range got.Parts {
		assert.Equal(t, i+1, p.Part)
		assert.LessOrEqual(t, p.Bytes, int64(32<<10))
		assert.Equal(t, "request", p.Name)
	}

	plan, _, err := h.client.DryRun(ctx, st.ID, &client.Document{Upload: u.ID}, client.DryRunOptions{})
	require.NoError(t, err)
	require.NotNil(t, plan)
	assert.Equal(t, 601, plan.Summary.Create)
	// The same upload, already made a package, runs again.
	ex, err := h.client.Apply(ctx, st.ID, &client.Document{Upload: u.ID}, client.ApplyOptions{Wait: true})
	require.NoError(t, err)
	mustStatus(t, ex, model.ExecCompleted)
	wantReport(t, ex.Report, model.Report{Created: 601})
	for _, i := range []int{0, 1, 299, 599} {
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("g%04d-m%d", i/10, i%10)))
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("file %d\n", i), string(data))
	}
	rec, err := h.client.GetStack(ctx, st.ID)
	require.NoError(t, err)
	require.Len(t, rec.Resources, 601)

	// Its parts can no longer change.
	status, body = h.call(t, http.MethodPut, "/v1/stacks/"+st.ID+"/uploads/"+u.ID+"/parts/99", "application/yaml", []byte("kind: Directory\nmetadata: {name: x}\nspec: {path: /x}\n"))
	require.Equal(t, http.StatusConflict, status, "%s", body)

	// The client sends a package the server refuses whole as an upload by
	// itself; applied again it changes nothing.
	ex, err = h.client.Apply(ctx, st.ID, &client.Document{Data: pkg, Format: "yaml"}, client.ApplyOptions{Wait: true})
	require.NoError(t, err)
	mustStatus(t, ex, model.ExecCompleted)
	wantReport(t, ex.Report, model.Report{Unchanged: 601})

	// Export reads the package back from its parts.
	out, err := h.client.Export(ctx, model.ExportRequest{StackID: st.ID}, "yaml")
	require.NoError(t, err)
	assert.Equal(t, 601, strings.Count(string(out), "metadata:"), "export:\n%.400s", out)
}

// A part with a bad document is refused whole with every error at the
// document's own line in the stream it was cut from; an error that spans
// parts is found when the upload is applied; nothing is applied either
// way.
func TestE2EUploadRefusesBadDocuments(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 2*time.Minute)
	dir := filepath.Join(t.TempDir(), "files")
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "bad"})
	require.NoError(t, err)
	u, err := h.client.CreateUpload(ctx, st.ID)
	require.NoError(t, err)
	base := "/v1/stacks/" + st.ID + "/uploads/" + u.ID

	good := fmt.Sprintf("kind: Directory\nmetadata: {name: root}\nspec: {path: %s}\n", dir)
	status, body := h.call(t, http.MethodPut, base+"/parts/1?name=site.yaml", "application/yaml", []byte(good))
	require.Equal(t, http.StatusCreated, status, "%s", body)

	bad := fmt.Sprintf("---\nkind: File\nmetadata: {name: a}\nspec: {path: %s/a, contnt: x}\n---\nkind: File\nmetadata: {name: b}\nspec: {path: %s/b, content: x}\ndependsOn: [File/missing]\n", dir, dir)
	status, body = h.call(t, http.MethodPut, base+"/parts/2?name=site.yaml&line=4&document=1", "application/yaml", []byte(bad))
	require.Equal(t, http.StatusUnprocessableEntity, status, "%s", body)
	e := errorOf(t, body)
	require.Len(t, e.Error.Details, 1, "a reference to another part is not an error of the part: %+v", e.Error.Details)
	d := e.Error.Details[0]
	assert.Equal(t, "site.yaml", d.Document)
	assert.Equal(t, "spec.contnt", d.Path)
	assert.Equal(t, 7, d.Line, "line 4 of the part is line 7 of site.yaml")
	assert.Equal(t, 1, d.Index)
	assert.Contains(t, d.Message, `unknown field "contnt"`)
	got, err := h.client.GetUpload(ctx, st.ID, u.ID)
	require.NoError(t, err)
	require.Len(t, got.Parts, 1, "the refused part is not kept")

	fixed := strings.Replace(bad, "contnt", "content", 1)
	status, body = h.call(t, http.MethodPut, base+"/parts/2?name=site.yaml&line=4&document=1", "application/yaml", []byte(fixed))
	require.Equal(t, http.StatusCreated, status, "%s", body)
	status, body = h.call(t, http.MethodPost, "/v1/stacks/"+st.ID+"/apply", "application/json", []byte(`{"upload": "`+u.ID+`"}`))
	require.Equal(t, http.StatusUnprocessableEntity, status, "%s", body)
	e = errorOf(t, body)
	require.Len(t, e.Error.Details, 1, "%+v", e.Error.Details)
	d = e.Error.Details[0]
	assert.Equal(t, "site.yaml", d.Document)
	assert.Equal(t, "dependsOn[0]", d.Path)
	assert.Equal(t, 12, d.Line)
	assert.Contains(t, d.Message, "depends on file/missing: no such resource in the package")

	list, err := h.client.ListExecutions(ctx, client.ExecutionFilter{Stack: st.ID})
	require.NoError(t, err)
	assert.Empty(t, list.Executions, "nothing started")
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "nothing applied: %v", err)
	rec, err := h.client.GetStack(ctx, st.ID)
	require.NoError(t, err)
	assert.Empty(t, rec.Resources)
}

// Sending a part again changes nothing; another body for a kept part is a
// conflict.
func TestE2EUploadPartsAreIdempotent(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 2*time.Minute)
	dir := filepath.Join(t.TempDir(), "files")
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "again"})
	require.NoError(t, err)
	u, err := h.client.CreateUpload(ctx, st.ID)
	require.NoError(t, err)
	part := client.Part{Number: 1, Format: "yaml", Data: []byte(groupsYAML(dir, 20))}
	first, err := h.client.PutUploadPart(ctx, st.ID, u.ID, part)
	require.NoError(t, err)
	status, body := h.call(t, http.MethodPut, "/v1/stacks/"+st.ID+"/uploads/"+u.ID+"/parts/1", "application/yaml", part.Data)
	require.Equal(t, http.StatusOK, status, "a re-sent part is answered 200: %s", body)
	var again model.UploadPart
	require.NoError(t, json.Unmarshal(body, &again))
	assert.Equal(t, first.SHA256, again.SHA256)
	assert.Equal(t, first.CreatedAt, again.CreatedAt, "the part kept is the first one")

	status, body = h.call(t, http.MethodPut, "/v1/stacks/"+st.ID+"/uploads/"+u.ID+"/parts/1", "application/yaml", []byte(groupsYAML(dir, 10)))
	require.Equal(t, http.StatusConflict, status, "%s", body)
	assert.Contains(t, errorOf(t, body).Error.Message, "holds another body")

	got, err := h.client.GetUpload(ctx, st.ID, u.ID)
	require.NoError(t, err)
	require.Len(t, got.Parts, 1)
	assert.Equal(t, 21, got.Resources)
	ex, err := h.client.Apply(ctx, st.ID, &client.Document{Upload: u.ID}, client.ApplyOptions{Wait: true})
	require.NoError(t, err)
	mustStatus(t, ex, model.ExecCompleted)
	wantReport(t, ex.Report, model.Report{Created: 21})
}

// An unknown upload is 404 (another stack's too), an expired one 410,
// wherever it is named.
func TestE2EUploadUnknownAndExpired(t *testing.T) {
	h := newCairn(t, cairnOptions{cfg: func(c *Config) { c.UploadTTL = time.Millisecond }})
	ctx := ctxTimeout(t, time.Minute)
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "expiry"})
	require.NoError(t, err)
	other, err := h.client.CreateStack(ctx, model.StackInput{Name: "other"})
	require.NoError(t, err)
	u, err := h.client.CreateUpload(ctx, st.ID)
	require.NoError(t, err)
	time.Sleep(5 * time.Millisecond) // past its millisecond of life
	doc := []byte("kind: Directory\nmetadata: {name: x}\nspec: {path: /x}\n")
	for _, tc := range []struct {
		name, method, path, ctype string
		body                      []byte
		want                      int
	}{
		{"get unknown", http.MethodGet, "/v1/stacks/" + st.ID + "/uploads/nope", "", nil, http.StatusNotFound},
		{"part of unknown", http.MethodPut, "/v1/stacks/" + st.ID + "/uploads/nope/parts/1", "application/yaml", doc, http.StatusNotFound},
		{"apply unknown", http.MethodPost, "/v1/stacks/" + st.ID + "/apply", "application/json", []byte(`{"upload": "nope"}`), http.StatusNotFound},
		{"another stack's", http.MethodGet, "/v1/stacks/" + other.ID + "/uploads/" + u.ID, "", nil, http.StatusNotFound},
		{"get expired", http.MethodGet, "/v1/stacks/" + st.ID + "/uploads/" + u.ID, "", nil, http.StatusGone},
		{"part of expired", http.MethodPut, "/v1/stacks/" + st.ID + "/uploads/" + u.ID + "/parts/1", "application/yaml", doc, http.StatusGone},
		{"dry-run expired", http.MethodPost, "/v1/stacks/" + st.ID + "/dry-run", "application/json", []byte(`{"upload": "` + u.ID + `"}`), http.StatusGone},
		{"part 0", http.MethodPut, "/v1/stacks/" + st.ID + "/uploads/" + u.ID + "/parts/0", "application/yaml", doc, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := h.call(t, tc.method, tc.path, tc.ctype, tc.body)
			require.Equal(t, tc.want, status, "%s", body)
			e := errorOf(t, body)
			if tc.want == http.StatusGone {
				assert.Equal(t, CodeGone, e.Error.Code)
				assert.Contains(t, e.Error.Message, "expired at")
			}
		})
	}
	status, body := h.call(t, http.MethodDelete, "/v1/stacks/"+st.ID+"/uploads/"+u.ID, "", nil)
	require.Equal(t, http.StatusNoContent, status, "%s", body)
	status, _ = h.call(t, http.MethodGet, "/v1/stacks/"+st.ID+"/uploads/"+u.ID, "", nil)
	require.Equal(t, http.StatusNotFound, status)
}

// Quotas bound one upload's parts together and every open upload's; a
// part past either is refused with 413 naming the bound, and nothing of it
// is kept.
func TestE2EUploadQuotas(t *testing.T) {
	h := newCairn(t, cairnOptions{cfg: func(c *Config) { c.UploadMaxBytes, c.UploadQuota = 3000, 5000 }})
	ctx := ctxTimeout(t, time.Minute)
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "quota"})
	require.NoError(t, err)
	doc := func(name string, size int) []byte {
		d := fmt.Sprintf("kind: Directory\nmetadata: {name: %s}\nspec: {path: /q/%s}\n", name, name)
		return []byte(d + strings.Repeat("#\n", (size-len(d))/2))
	}
	put := func(u *model.Upload, n int, body []byte) (int, []byte) {
		return h.call(t, http.MethodPut, fmt.Sprintf("/v1/stacks/%s/uploads/%s/parts/%d", st.ID, u.ID, n), "application/yaml", body)
	}
	a, err := h.client.CreateUpload(ctx, st.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(3000), a.Limits.UploadBytes)
	assert.Equal(t, int64(5000), a.Limits.QuotaBytes)
	status, body := put(a, 1, doc("a1", 2000))
	require.Equal(t, http.StatusCreated, status, "%s", body)
	status, body = put(a, 2, doc("a2", 1500))
	require.Equal(t, http.StatusRequestEntityTooLarge, status, "%s", body)
	assert.Contains(t, errorOf(t, body).Error.Message, "CAIRN_UPLOAD_MAX_BYTES")

	b, err := h.client.CreateUpload(ctx, st.ID)
	require.NoError(t, err)
	status, body = put(b, 1, doc("b1", 2500))
	require.Equal(t, http.StatusCreated, status, "%s", body)
	c, err := h.client.CreateUpload(ctx, st.ID)
	require.NoError(t, err)
	status, body = put(c, 1, doc("c1", 1000))
	require.Equal(t, http.StatusRequestEntityTooLarge, status, "%s", body)
	assert.Contains(t, errorOf(t, body).Error.Message, "CAIRN_UPLOAD_QUOTA")
	got, err := h.client.GetUpload(ctx, st.ID, c.ID)
	require.NoError(t, err)
	assert.Empty(t, got.Parts)

	// Deleting an upload gives its bytes back.
	require.NoError(t, h.client.DeleteUpload(ctx, st.ID, a.ID))
	status, body = put(c, 1, doc("c1", 1000))
	require.Equal(t, http.StatusCreated, status, "%s", body)
}

// A part uses the kinds the parts before it define; the package applies
// with them. A part that uses a kind only a later part defines is refused.
func TestE2EUploadKindsAcrossParts(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 2*time.Minute)
	dir := filepath.Join(t.TempDir(), "pages")
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "kinds"})
	require.NoError(t, err)
	kind := []byte("kind: Kind\nmetadata: {name: Page}\nspec:\n  base: file\n  defaults: {mode: \"0640\"}\n")
	page := []byte(fmt.Sprintf("kind: Directory\nmetadata: {name: pages}\nspec: {path: %s}\n---\nkind: Page\nmetadata: {name: index}\nspec: {path: %s/index.html, content: \"<h1>hi</h1>\\n\"}\ndependsOn: [Directory/pages]\n", dir, dir))

	late, err := h.client.CreateUpload(ctx, st.ID)
	require.NoError(t, err)
	status, body := h.call(t, http.MethodPut, "/v1/stacks/"+st.ID+"/uploads/"+late.ID+"/parts/1", "application/yaml", page)
	require.Equal(t, http.StatusUnprocessableEntity, status, "%s", body)
	assert.Contains(t, errorOf(t, body).Error.Details[0].Message, `unknown kind "Page"`)

	u, err := h.client.CreateUpload(ctx, st.ID)
	require.NoError(t, err)
	_, err = h.client.PutUploadPart(ctx, st.ID, u.ID, client.Part{Number: 1, Data: kind, Format: "yaml"})
	require.NoError(t, err)
	p2, err := h.client.PutUploadPart(ctx, st.ID, u.ID, client.Part{Number: 2, Data: page, Format: "yaml", Line: 6, Document: 1})
	require.NoError(t, err)
	assert.Equal(t, 2, p2.Resources)
	ex, err := h.client.Apply(ctx, st.ID, &client.Document{Upload: u.ID}, client.ApplyOptions{Wait: true})
	require.NoError(t, err)
	mustStatus(t, ex, model.ExecCompleted)
	wantReport(t, ex.Report, model.Report{Created: 2})
	info, err := os.Stat(filepath.Join(dir, "index.html"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), info.Mode().Perm(), "the kind's defaults applied")
}
