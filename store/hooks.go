package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// PutHooks replaces a stack's webhooks, secrets included, as one record
// beside the stack's secrets (see contract.DataHooks): a sealed store
// seals it. An empty list removes them all. One write.
func PutHooks(ctx context.Context, s Store, stackID string, hooks []model.Hook) error {
	if hooks == nil {
		hooks = []model.Hook{}
	}
	raw, err := json.Marshal(hooks)
	if err != nil {
		return fmt.Errorf("put hooks of stack %q: %w", stackID, err)
	}
	return s.PutStepData(ctx, contract.StackSecretsExecution(stackID), contract.HooksKey, contract.DataHooks, raw)
}

// Hooks returns a stack's webhooks with their secrets; none when it has
// none. One read.
func Hooks(ctx context.Context, s Store, stackID string) ([]model.Hook, error) {
	raw, err := s.GetStepData(ctx, contract.StackSecretsExecution(stackID), contract.HooksKey, contract.DataHooks)
	if errors.Is(err, ErrNotFound) {
		return []model.Hook{}, nil
	}
	if err != nil {
		return nil, err
	}
	var hooks []model.Hook
	if err := json.Unmarshal(raw, &hooks); err != nil {
		return nil, fmt.Errorf("hooks of stack %q: %w", stackID, err)
	}
	return hooks, nil
}
