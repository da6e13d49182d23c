package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func uploadPart(n int, body, content string) UploadPartData {
	sum := sha256.Sum256([]byte(body))
	return UploadPartData{
		UploadPart: model.UploadPart{Part: n, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(body)), Documents: 1, Resources: 1, Name: "request", Line: n},
		Info:       []byte(`{"n":` + string(rune('0'+n)) + `}`), Content: []byte(content),
	}
}

// An upload's parts are kept once each, within their quotas; committing
// copies them into snapshots and drops them; an expired upload is gone.
func TestUploadLifecycle(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		st := &model.Stack{Name: "up"}
		must(t, s.CreateStack(ctx, st))
		later := time.Now().Add(time.Hour)
		u := &model.Upload{StackID: st.ID, ExpiresAt: later}
		must(t, s.CreateUpload(ctx, u))
		require.NotEmpty(t, u.ID)
		err := s.CreateUpload(ctx, &model.Upload{StackID: "nope", ExpiresAt: later})
		wantErr(t, err, ErrNotFound, "nope")

		q := UploadQuota{UploadBytes: 100, TotalBytes: 150}
		p1, created, err := s.PutUploadPart(ctx, u.ID, uploadPart(1, "first part body", "content one"), q, later)
		must(t, err)
		require.True(t, created)
		again, created, err := s.PutUploadPart(ctx, u.ID, uploadPart(1, "first part body", "content one"), q, later.Add(time.Minute))
		must(t, err)
		require.False(t, created, "the same body again is kept once")
		assert.Equal(t, p1.CreatedAt, again.CreatedAt)
		_, _, err = s.PutUploadPart(ctx, u.ID, uploadPart(1, "another body", "x"), q, later)
		wantErr(t, err, ErrConflict, "part 1")
		_, _, err = s.PutUploadPart(ctx, u.ID, uploadPart(2, string(make([]byte, 90)), "y"), q, later)
		var qe *QuotaError
		require.ErrorAs(t, err, &qe)
		assert.False(t, qe.Server)
		assert.Equal(t, int64(15), qe.Held)
		_, _, err = s.PutUploadPart(ctx, u.ID, uploadPart(2, "second", "content two"), q, later)
		must(t, err)

		other := &model.Upload{StackID: st.ID, ExpiresAt: later}
		must(t, s.CreateUpload(ctx, other))
		_, _, err = s.PutUploadPart(ctx, other.ID, uploadPart(1, string(make([]byte, 95)), "z"), UploadQuota{UploadBytes: 100, TotalBytes: 100}, later)
		require.ErrorAs(t, err, &qe)
		assert.True(t, qe.Server, "every open upload together")

		got, err := s.GetUpload(ctx, u.ID)
		must(t, err)
		require.Len(t, got.Parts, 2)
		assert.Equal(t, int64(len("first part body")+len("second")), got.Bytes)
		assert.WithinDuration(t, later, got.ExpiresAt, time.Second, "each part moves the expiry")
		info, err := s.UploadPartInfo(ctx, u.ID, 2)
		must(t, err)
		assert.Equal(t, `{"n":2}`, string(info))

		_, _, err = s.CommitUpload(ctx, u.ID, got.Parts[:1], "package-part", "package", []byte(`{"parts":[]}`), nil)
		wantErr(t, err, ErrConflict, "2 parts, 1 were checked")
		hash, summary, err := s.CommitUpload(ctx, u.ID, got.Parts, "package-part", "package", []byte(`{"parts":["a","b"]}`), []byte(`{"resources":2}`))
		must(t, err)
		assert.Equal(t, `{"resources":2}`, string(summary))
		snap, err := s.GetSnapshot(ctx, hash)
		must(t, err)
		assert.Equal(t, "package", snap.Kind)
		part, err := s.GetSnapshot(ctx, got.Parts[1].Snapshot)
		must(t, err)
		assert.Equal(t, "package-part", part.Kind)
		assert.Equal(t, "content two", string(part.Content))
		used, err := s.GetUpload(ctx, u.ID)
		must(t, err)
		assert.Equal(t, hash, used.SnapshotHash)
		assert.Empty(t, used.Parts, "the parts' rows go once they are snapshots")
		h2, s2, err := s.CommitUpload(ctx, u.ID, nil, "package-part", "package", nil, nil)
		must(t, err)
		assert.Equal(t, hash, h2)
		assert.Equal(t, string(summary), string(s2))
		_, _, err = s.PutUploadPart(ctx, u.ID, uploadPart(3, "late", "l"), q, later)
		wantErr(t, err, ErrConflict, "used")

		gone := &model.Upload{StackID: st.ID, ExpiresAt: time.Now().Add(-time.Minute)}
		must(t, s.CreateUpload(ctx, gone))
		_, _, err = s.PutUploadPart(ctx, gone.ID, uploadPart(1, "b", "c"), q, later)
		wantErr(t, err, ErrGone, "expired")
		_, _, err = s.CommitUpload(ctx, gone.ID, nil, "package-part", "package", []byte("{}"), nil)
		wantErr(t, err, ErrGone)
		must(t, s.DeleteUpload(ctx, other.ID))
		wantErr(t, s.DeleteUpload(ctx, other.ID), ErrNotFound)

		// Pruning drops an expired upload's parts at once and the upload
		// itself once it has been gone for longer than keep.
		_, err = s.PruneUploads(ctx, time.Now(), time.Hour)
		must(t, err)
		_, err = s.GetUpload(ctx, gone.ID)
		must(t, err)
		_, err = s.GetUpload(ctx, u.ID)
		must(t, err)
		_, err = s.PruneUploads(ctx, time.Now().Add(30*time.Minute), 20*time.Minute)
		must(t, err)
		_, err = s.GetUpload(ctx, gone.ID)
		wantErr(t, err, ErrNotFound)
		_, err = s.GetUpload(ctx, u.ID)
		must(t, err)

		must(t, s.DeleteStack(ctx, st.ID))
		_, err = s.GetUpload(ctx, u.ID)
		wantErr(t, err, ErrNotFound) // uploads go with their stack
	})
}
