package main

import "testing"

// Offline validation reads the kinds directory as the server does: a
// package of derived kinds fails without it and passes with
// CAIRN_KINDS_DIR or --kinds-dir.
func TestValidateReadsTheKindsDir(t *testing.T) {
	const pkg = "../../examples/platform/s1.yaml"
	tests := []struct {
		name string
		env  string
		args []string
		code int
		out  []string
		err  []string
	}{
		{"without kinds", "", []string{"validate", pkg}, 1, nil, []string{`unknown kind "Bucket"`}},
		{"CAIRN_KINDS_DIR", platformKinds, []string{"validate", pkg}, 0, []string{"valid"}, nil},
		{"--kinds-dir", "", []string{"validate", "--kinds-dir", platformKinds, pkg}, 0, []string{"valid"}, nil},
		{"bad kinds dir", "", []string{"validate", "--kinds-dir", "/nonexistent", pkg}, 1, nil, []string{"/nonexistent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CAIRN_KINDS_DIR", tt.env)
			runCairn(t, tt.args...).expect(t, tt.code).has(t, tt.out...).hasErr(t, tt.err...)
		})
	}
}
