// Package fetch reads package sources named by URL (a stack's URLs, as in
// pkger): http(s) with a size limit, a timeout and no redirects to other
// schemes, and file URLs confined to one directory. The executor's prepare
// activity and the API share it so both apply the same rules.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Defaults used when Options leaves a field zero.
const (
	DefaultMaxBytes = 10 << 20
	DefaultTimeout  = 30 * time.Second
)

// Errors callers can test for with errors.Is.
var (
	ErrScheme   = errors.New("URL scheme not allowed")
	ErrOutside  = errors.New("path outside the allowed directory")
	ErrTooLarge = errors.New("source too large")
	ErrStatus   = errors.New("unexpected HTTP status")
	ErrURL      = errors.New("invalid URL")
)

// StatusError is an answer other than 200; it matches ErrStatus, and its
// Code lets callers tell a server's trouble (5xx) from a bad URL (4xx).
type StatusError struct {
	Code   int
	Status string // "404 Not Found"
}

func (e *StatusError) Error() string { return ErrStatus.Error() + ": " + e.Status }

// Is makes errors.Is(err, ErrStatus) hold.
func (e *StatusError) Is(target error) bool { return target == ErrStatus }

// Retryable reports a status worth trying again: 5xx, 408 and 429.
func (e *StatusError) Retryable() bool {
	return e.Code >= 500 || e.Code == http.StatusRequestTimeout || e.Code == http.StatusTooManyRequests
}

// Options configure a Fetcher.
type Options struct {
	// Schemes are the allowed URL schemes, lower case (default https,
	// http). "file" is honoured only together with Dir.
	Schemes []string
	// Dir confines file URLs: file:///a/b.yaml and file:a/b.yaml both name
	// Dir/a/b.yaml, and nothing may leave Dir (no "..", no symlink out).
	Dir string
	// MaxBytes caps one source; Timeout bounds one fetch.
	MaxBytes int64
	Timeout  time.Duration
	// Client is the HTTP client (default: one with the timeout and
	// redirects limited to allowed schemes).
	Client *http.Client
}

// Source is one fetched document.
type Source struct {
	URL  string
	Data []byte
	// Format is "yaml", "json" or "jsonnet", from the URL's extension, else
	// the Content-Type, else "yaml" (which reads JSON too).
	Format string
}

// Fetcher fetches sources under its Options. It is safe for concurrent use.
type Fetcher struct {
	opts   Options
	client *http.Client
}

// New returns a Fetcher with defaults filled in.
func New(opts Options) *Fetcher {
	if len(opts.Schemes) == 0 {
		opts.Schemes = []string{"https", "http"}
	}
	for i, s := range opts.Schemes {
		opts.Schemes[i] = strings.ToLower(strings.TrimSpace(s))
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	f := &Fetcher{opts: opts, client: opts.Client}
	if f.client == nil {
		f.client = &http.Client{
			Timeout: opts.Timeout,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) >= 5 {
					return errors.New("too many redirects")
				}
				if !f.allowed(req.URL.Scheme) || req.URL.Scheme == "file" {
					return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), ErrScheme)
				}
				return nil
			},
		}
	}
	return f
}

func (f *Fetcher) allowed(scheme string) bool {
	scheme = strings.ToLower(scheme)
	if scheme == "file" && f.opts.Dir == "" {
		return false
	}
	return slices.Contains(f.opts.Schemes, scheme)
}

// Check validates a URL without fetching it: the scheme must be allowed and
// a file URL must stay inside Dir.
func (f *Fetcher) Check(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q: %w: %v", raw, ErrURL, err)
	}
	if u.Scheme == "" {
		return fmt.Errorf("%q: %w: no scheme (want one of %s)", raw, ErrURL, strings.Join(f.schemes(), ", "))
	}
	if !f.allowed(u.Scheme) {
		return fmt.Errorf("%q: %w (allowed: %s)", u.Redacted(), ErrScheme, strings.Join(f.schemes(), ", "))
	}
	if strings.EqualFold(u.Scheme, "file") {
		_, err := f.relPath(u)
		return err
	}
	if u.Host == "" {
		return fmt.Errorf("%q: %w: no host", u.Redacted(), ErrURL)
	}
	return nil
}

// schemes lists the schemes that are usable as configured.
func (f *Fetcher) schemes() []string {
	var out []string
	for _, s := range f.opts.Schemes {
		if f.allowed(s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// Fetch reads one source.
func (f *Fetcher) Fetch(ctx context.Context, raw string) (*Source, error) {
	if err := f.Check(raw); err != nil {
		return nil, err
	}
	u, _ := url.Parse(raw)
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	if strings.EqualFold(u.Scheme, "file") {
		return f.fetchFile(ctx, u)
	}
	return f.fetchHTTP(ctx, u)
}

func (f *Fetcher) fetchHTTP(ctx context.Context, u *url.URL) (*Source, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	req.Header.Set("Accept", "application/yaml, application/json;q=0.9, application/jsonnet;q=0.8, */*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch %s: %w", u.Redacted(), &StatusError{Code: resp.StatusCode, Status: resp.Status})
	}
	if resp.ContentLength > f.opts.MaxBytes {
		return nil, fmt.Errorf("fetch %s: %w: %d bytes, limit %d", u.Redacted(), ErrTooLarge, resp.ContentLength, f.opts.MaxBytes)
	}
	data, err := f.readLimited(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	return &Source{URL: u.Redacted(), Data: data, Format: formatOf(u.Path, resp.Header.Get("Content-Type"))}, nil
}

// relPath turns a file URL into a path relative to Dir, refusing any that
// climbs out of it.
func (f *Fetcher) relPath(u *url.URL) (string, error) {
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("%q: %w: file URLs name no host", u.String(), ErrURL)
	}
	p := u.Path
	if p == "" {
		p = u.Opaque
	}
	if p == "" {
		return "", fmt.Errorf("%q: %w: empty path", u.String(), ErrURL)
	}
	// Both file:///a/b and file:a/b mean Dir/a/b. Reject ".." outright
	// rather than clean it away: a URL that tries to climb is a mistake.
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", fmt.Errorf("%q: %w", u.String(), ErrOutside)
		}
	}
	rel := strings.TrimPrefix(path.Clean("/"+p), "/")
	if rel == "" {
		return "", fmt.Errorf("%q: %w: names the directory itself", u.String(), ErrURL)
	}
	return filepath.FromSlash(rel), nil
}

func (f *Fetcher) fetchFile(ctx context.Context, u *url.URL) (*Source, error) {
	rel, err := f.relPath(u)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// os.Root refuses every path that would leave Dir, symlinks included.
	root, err := os.OpenRoot(f.opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	defer root.Close()
	file, err := root.Open(rel)
	if err != nil {
		if strings.Contains(err.Error(), "escapes from parent") || strings.Contains(err.Error(), "path escapes") {
			return nil, fmt.Errorf("fetch %s: %w", u, ErrOutside)
		}
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("fetch %s: not a regular file", u)
	}
	if info.Size() > f.opts.MaxBytes {
		return nil, fmt.Errorf("fetch %s: %w: %d bytes, limit %d", u, ErrTooLarge, info.Size(), f.opts.MaxBytes)
	}
	data, err := f.readLimited(file)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	return &Source{URL: u.String(), Data: data, Format: formatOf(rel, "")}, nil
}

func (f *Fetcher) readLimited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, f.opts.MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > f.opts.MaxBytes {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, f.opts.MaxBytes)
	}
	return data, nil
}

// formatOf picks the encoding from a file extension, then a Content-Type.
func formatOf(name, contentType string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".json":
		return "json"
	case ".jsonnet", ".libsonnet":
		return "jsonnet"
	case ".yaml", ".yml":
		return "yaml"
	}
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		switch {
		case mt == "application/json" || strings.HasSuffix(mt, "+json"):
			return "json"
		case strings.Contains(mt, "jsonnet"):
			return "jsonnet"
		}
	}
	return "yaml"
}
