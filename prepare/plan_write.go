package prepare

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/planner"
)

// PlanWriter writes an execution's step records (store.Store has it).
type PlanWriter interface {
	PutStepData(ctx context.Context, execID, stepID, kind string, data []byte) error
	PutStepDataBatch(ctx context.Context, execID, kind string, data map[string][]byte) error
}

// persistChunkBytes bounds the encoded steps Persist holds before it
// writes them: a plan of 100,000 steps is written in a few transactions
// rather than encoded whole first.
const persistChunkBytes = 8 << 20

// Persist keeps a plan's steps where the step activities and ReadPlan find
// them: a single-step unit's step as its own record (contract.DataStep), a
// batch unit's steps as one record (contract.DataUnit), and the index of
// all of them in package order (contract.DataIndex, see IndexEntry). Cost:
// the steps' specs encoded once, written a few MiB at a time (one store
// write each), and the index written last, so a reader that finds the
// index finds every step.
func Persist(ctx context.Context, w PlanWriter, execID string, units []contract.Unit, members [][]*planner.StoredStep) error {
	singles := map[string][]byte{}
	batches := map[string][]byte{}
	held := 0
	flush := func() error {
		if err := w.PutStepDataBatch(ctx, execID, contract.DataStep, singles); err != nil {
			return err
		}
		if err := w.PutStepDataBatch(ctx, execID, contract.DataUnit, batches); err != nil {
			return err
		}
		clear(singles)
		clear(batches)
		held = 0
		return nil
	}
	n := 0
	for i, u := range units {
		n += len(members[i])
		if u.Batch {
			raw, err := json.Marshal(members[i])
			if err != nil {
				return err
			}
			batches[contract.UnitKey(u.Index)] = raw
			held += len(raw)
		} else {
			raw, err := json.Marshal(members[i][0])
			if err != nil {
				return err
			}
			singles[members[i][0].ID] = raw
			held += len(raw)
		}
		if held >= persistChunkBytes {
			if err := flush(); err != nil {
				return err
			}
			collect(n)
		}
	}
	if err := flush(); err != nil {
		return err
	}
	steps := make([]*planner.StoredStep, 0, n)
	for _, m := range members {
		steps = append(steps, m...)
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].Ord < steps[j].Ord })
	collect(n) // the steps' encoding's garbage, before the index's
	index, err := encodeIndex(steps)
	if err != nil {
		return err
	}
	return w.PutStepData(ctx, execID, contract.IndexKey, contract.DataIndex, index)
}

// Shard hands the units to the plan: inline when they are at most
// shardUnits (0: planner.DefaultShardUnits) and fit one payload
// (contract.MaxUnitsPageBytes), else split into shards of at most that
// many, kept in the store in pages of at most that size (contract.DataShard,
// read back by the LoadUnits activity) and described in plan.Shards. So no
// payload carries more than a page of units and no workflow's history more
// than one shard's, however large the fleet; a plan of one shard runs in
// the workflow itself. Cost: one encoding of every unit; one store write
// when sharded.
func Shard(ctx context.Context, w PlanWriter, execID string, units []contract.Unit, shardUnits int, plan *contract.PreparedPlan) error {
	if shardUnits <= 0 {
		shardUnits = planner.DefaultShardUnits
	}
	raws := make([][]byte, len(units))
	size := 0
	for i := range units {
		raw, err := json.Marshal(&units[i])
		if err != nil {
			return err
		}
		raws[i] = raw
		size += len(raw) + 1
	}
	if len(units) <= shardUnits && size <= contract.MaxUnitsPageBytes {
		plan.Units = units
		return nil
	}
	pages := map[string][]byte{}
	for k, first := 0, 0; first < len(units); k, first = k+1, first+shardUnits {
		end := min(first+shardUnits, len(units))
		sh := contract.Shard{Index: k, First: first, Units: end - first}
		for _, u := range units[first:end] {
			sh.Steps += max(u.Count, 1)
		}
		for _, page := range pageUnits(raws[first:end], contract.MaxUnitsPageBytes) {
			pages[contract.ShardPageKey(k, sh.Pages)] = page
			sh.Pages++
		}
		plan.Shards = append(plan.Shards, sh)
	}
	return w.PutStepDataBatch(ctx, execID, contract.DataShard, pages)
}

// pageUnits joins encoded units into JSON arrays of at most limit bytes
// each (a unit larger than limit alone in its page), in order.
func pageUnits(raws [][]byte, limit int) [][]byte {
	var pages [][]byte
	page := []byte{'['}
	for _, raw := range raws {
		if len(page) > 1 && len(page)+len(raw)+1 > limit {
			pages = append(pages, append(page, ']'))
			page = []byte{'['}
		}
		if len(page) > 1 {
			page = append(page, ',')
		}
		page = append(page, raw...)
	}
	return append(pages, append(page, ']'))
}
