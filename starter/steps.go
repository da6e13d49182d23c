package starter

import (
	"context"

	"github.com/cairn-io/cairn/model"
)

// Steps pages through an execution's step states: the progress query's
// entries from offset, at most limit (0: as many as fit in one answer,
// at most 5,000 and about 1 MiB), with the number of entries in all. It
// refuses, with ErrNotFound, a workflow that is not one of Cairn's
// executions. Cost: a describe and one progress query (two for a sharded
// execution).
func (s *Starter) Steps(ctx context.Context, id string, offset, limit int) (*model.ProgressPage, error) {
	wfID, _, info, err := s.describeOurs(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.progress(ctx, wfID, info.GetExecution().GetRunId(), offset, limit)
}
