package api

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// BenchmarkGetStack measures GET /v1/stacks/{id} over a real loopback
// listener (the API on its own http.Server with its timeouts, a token, and
// a SQLite store holding a stack of 50 resources), with 8 clients in
// parallel (BENCH_WORKERS changes that). b.N bounds the request count
// (-benchtime 20000x); it reports requests per second.
func BenchmarkGetStack(b *testing.B) {
	st := openStore(b, sqliteURL(b))
	ctx := context.Background()
	stack := &model.Stack{Name: "bench", URLs: []string{}}
	require.NoError(b, st.CreateStack(ctx, stack))
	var resources []model.StackResource
	for i := range 50 {
		resources = append(resources, model.StackResource{Kind: "file", ID: fmt.Sprintf("/srv/app/f%02d", i), PkgName: fmt.Sprintf("f%02d", i),
			Associations: []model.Association{{Kind: "directory", PkgName: "app"}}})
	}
	_, err := st.WriteStackRecord(ctx, stack.ID, "bench-exec", resources, "", "", true)
	require.NoError(b, err)
	const token = "bench-token"
	e, err := New(Config{Token: token}, Deps{Store: st})
	require.NoError(b, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	go func() { _ = e.Server.Serve(ln) }()
	b.Cleanup(func() { _ = e.Server.Close() })

	url := "http://" + ln.Addr().String() + "/v1/stacks/" + stack.ID
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	client := &http.Client{Transport: tr}
	get := func() error {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	require.NoError(b, get())

	workers := benchWorkers()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	next := make(chan struct{}, b.N)
	for range b.N {
		next <- struct{}{}
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				if err := get(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
}

// benchWorkers is the number of parallel clients.
func benchWorkers() int {
	if v := os.Getenv("BENCH_WORKERS"); v != "" {
		n, _ := strconv.Atoi(v)
		return n
	}
	return 8
}
