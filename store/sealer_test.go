package store

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const secretFile = "root:$6$s3cr3t-hash:19000:0:99999:7:::"

func TestSealerKeepsPlaintextOutOfTheDatabase(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		dbURL := be.fresh(t)
		plain := openTest(t, dbURL)
		key := []byte("0123456789abcdef0123456789abcdef")
		s, err := WithSealer(plain, key)
		must(t, err)

		must(t, s.PutStepData(ctx, "e1", "file/shadow@n1", "before", []byte(secretFile)))
		must(t, s.PutStepDataBatch(ctx, "e1", "before", map[string][]byte{
			"file/a@n1": []byte(secretFile + "-a"),
			"file/b@n1": []byte(secretFile + "-b"),
			"file/e@n1": nil,
		}))

		// Through the sealer: plaintext.
		got, err := s.GetStepData(ctx, "e1", "file/shadow@n1", "before")
		must(t, err)
		require.Equal(t, secretFile, string(got), "GetStepData = %q", got)
		list, err := s.ListStepData(ctx, "e1", "before")
		must(t, err)
		want := map[string]string{"file/shadow@n1": secretFile, "file/a@n1": secretFile + "-a", "file/b@n1": secretFile + "-b", "file/e@n1": ""}
		require.Len(t, list, len(want), "ListStepData")
		for k, v := range want {
			require.Equal(t, v, string(list[k]), "ListStepData[%s] = %q, want %q", k, list[k], v)
		}

		// In the database: no plaintext, neither in the column nor in the
		// file's bytes.
		rows, err := be.raw(t, dbURL).Query(`SELECT data FROM step_data`)
		must(t, err)
		n := 0
		for rows.Next() {
			var raw []byte
			must(t, rows.Scan(&raw))
			n++
			require.False(t, bytes.Contains(raw, []byte("s3cr3t")), "stored value holds the plaintext: %q", raw)
			require.True(t, bytes.HasPrefix(raw, sealedPrefix), "stored value is not sealed: %q", raw)
		}
		must(t, rows.Err())
		_ = rows.Close()
		require.Equal(t, 4, n, "%d rows stored, want 4", n)
		// The store underneath returns the sealed bytes.
		sealed, err := plain.GetStepData(ctx, "e1", "file/shadow@n1", "before")
		must(t, err)
		require.False(t, bytes.Contains(sealed, []byte("s3cr3t")), "unsealed read through the plain store")
		if be.name == "sqlite" {
			must(t, plain.Close()) // checkpoints the WAL into the file
			path := strings.TrimPrefix(dbURL, "sqlite://")
			for _, f := range []string{path, path + "-wal"} {
				b, err := os.ReadFile(f)
				if err != nil {
					require.True(t, os.IsNotExist(err), "%v", err)
				}
				require.False(t, bytes.Contains(b, []byte("s3cr3t")), "%s holds the plaintext", filepath.Base(f))
			}
		}
	})
}

func TestSealerRefusesWrongKeyAndMovedValues(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		dbURL := be.fresh(t)
		plain := openTest(t, dbURL)
		s, err := WithSealer(plain, []byte("the right key, sixteen+ bytes"))
		must(t, err)
		must(t, s.PutStepData(ctx, "e1", "step-a", "before", []byte(secretFile)))

		other, err := WithSealer(plain, []byte("another key, sixteen+ bytes!"))
		must(t, err)
		_, err = other.GetStepData(ctx, "e1", "step-a", "before")
		wantErr(t, err, ErrUnsealable, "step-a")
		_, err = other.ListStepData(ctx, "e1", "before")
		wantErr(t, err, ErrUnsealable)

		// A sealed value copied to another step does not open there.
		sealed, err := plain.GetStepData(ctx, "e1", "step-a", "before")
		must(t, err)
		must(t, plain.PutStepData(ctx, "e1", "step-b", "before", sealed))
		_, err = s.GetStepData(ctx, "e1", "step-b", "before")
		wantErr(t, err, ErrUnsealable, "step-b")
		// Nor does a tampered one.
		tampered := bytes.Clone(sealed)
		tampered[len(tampered)-1] ^= 1
		must(t, plain.PutStepData(ctx, "e1", "step-a", "before", tampered))
		_, err = s.GetStepData(ctx, "e1", "step-a", "before")
		wantErr(t, err, ErrUnsealable)
		must(t, plain.PutStepData(ctx, "e1", "step-a", "before", sealedPrefix))
		_, err = s.GetStepData(ctx, "e1", "step-a", "before")
		wantErr(t, err, ErrUnsealable)

		// Values written before sealing was turned on still read.
		must(t, plain.PutStepData(ctx, "e0", "old", "before", []byte("written unsealed")))
		got, err := s.GetStepData(ctx, "e0", "old", "before")
		must(t, err)
		require.Equal(t, "written unsealed", string(got), "unsealed value read as %q", got)
		// Everything else passes through to the store.
		must(t, s.CreateStack(ctx, newTestStack("through")))
		_, err = s.GetStepData(ctx, "e1", "missing", "before")
		wantErr(t, err, ErrNotFound)
	})
}

func TestWithSealerRejectsShortKeys(t *testing.T) {
	for _, key := range [][]byte{nil, []byte("short")} {
		_, err := WithSealer(nil, key)
		require.Error(t, err, "WithSealer(%q): %v", key, err)
		require.Contains(t, err.Error(), "at least 16", "WithSealer(%q): %v", key, err)
	}
}
