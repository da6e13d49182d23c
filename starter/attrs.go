package starter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/converter"

	"github.com/cairn-io/cairn/internal/searchattr"
)

// ensureAttempts bounds EnsureSearchAttributes' tries; a busy or just
// started Temporal answers the namespace lookup with a transient error.
const ensureAttempts = 5

// EnsureSearchAttributes registers Cairn's search attributes in the
// namespace, leaving those already there alone, so the Temporal UI and List
// can filter executions by kind, stack, cluster and graph type. A
// transient failure (unavailable, interrupted, busy) is tried again,
// ensureAttempts times in all over about three seconds.
func (s *Starter) EnsureSearchAttributes(ctx context.Context) error {
	var err error
	wait := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		if err = s.ensureSearchAttributes(ctx); err == nil || attempt == ensureAttempts || !transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// transient says whether a Temporal error may pass on its own: anything
// but a refusal of the request itself.
func transient(err error) bool {
	var (
		invalid  *serviceerror.InvalidArgument
		denied   *serviceerror.PermissionDenied
		noNS     *serviceerror.NamespaceNotFound
		notFound *serviceerror.NotFound
		unimpl   *serviceerror.Unimplemented
	)
	return !errors.As(err, &invalid) && !errors.As(err, &denied) && !errors.As(err, &noNS) &&
		!errors.As(err, &notFound) && !errors.As(err, &unimpl) && !errors.Is(err, context.Canceled)
}

func (s *Starter) ensureSearchAttributes(ctx context.Context) error {
	ops := s.c.OperatorService()
	have, err := ops.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: s.cfg.Namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := searchattr.All()
	for name := range missing {
		if _, ok := have.GetCustomAttributes()[name]; ok {
			delete(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = ops.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: s.cfg.Namespace, SearchAttributes: missing})
	if err != nil && !alreadyExists(err) {
		return fmt.Errorf("add search attributes: %w", err)
	}
	return nil
}

func alreadyExists(err error) bool {
	var exists *serviceerror.AlreadyExists
	return errors.As(err, &exists) || strings.Contains(err.Error(), "already exists")
}

// keyword decodes a keyword search attribute's payload.
func keyword(p *commonpb.Payload) string {
	if p == nil {
		return ""
	}
	var v string
	if err := converter.GetDefaultDataConverter().FromPayload(p, &v); err != nil {
		return ""
	}
	return v
}
