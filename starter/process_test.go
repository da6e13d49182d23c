package starter_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/worker"
)

// The test binary re-executes itself as a worker process when these are
// set, so a test can kill a worker with SIGKILL mid-apply.
const (
	workerModeEnv  = "CAIRN_E2E_WORKER"
	workerHostEnv  = "CAIRN_E2E_HOSTPORT"
	workerDBEnv    = "CAIRN_E2E_DB"
	workerQueueEnv = "CAIRN_E2E_QUEUE"
	workerDrainEnv = "CAIRN_E2E_DRAIN"
	// workerOutcomeDelayEnv widens the window between a step's end and
	// the record of its outcome (see outcomeDelay).
	workerOutcomeDelayEnv = "CAIRN_E2E_OUTCOME_DELAY"
)

func runWorkerProcess() int {
	ctx := context.Background()
	c, err := client.Dial(client.Options{HostPort: os.Getenv(workerHostEnv), Logger: nil})
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial:", err)
		return 1
	}
	defer c.Close()
	st, err := store.Open(ctx, os.Getenv(workerDBEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "store:", err)
		return 1
	}
	defer st.Close()
	drain, _ := time.ParseDuration(os.Getenv(workerDrainEnv)) // 0: the default
	deps := worker.Deps{Store: st, Logger: testLogger()}
	if d, _ := time.ParseDuration(os.Getenv(workerOutcomeDelayEnv)); d > 0 {
		deps.Steps = outcomeDelay{Store: st, delay: d}
	}
	w, err := worker.New(c, deps, worker.Options{TaskQueue: os.Getenv(workerQueueEnv), Drain: drain})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	if err := w.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	fmt.Println("worker ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	w.Stop()
	return 0
}

// outcomeDelay holds every write of step outputs (a step's outcome) for
// delay before making it: a worker killed meanwhile has run a step whose
// outcome it never recorded.
type outcomeDelay struct {
	store.Store
	delay time.Duration
}

func (o outcomeDelay) wait(ctx context.Context, kind string) error {
	if kind != contract.DataOutputs {
		return nil
	}
	t := time.NewTimer(o.delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (o outcomeDelay) PutStepData(ctx context.Context, execID, stepID, kind string, data []byte) error {
	if err := o.wait(ctx, kind); err != nil {
		return err
	}
	return o.Store.PutStepData(ctx, execID, stepID, kind, data)
}

func (o outcomeDelay) PutStepDataBatch(ctx context.Context, execID, kind string, data map[string][]byte) error {
	if len(data) == 0 {
		return nil
	}
	if err := o.wait(ctx, kind); err != nil {
		return err
	}
	return o.Store.PutStepDataBatch(ctx, execID, kind, data)
}
