package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFetchHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pkg.yaml":
			_, _ = w.Write([]byte("kind: File\n"))
		case "/pkg":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_, _ = w.Write([]byte(`[]`))
		case "/lib":
			w.Header().Set("Content-Type", "application/jsonnet")
			_, _ = w.Write([]byte(`[]`))
		case "/big":
			w.Header().Set("Content-Length", "100")
			_, _ = w.Write([]byte(strings.Repeat("x", 100)))
		case "/chunked-big":
			w.(http.Flusher).Flush()
			_, _ = w.Write([]byte(strings.Repeat("x", 100)))
		case "/slow":
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/to-pkg":
			http.Redirect(w, r, "/pkg.yaml", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	f := New(Options{Schemes: []string{"http"}, MaxBytes: 50, Timeout: 300 * time.Millisecond})
	ctx := context.Background()
	tests := []struct {
		path   string
		format string
		err    error
		text   string
	}{
		{"/pkg.yaml", "yaml", nil, "kind: File\n"},
		{"/pkg", "json", nil, "[]"},
		{"/lib", "jsonnet", nil, "[]"},
		{"/to-pkg", "yaml", nil, "kind: File\n"},
		{"/big", "", ErrTooLarge, ""},
		{"/chunked-big", "", ErrTooLarge, ""},
		{"/missing", "", ErrStatus, ""},
		{"/to-file", "", ErrScheme, ""},
		{"/slow", "", context.DeadlineExceeded, ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			src, err := f.Fetch(ctx, srv.URL+tt.path)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err, "err %v, want %v", err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.text, string(src.Data), "got %q (%s)", src.Data, src.Format)
			require.Equal(t, tt.format, src.Format, "got %q (%s)", src.Data, src.Format)
		})
	}
	_, err := New(Options{Schemes: []string{"https"}}).Fetch(ctx, srv.URL+"/pkg.yaml")
	require.ErrorIs(t, err, ErrScheme, "http with only https allowed: %v", err)
}

func TestFetchFileConfined(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	must := func(err error) {
		t.Helper()
		require.NoError(t, err)
	}
	must(os.MkdirAll(filepath.Join(dir, "pkgs"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "pkgs", "a.json"), []byte(`{"kind": "File"}`), 0o644))
	must(os.WriteFile(filepath.Join(dir, "big.yaml"), []byte(strings.Repeat("x", 100)), 0o644))
	must(os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte("secret"), 0o644))
	must(os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(dir, "link.yaml")))
	must(os.Symlink(outside, filepath.Join(dir, "linkdir")))
	f := New(Options{Schemes: []string{"file"}, Dir: dir, MaxBytes: 50})
	ctx := context.Background()
	for _, ok := range []string{"file:///pkgs/a.json", "file:pkgs/a.json", "file://localhost/pkgs/a.json"} {
		src, err := f.Fetch(ctx, ok)
		require.NoError(t, err, "%s: %v %+v", ok, err, src)
		require.Equal(t, `{"kind": "File"}`, string(src.Data), "%s: %v %+v", ok, err, src)
		require.Equal(t, "json", src.Format, "%s: %v %+v", ok, err, src)
	}
	for raw, want := range map[string]error{
		"file:///../" + filepath.Base(outside) + "/secret.yaml": ErrOutside,
		"file:///pkgs/../../x.yaml":                             ErrOutside,
		"file:///link.yaml":                                     ErrOutside,
		"file:///linkdir/secret.yaml":                           ErrOutside,
		"file:///big.yaml":                                      ErrTooLarge,
		"file://otherhost/pkgs/a.json":                          ErrURL,
		"file:///":                                              ErrURL,
	} {
		_, err := f.Fetch(ctx, raw)
		assert.ErrorIs(t, err, want, "%s: err %v, want %v", raw, err, want)
	}
	_, err := f.Fetch(ctx, "file:///pkgs")
	assert.Error(t, err, "a directory was read as a file")
	// Without a directory, file URLs are refused even when listed.
	err = New(Options{Schemes: []string{"file"}}).Check("file:///pkgs/a.json")
	require.ErrorIs(t, err, ErrScheme, "file without dir: %v", err)
}

func TestCheck(t *testing.T) {
	f := New(Options{})
	for raw, want := range map[string]error{
		"https://example.com/p.yaml": nil,
		"http://example.com/p.yaml":  nil,
		"HTTPS://example.com/p.yaml": nil,
		"ftp://example.com/p.yaml":   ErrScheme,
		"file:///p.yaml":             ErrScheme,
		"p.yaml":                     ErrURL,
		"https:///p.yaml":            ErrURL,
		"::":                         ErrURL,
	} {
		err := f.Check(raw)
		if want == nil {
			require.NoError(t, err, "Check(%q) = %v, want %v", raw, err, want)
		}
		if want != nil {
			assert.ErrorIs(t, err, want, "Check(%q) = %v, want %v", raw, err, want)
		}
	}
}

func TestStatusErrorIsTypedAndClassified(t *testing.T) {
	for code, retryable := range map[int]bool{404: false, 403: false, 429: true, 408: true, 500: true, 503: true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) }))
		f := New(Options{Schemes: []string{"http"}})
		_, err := f.Fetch(context.Background(), srv.URL+"/p.yaml")
		srv.Close()
		var se *StatusError
		require.ErrorAs(t, err, &se, "%d: error %v is not a StatusError matching ErrStatus", code, err)
		require.ErrorIs(t, err, ErrStatus, "%d: error %v is not a StatusError matching ErrStatus", code, err)
		require.Equal(t, code, se.Code, "%d: code %d retryable %v, want %v", code, se.Code, se.Retryable(), retryable)
		assert.Equal(t, retryable, se.Retryable(), "%d: code %d retryable %v, want %v", code, se.Code, se.Retryable(), retryable)
	}
}
