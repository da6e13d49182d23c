package starter_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

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
	w, err := worker.New(c, worker.Deps{Store: st, Logger: testLogger()}, worker.Options{TaskQueue: os.Getenv(workerQueueEnv), Drain: drain})
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
