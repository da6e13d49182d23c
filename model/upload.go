package model

import "time"

// Upload is a package sent to a stack in parts (POST
// /v1/stacks/{id}/uploads), for a package larger than one request may be.
// Each part holds whole documents and is checked when it arrives; an
// apply or dry-run that names the upload ({"upload": id}) checks the
// parts together and runs them as one package. An upload expires
// (ExpiresAt, moved on by each part) unless it is used first.
type Upload struct {
	ID        string    `json:"id" yaml:"id"`
	StackID   string    `json:"stackId" yaml:"stackId"`
	CreatedAt time.Time `json:"createdAt" yaml:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt" yaml:"expiresAt"`
	// SnapshotHash is set once an apply or dry-run took the upload: its
	// package is then that snapshot, the parts are gone and no part may
	// be added.
	SnapshotHash string       `json:"snapshotHash,omitempty" yaml:"snapshotHash,omitempty"`
	Parts        []UploadPart `json:"parts" yaml:"parts"`
	// Bytes and Resources count the parts together.
	Bytes     int64 `json:"bytes" yaml:"bytes"`
	Resources int   `json:"resources" yaml:"resources"`
	// Limits are the server's bounds on uploads.
	Limits *UploadLimits `json:"limits,omitempty" yaml:"limits,omitempty"`
}

// UploadPart is one part of an upload: its number (the package is its
// parts in the order of their numbers), the SHA-256 of its body (sending
// the same body again changes nothing), its size and what it holds, and
// where it sits in the stream it was cut from (Name, Line, Document: the
// positions of its errors and of its resources count from there).
type UploadPart struct {
	Part      int    `json:"part" yaml:"part"`
	SHA256    string `json:"sha256" yaml:"sha256"`
	Bytes     int64  `json:"bytes" yaml:"bytes"`
	Documents int    `json:"documents" yaml:"documents"`
	Resources int    `json:"resources" yaml:"resources"`
	// Kinds counts the kinds it defines (the parts after it may use them).
	Kinds     int       `json:"kinds,omitempty" yaml:"kinds,omitempty"`
	Name      string    `json:"name" yaml:"name"`
	Line      int       `json:"line,omitempty" yaml:"line,omitempty"`
	Document  int       `json:"document,omitempty" yaml:"document,omitempty"`
	CreatedAt time.Time `json:"createdAt" yaml:"createdAt"`
	// Snapshot is the hash the part's content is kept under once the
	// upload is used (the store's, not shown).
	Snapshot string `json:"-" yaml:"-"`
}

// UploadLimits are a server's bounds on uploads: the bytes of one part
// (its request body limit), of one upload's parts together, and of every
// open upload together (the server's quota); the highest part number; and
// how long an upload lives after its last part.
type UploadLimits struct {
	PartBytes   int64  `json:"partBytes" yaml:"partBytes"`
	UploadBytes int64  `json:"uploadBytes" yaml:"uploadBytes"`
	QuotaBytes  int64  `json:"quotaBytes" yaml:"quotaBytes"`
	Parts       int    `json:"parts" yaml:"parts"`
	ExpiresIn   string `json:"expiresIn" yaml:"expiresIn"`
}
