package prepare

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFaultTolerance(t *testing.T) {
	tests := []struct {
		spec    string
		nodes   int
		want    int
		wantErr bool
	}{
		{"2", 5, 2, false},
		{"0", 5, 0, false},
		{"9", 5, 5, false},
		{"-1", 5, 4, false},
		{"-7", 5, 0, false},
		{"30%", 10, 3, false},
		{"34%", 3, 1, false},
		{"100%", 4, 4, false},
		{" 50 % ", 3, 1, false},
		{"150%", 3, 0, true},
		{"some", 3, 0, true},
	}
	for _, tt := range tests {
		got, err := FaultTolerance(tt.spec, tt.nodes)
		require.Equal(t, tt.wantErr, err != nil, "FaultTolerance(%q, %d) = %d, %v; want %d (error %v)", tt.spec, tt.nodes, got, err, tt.want, tt.wantErr)
		assert.Equal(t, tt.want, got, "FaultTolerance(%q, %d) = %d, %v; want %d (error %v)", tt.spec, tt.nodes, got, err, tt.want, tt.wantErr)
	}
}
