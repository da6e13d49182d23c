package model

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStackResourceAssociationsNilVersusEmpty(t *testing.T) {
	tests := []struct {
		name string
		in   StackResource
		want string
	}{
		{"never had any", StackResource{Kind: "Label", ID: "1", PkgName: "l"}, `{"kind":"Label","id":"1","pkgName":"l"}`},
		{"removed", StackResource{Kind: "Bucket", ID: "2", PkgName: "b", Associations: []Association{}}, `{"kind":"Bucket","id":"2","pkgName":"b","associations":[]}`},
		{"some", StackResource{Kind: "Bucket", ID: "2", PkgName: "b", Associations: []Association{{Kind: "Label", PkgName: "l"}}}, `{"kind":"Bucket","id":"2","pkgName":"b","associations":[{"kind":"Label","pkgName":"l"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.want, string(b), "marshal = %s, want %s", b, tt.want)
			var back StackResource
			require.NoError(t, json.Unmarshal(b, &back))
			require.Equal(t, tt.in.Associations == nil, back.Associations == nil, "round trip lost associations: %#v", back.Associations)
			require.Len(t, back.Associations, len(tt.in.Associations), "round trip lost associations")
		})
	}
}
