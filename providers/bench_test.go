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

// BenchmarkFiles10k converges 10,000 file resources through the engine
// three times: create, noop re-apply, update. Each phase reports its rate
// in resources per second.
func BenchmarkFiles10k(b *testing.B) { benchFiles(b, 1) }

// BenchmarkFiles10kParallel is the same with 8 resources converging at
// once, as the executor runs independent steps.
func BenchmarkFiles10kParallel(b *testing.B) { benchFiles(b, 8) }

func benchFiles(b *testing.B, workers int) {
	const n = 10_000
	ctx := context.Background()
	r := localRegistry(b)
	var phases [3]time.Duration
	names := [3]string{"create", "noop", "update"}
	wantOutcome := [3]model.Outcome{model.OutcomeCreated, model.OutcomeUnchanged, model.OutcomeUpdated}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		node := Node{Name: "bench", Root: b.TempDir()}
		mustMkdir(b, filepath.Join(node.Root, "files"))
		reqs := make([]Request, n)
		for j := range reqs {
			reqs[j] = Request{Kind: "file", Name: fmt.Sprintf("f%05d", j), Node: node, Spec: model.Spec{
				"path": fmt.Sprintf("/files/f%05d.conf", j), "content": fmt.Sprintf("key=%d\nversion=1\n", j), "mode": "0644",
			}}
		}
		b.StartTimer()
		for phase := range 3 {
			if phase == 2 {
				b.StopTimer()
				for j := range reqs {
					reqs[j].Spec = model.Spec{"path": reqs[j].Spec["path"], "content": fmt.Sprintf("key=%d\nversion=2\n", j), "mode": "0640"}
				}
				b.StartTimer()
			}
			start := time.Now()
			errs := make(chan error, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := w; j < n; j += workers {
						ch, err := r.Converge(ctx, reqs[j])
						if err == nil && ch.Outcome != wantOutcome[phase] {
							err = fmt.Errorf("%s %s: outcome %q", names[phase], reqs[j].Name, ch.Outcome)
						}
						if err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			require.NoError(b, <-errs)
			phases[phase] += time.Since(start)
		}
	}
	for phase, d := range phases {
		b.ReportMetric(float64(n*b.N)/d.Seconds(), names[phase]+"-res/s")
	}
}
