package model

import (
	"encoding/json"
	"testing"
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
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Fatalf("marshal = %s, want %s", b, tt.want)
			}
			var back StackResource
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if (back.Associations == nil) != (tt.in.Associations == nil) || len(back.Associations) != len(tt.in.Associations) {
				t.Fatalf("round trip lost associations: %#v", back.Associations)
			}
		})
	}
}
