package starter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/converter"

	"github.com/cairn-io/cairn/internal/searchattr"
)

// EnsureSearchAttributes registers Cairn's search attributes in the
// namespace, leaving those already there alone, so the Temporal UI and List
// can filter executions by kind, stack, cluster and graph type.
func (s *Starter) EnsureSearchAttributes(ctx context.Context) error {
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
