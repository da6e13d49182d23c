package prepare_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
)

// A run limited to some resources keeps them and what they depend on,
// transitively and through any-of groups, in package order.
func TestLimitSteps(t *testing.T) {
	steps := []*model.Step{
		{ID: "directory/etc", Kind: "directory", Name: "etc"},
		{ID: "file/motd", Kind: "file", Name: "motd", Deps: []string{"directory/etc"}},
		{ID: "file/issue", Kind: "file", Name: "issue"},
		{ID: "exec/reload", Kind: "exec", Name: "reload", Deps: []string{"file/motd"}},
		{ID: "file/n1@web", Kind: "file", Name: "n1", Node: "web", AnyOf: [][]string{{"file/issue"}}},
	}
	ids := func(ss []*model.Step) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.ID)
		}
		return out
	}
	tests := []struct {
		name string
		only []string
		want []string
	}{
		{"a file alone", []string{"file/issue@"}, []string{"file/issue"}},
		{"a file and its directory", []string{"file/motd@"}, []string{"directory/etc", "file/motd"}},
		{"transitively", []string{"exec/reload@"}, []string{"directory/etc", "file/motd", "exec/reload"}},
		{"on a node, through any-of", []string{"file/n1@web"}, []string{"file/issue", "file/n1@web"}},
		{"a key of the wrong node", []string{"file/n1@db"}, nil},
		{"a resource no longer in the package", []string{"file/gone@"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ids(prepare.LimitSteps(steps, tt.only)))
		})
	}
	assert.Len(t, steps, 5, "the package's steps are left as they were")
}
