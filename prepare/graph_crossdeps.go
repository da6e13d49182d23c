package prepare

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/yaql"
)

// crossDeps evaluates a task's cross dependencies written as yaql on a
// node, against that node's deployment data and the task's last run there,
// as its condition is. A failure to read the store is kept in y.failed
// (the expansion reports the task and node; the caller returns the store's
// error rather than a problem of the graph).
func (y *yaqlEnv) crossDeps(ctx context.Context) graphs.CrossDepsFunc {
	return func(t *model.Task, field, src, node string) (any, error) {
		in, err := y.input(ctx, node, t.ID)
		if err != nil {
			if y.failed == nil && !isYAQLError(err) && !errors.Is(err, yaql.ErrLimit) {
				y.failed = err
			}
			return nil, err
		}
		x, err := y.parse(src, false)
		if err != nil {
			return nil, err
		}
		v, err := x.Eval(in)
		if err != nil {
			return nil, fmt.Errorf("yaql: %w", err)
		}
		return v, nil
	}
}
