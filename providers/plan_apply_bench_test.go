package providers

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// BenchmarkFilesPlanApply10k runs 10,000 file resources the way a batch
// activity does: in batches of 100, 8 at a time, each step planned (a noop
// Converge) and then applied, the batch's writes synced once. "have" hands
// the plan's state to the apply; "reread" lets the apply read again.
// Phases: create, then noop re-apply (planned only).
func BenchmarkFilesPlanApply10k(b *testing.B) {
	for _, handOver := range []bool{true, false} {
		b.Run(map[bool]string{true: "have", false: "reread"}[handOver], func(b *testing.B) {
			benchPlanApply(b, handOver)
		})
	}
}

func benchPlanApply(b *testing.B, handOver bool) {
	const n, batch, workers = 10_000, 100, 8
	ctx := context.Background()
	r := localRegistry(b)
	var phases [2]time.Duration
	names := [2]string{"create", "noop"}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		node := Node{Name: "bench", Root: b.TempDir()}
		mustMkdir(b, filepath.Join(node.Root, "files"))
		reqs := make([]Request, n)
		for j := range reqs {
			reqs[j] = Request{Kind: "file", Name: fmt.Sprintf("f%05d", j), Node: node, Spec: model.Spec{
				"path": fmt.Sprintf("/files/f%05d.conf", j), "content": fmt.Sprintf("key=%d\n", j), "mode": "0644",
			}}
		}
		b.StartTimer()
		for phase := range 2 {
			start := time.Now()
			for lo := 0; lo < n; lo += batch {
				pending := NewDeferredSync()
				bctx := WithDeferredSync(ctx, pending)
				var wg sync.WaitGroup
				var failed error
				var mu sync.Mutex
				for w := range workers {
					wg.Go(func() {
						for j := lo + w; j < lo+batch; j += workers {
							plan := reqs[j]
							plan.Noop = true
							ch, err := r.Converge(ctx, plan)
							if err == nil && ch.Action != model.ActionNoop {
								apply := reqs[j]
								if handOver {
									apply.Have = &ch.Before
								}
								_, err = r.Converge(bctx, apply)
							}
							if err != nil {
								mu.Lock()
								failed = err
								mu.Unlock()
							}
						}
					})
				}
				wg.Wait()
				require.NoError(b, failed)
				require.NoError(b, pending.Sync(ctx))
			}
			phases[phase] += time.Since(start)
		}
	}
	for phase, d := range phases {
		b.ReportMetric(float64(n*b.N)/d.Seconds(), names[phase]+"-res/s")
	}
}
