package workflows

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cairn-io/cairn/model"
)

// A sharded execution's report adds up every shard's counts, the unknown
// outcomes and the messages by level among them.
func TestShardMergeAddsEveryCount(t *testing.T) {
	var s shardRun
	for _, r := range []model.Report{
		{Created: 1, Updated: 2, Unknown: 1, Skipped: 1, Log: map[model.LogLevel]int{model.LogLevels[0]: 2}},
		{Deleted: 3, Unchanged: 4, Unknown: 2, Failed: 1, Refreshed: 5, Log: map[model.LogLevel]int{model.LogLevels[0]: 1}},
	} {
		s.merge(&Outcome{Report: r})
	}
	got := s.merged.Report
	assert.Equal(t, model.Report{Created: 1, Updated: 2, Deleted: 3, Unchanged: 4, Failed: 1, Skipped: 1, Unknown: 3, Refreshed: 5,
		Log: map[model.LogLevel]int{model.LogLevels[0]: 3}}, got)
}
