package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSnapshots(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		tests := []struct {
			kind    string
			content []byte
		}{
			{"package", []byte("kind: Label\nmetadata:\n  name: lucid_einstein\n")},
			{"graph", []byte(`{"type":"default","tasks":[]}`)},
			{"package", []byte{0, 1, 2, 0xff, 0xfe}}, // binary content survives
			{"package", []byte{}},
		}
		for _, tt := range tests {
			sum := sha256.Sum256(tt.content)
			want := hex.EncodeToString(sum[:])
			hash, err := s.PutSnapshot(ctx, tt.kind, tt.content)
			must(t, err)
			require.Equal(t, want, hash, "PutSnapshot hash %s, want sha256 hex %s", hash, want)
			first, err := s.GetSnapshot(ctx, hash)
			must(t, err)
			time.Sleep(2 * time.Millisecond)
			again, err := s.PutSnapshot(ctx, "graph", tt.content)
			must(t, err)
			require.Equal(t, hash, again, "second PutSnapshot hash")
			got, err := s.GetSnapshot(ctx, hash)
			must(t, err)
			require.Equal(t, hash, got.Hash, "GetSnapshot = %+v, want kind %q content %q", got, tt.kind, tt.content)
			require.Equal(t, tt.kind, got.Kind, "GetSnapshot = %+v, want kind %q content %q", got, tt.kind, tt.content)
			require.Equal(t, tt.content, got.Content, "GetSnapshot = %+v, want kind %q content %q", got, tt.kind, tt.content)
			require.True(t, got.CreatedAt.Equal(first.CreatedAt), "second Put changed CreatedAt from %v to %v", first.CreatedAt, got.CreatedAt)
			require.False(t, got.CreatedAt.IsZero(), "second Put changed CreatedAt from %v to %v", first.CreatedAt, got.CreatedAt)
		}
		_, err := s.GetSnapshot(ctx, "0000")
		wantErr(t, err, ErrNotFound, "snapshot", "0000")
	})
}

func TestStepData(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)

		must(t, s.PutStepData(ctx, "e1", "file/motd@node-1", "before", []byte("old motd")))
		must(t, s.PutStepData(ctx, "e1", "file/motd@node-1", "plan", []byte(`{"action":"update"}`)))
		must(t, s.PutStepData(ctx, "e1", "file/issue@node-1", "before", nil))
		must(t, s.PutStepData(ctx, "e2", "file/motd@node-1", "before", []byte("other execution")))

		tests := []struct {
			exec, step, kind string
			want             []byte
		}{
			{"e1", "file/motd@node-1", "before", []byte("old motd")},
			{"e1", "file/motd@node-1", "plan", []byte(`{"action":"update"}`)},
			{"e1", "file/issue@node-1", "before", []byte{}},
			{"e2", "file/motd@node-1", "before", []byte("other execution")},
		}
		for _, tt := range tests {
			got, err := s.GetStepData(ctx, tt.exec, tt.step, tt.kind)
			must(t, err)
			require.Equal(t, tt.want, got, "GetStepData(%s, %s, %s) = %q, want %q", tt.exec, tt.step, tt.kind, got, tt.want)
			require.NotNil(t, got, "GetStepData(%s, %s, %s) = %q, want %q", tt.exec, tt.step, tt.kind, got, tt.want)
		}

		// Put again is an upsert.
		must(t, s.PutStepData(ctx, "e1", "file/motd@node-1", "before", []byte("newer")))
		got, err := s.GetStepData(ctx, "e1", "file/motd@node-1", "before")
		must(t, err)
		require.Equal(t, "newer", string(got), "after upsert got %q", got)

		_, err = s.GetStepData(ctx, "e1", "nope", "before")
		wantErr(t, err, ErrNotFound, "nope", "e1", "before")

		list, err := s.ListStepData(ctx, "e1", "before")
		must(t, err)
		want := map[string]string{"file/motd@node-1": "newer", "file/issue@node-1": ""}
		require.Len(t, list, len(want), "ListStepData = %q, want %q", list, want)
		for k, v := range want {
			require.Equal(t, v, string(list[k]), "ListStepData[%s] = %q, want %q", k, list[k], v)
		}
		empty, err := s.ListStepData(ctx, "e3", "before")
		must(t, err)
		require.NotNil(t, empty, "ListStepData of an unknown execution = %#v, want empty map", empty)
		require.Empty(t, empty, "ListStepData of an unknown execution = %#v, want empty map", empty)

		// Batch: new rows, overwritten rows, a nil value.
		must(t, s.PutStepDataBatch(ctx, "e1", "before", map[string][]byte{
			"file/motd@node-1": []byte("batched"),
			"file/new@node-2":  []byte("fresh"),
			"file/nil@node-2":  nil,
		}))
		must(t, s.PutStepDataBatch(ctx, "e1", "before", nil))
		list, err = s.ListStepData(ctx, "e1", "before")
		must(t, err)
		want = map[string]string{"file/motd@node-1": "batched", "file/issue@node-1": "", "file/new@node-2": "fresh", "file/nil@node-2": ""}
		require.Len(t, list, len(want), "ListStepData after batch = %q, want %q", list, want)
		for k, v := range want {
			require.Equal(t, v, string(list[k]), "ListStepData[%s] after batch = %q, want %q", k, list[k], v)
		}

		must(t, s.DeleteStepData(ctx, "e1"))
		list, err = s.ListStepData(ctx, "e1", "before")
		must(t, err)
		require.Empty(t, list, "DeleteStepData left %d rows", len(list))
		_, err = s.GetStepData(ctx, "e2", "file/motd@node-1", "before")
		require.NoError(t, err, "DeleteStepData of e1 removed e2's data")
	})
}

// stepBatch builds n step values of roughly size bytes each.
func stepBatch(n, size int, tag string) map[string][]byte {
	data := make(map[string][]byte, n)
	pad := bytes.Repeat([]byte("x"), size)
	for i := range n {
		id := fmt.Sprintf("file/f%06d@node-%d", i, i%10)
		data[id] = append([]byte(tag+":"+id+":"), pad...)
	}
	return data
}

func TestStepDataBatch100k(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		const n = 100_000
		first := stepBatch(n, 64, "first")
		must(t, s.PutStepDataBatch(ctx, "big", "before", first))
		// A second batch over half the steps overwrites them.
		second := stepBatch(n/2, 64, "second")
		must(t, s.PutStepDataBatch(ctx, "big", "before", second))

		got, err := s.ListStepData(ctx, "big", "before")
		must(t, err)
		require.Len(t, got, n, "ListStepData returned %d rows, want %d", len(got), n)
		for id, v := range first {
			want := v
			if w, ok := second[id]; ok {
				want = w
			}
			require.Equal(t, want, got[id], "step %s = %q, want %q", id, got[id], want)
		}
	})
}

func TestConcurrentStepDataWriters(t *testing.T) {
	// 20 goroutines write at once through one store, and on SQLite also
	// through a second store on the same file (as a second process would):
	// none may fail with a busy database.
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		dbURL := be.fresh(t)
		stores := []Store{openTest(t, dbURL), openTest(t, dbURL)}
		const writers, each = 20, 25
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				s := stores[w%len(stores)]
				for i := range each {
					step := fmt.Sprintf("w%02d-s%02d", w, i)
					if err := s.PutStepData(ctx, "conc", step, "before", []byte(step)); err != nil {
						errs <- err
						return
					}
					if i%5 == 0 {
						batch := map[string][]byte{step + "-b1": []byte("b"), step + "-b2": []byte("b")}
						if err := s.PutStepDataBatch(ctx, "conc", "report", batch); err != nil {
							errs <- err
							return
						}
					}
					if _, err := s.GetStepData(ctx, "conc", step, "before"); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("concurrent writer: %v", err)
		}
		before, err := stores[0].ListStepData(ctx, "conc", "before")
		must(t, err)
		report, err := stores[1].ListStepData(ctx, "conc", "report")
		must(t, err)
		require.Len(t, before, writers*each, "rows: before %d (want %d), report %d (want %d)", len(before), writers*each, len(report), writers*each/5*2)
		require.Len(t, report, writers*each/5*2, "rows: before %d (want %d), report %d (want %d)", len(before), writers*each, len(report), writers*each/5*2)
		for w := range writers {
			step := fmt.Sprintf("w%02d-s%02d", w, each-1)
			require.Equal(t, step, string(before[step]), "step %s = %q", step, before[step])
		}
	})
}

func BenchmarkStepDataBatch(b *testing.B) {
	const rows = 100_000
	for _, be := range testBackends {
		b.Run(be.name, func(b *testing.B) {
			ctx := context.Background()
			s := freshStore(b, be)
			data := stepBatch(rows, 64, "bench")
			for i := 0; b.Loop(); i++ {
				require.NoError(b, s.PutStepDataBatch(ctx, "bench-"+strconv.Itoa(i), "before", data))
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

func BenchmarkListStepData(b *testing.B) {
	const rows = 100_000
	for _, be := range testBackends {
		b.Run(be.name, func(b *testing.B) {
			ctx := context.Background()
			s := freshStore(b, be)
			must(b, s.PutStepDataBatch(ctx, "bench", "before", stepBatch(rows, 64, "bench")))
			for b.Loop() {
				got, err := s.ListStepData(ctx, "bench", "before")
				require.NoError(b, err, "ListStepData: %d rows, %v", len(got), err)
				require.Len(b, got, rows, "ListStepData: %d rows, %v", len(got), err)
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

func BenchmarkPutStepData(b *testing.B) {
	for _, be := range testBackends {
		b.Run(be.name, func(b *testing.B) {
			ctx := context.Background()
			s := freshStore(b, be)
			value := bytes.Repeat([]byte("x"), 64)
			for i := 0; b.Loop(); i++ {
				require.NoError(b, s.PutStepData(ctx, "bench", strconv.Itoa(i), "before", value))
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
