package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"slices"

	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/internal/fetch"
	"github.com/cairn-io/cairn/prepare"
)

// FetchPackage reads a stack's URLs (pkger's stack URLs), validates them as
// one package and stores it as a snapshot, so the execution goes on exactly
// as with a package posted to the API. Jsonnet read from a URL must be
// self-contained: imports are refused.
//
// The URLs read are the stack's, from its record in the store; the input's
// URLs are a claim: when they are not exactly the stack's, nothing is read
// and the execution fails for good.
//
// An invalid package, a refused URL, a 4xx answer, a source over the size
// limit or a fetch over the time limit fail for good (contract.ConfigErrorType); a
// 5xx answer or a network error is retried (contract.FetchFailedType).
func (a *Activities) FetchPackage(ctx context.Context, in contract.FetchPackageInput) (*contract.FetchPackageResult, error) {
	if a.d.Fetch == nil {
		return nil, configError("this worker cannot read package URLs (no fetcher)")
	}
	urls, err := a.stackURLs(ctx, in)
	if err != nil {
		return nil, err
	}

	sources := make([]graphs.Source, 0, len(urls))
	for i, u := range urls {
		src, err := a.d.Fetch.Fetch(ctx, u)
		if err != nil {
			return nil, fetchFailure(ctx, i, err)
		}
		sources = append(sources, graphs.Source{Name: src.URL, Data: src.Data, Format: graphs.Format(src.Format)})
	}
	docs, err := graphs.Parse(graphs.Options{Catalogue: a.d.Catalogue, Jsonnet: a.d.Jsonnet}, sources...)
	if err != nil {
		var errs graphs.Errors
		if errors.As(err, &errs) {
			return nil, configError(fmt.Sprintf("the package read from the stack's URLs is invalid:\n%v", err))
		}
		return nil, fmt.Errorf("parse the stack's URLs: %w", err)
	}
	if len(docs.Graphs) > 0 {
		return nil, configError(sources[0].Name + ": graphs are uploaded to a release, cluster or plugin, not applied to a stack")
	}
	if docs.Package == nil || len(docs.Package.Resources) == 0 && !in.AllowEmpty {
		return nil, configError(sources[0].Name + ": the package has no resources: applying it would delete everything the stack holds; delete the stack to do that")
	}
	// The snapshot keeps Jsonnet evaluated, as the API stores posted
	// packages, so Prepare (and export) never evaluate it again.
	content, err := prepare.EncodeSources(ctx, docs, a.evaluated, sources...)
	if err != nil {
		return nil, err
	}
	hash, err := a.d.Store.PutSnapshot(ctx, prepare.PackageSnapshotKind, content)
	if err != nil {
		return nil, fmt.Errorf("store package snapshot: %w", err)
	}
	a.log.Info("package read from stack URLs", "stack", in.StackID, "urls", len(urls),
		"resources", len(docs.Package.Resources), "snapshot", prepare.ShortHash(hash))
	return &contract.FetchPackageResult{SnapshotHash: hash, Resources: len(docs.Package.Resources)}, nil
}

// stackURLs returns the URLs of the stack the input names, as its record
// in the store has them, refusing input URLs that are not exactly those.
func (a *Activities) stackURLs(ctx context.Context, in contract.FetchPackageInput) ([]string, error) {
	stack, err := a.d.Store.GetStack(ctx, in.StackID)
	if notFound(err) {
		return nil, configError(fmt.Sprintf("stack %q not found", in.StackID))
	}
	if err != nil {
		return nil, fmt.Errorf("read stack %q: %w", in.StackID, err)
	}
	if len(stack.URLs) == 0 {
		return nil, configError(fmt.Sprintf("stack %q has no URLs to read a package from", in.StackID))
	}
	if len(in.URLs) > 0 && !slices.Equal(in.URLs, stack.URLs) {
		return nil, configError(fmt.Sprintf("the URLs to read are not stack %q's: only the URLs its record holds are read", in.StackID))
	}
	return stack.URLs, nil
}

// evaluated is src with its Jsonnet evaluated into JSON (the source as it
// is when not Jsonnet); a failure is retried, since it evaluated a moment
// ago in the parse.
func (a *Activities) evaluated(ctx context.Context, src graphs.Source) (graphs.Source, error) {
	if src.Format != graphs.FormatJsonnet {
		return src, nil
	}
	ev := cmp.Or[graphs.JsonnetEvaluator](a.d.Jsonnet, graphs.InProcessJsonnet{})
	ctx, cancel := context.WithTimeout(ctx, graphs.DefaultTimeout)
	defer cancel()
	out, err := ev.EvaluateJsonnet(ctx, graphs.JsonnetRequest{
		Name: src.Name, Source: string(src.Data),
		MaxStack: graphs.DefaultJsonnetMaxStack, MaxDepth: graphs.DefaultMaxDepth, MaxOutput: graphs.DefaultMaxBytes,
	})
	if err != nil {
		return graphs.Source{}, fmt.Errorf("evaluate %s: %w", src.Name, err)
	}
	return graphs.Source{Name: src.Name, Data: out, Format: graphs.FormatJSON}, nil
}

// fetchFailure classifies a failed fetch of urls[i]: what no retry can
// change fails the execution at once.
func fetchFailure(ctx context.Context, i int, err error) error {
	if ctx.Err() != nil {
		// Cancelled or out of time as an activity: not the URL's fault.
		return err
	}
	msg := fmt.Sprintf("urls[%d]: %v", i, err)
	var netErr net.Error
	var statusErr *fetch.StatusError
	switch {
	case errors.Is(err, fetch.ErrScheme), errors.Is(err, fetch.ErrOutside), errors.Is(err, fetch.ErrURL),
		errors.Is(err, fetch.ErrTooLarge), errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
		return configError(msg)
	case errors.As(err, &statusErr):
		if statusErr.Retryable() {
			return temporal.NewApplicationError(msg, contract.FetchFailedType)
		}
		return configError(msg)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		// The fetch's own time limit passed.
		return configError(msg)
	}
	return temporal.NewApplicationError(msg, contract.FetchFailedType)
}
