package store

import "context"

// driftCheckKind binds a sealed drift check to its stack's row.
const driftCheckKind = "drift-check"

// PutDriftCheck seals the check: its diffs may show what a resource holds.
func (s *sealedStore) PutDriftCheck(ctx context.Context, stackID string, check []byte) error {
	return s.Store.PutDriftCheck(ctx, stackID, s.seal(stackID, "", driftCheckKind, check))
}

// GetDrift opens the last check; one stored before sealing was enabled is
// read as it is.
func (s *sealedStore) GetDrift(ctx context.Context, stackID string) (*DriftRecord, error) {
	rec, err := s.Store.GetDrift(ctx, stackID)
	if err != nil || len(rec.LastCheck) == 0 {
		return rec, err
	}
	if rec.LastCheck, err = s.open(stackID, "", driftCheckKind, rec.LastCheck); err != nil {
		return nil, err
	}
	return rec, nil
}
