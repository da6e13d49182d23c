package starter

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/api/serviceerror"
)

func TestTransientTemporalErrors(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{serviceerror.NewUnavailable("GetNamespace operation failed. Error interrupted (9)"), true},
		{serviceerror.NewInternal("busy"), true},
		{serviceerror.NewResourceExhausted(0, "rate"), true},
		{fmt.Errorf("list search attributes: %w", serviceerror.NewUnavailable("x")), true},
		{serviceerror.NewInvalidArgument("bad name"), false},
		{serviceerror.NewPermissionDenied("no", ""), false},
		{serviceerror.NewNamespaceNotFound("default"), false},
		{context.Canceled, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, transient(tt.err), "%v", tt.err)
	}
}
