package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGrantHolds(t *testing.T) {
	prod := map[string]string{"env": "prod", "team": "web"}
	for _, tc := range []struct {
		name   string
		g      Grant
		want   Role
		kind   ScopeKind
		id     string
		labels map[string]string
		holds  bool
	}{
		{"unscoped holds everywhere", Grant{Role: RoleViewer}, RoleViewer, "", "", nil, true},
		{"deployer implies planner", Grant{Role: RoleDeployer, Stacks: []string{"web"}}, RolePlanner, ScopeStack, "web", nil, true},
		{"planner does not imply deployer", Grant{Role: RolePlanner}, RoleDeployer, ScopeStack, "web", nil, false},
		{"approver implies viewer only", Grant{Role: RoleApprover}, RolePlanner, ScopeStack, "web", nil, false},
		{"admin implies graph-author", Grant{Role: RoleAdmin, Clusters: []string{"c"}}, RoleGraphAuthor, ScopeCluster, "c", nil, true},
		{"ids are per kind", Grant{Role: RoleViewer, Stacks: []string{"c"}}, RoleViewer, ScopeCluster, "c", nil, false},
		{"scoped grant never holds on no resource", Grant{Role: RoleAdmin, Stacks: []string{"web"}}, RoleAdmin, "", "", nil, false},
		{"selector matches every pair", Grant{Role: RoleViewer, Selector: "env=prod,team=web"}, RoleViewer, ScopeStack, "x", prod, true},
		{"selector pairs are ANDed", Grant{Role: RoleViewer, Selector: "env=prod,team=db"}, RoleViewer, ScopeStack, "x", prod, false},
		{"selector needs labels", Grant{Role: RoleViewer, Selector: "env=prod"}, RoleViewer, ScopeRelease, "x", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.holds, tc.g.Holds(tc.want, tc.kind, tc.id, tc.labels))
		})
	}
}

func TestParseSelector(t *testing.T) {
	sel, err := ParseSelector("env=prod, team=web")
	require.NoError(t, err)
	assert.Equal(t, Selector{"env": "prod", "team": "web"}, sel)
	for _, bad := range []string{"", "env", "env=", "=prod", "env=pr od", "a=b,,c=d"} {
		_, err := ParseSelector(bad)
		assert.Error(t, err, "%q", bad)
	}
	assert.Error(t, CheckLabels(map[string]string{"k": "v;rm -rf"}))
}
