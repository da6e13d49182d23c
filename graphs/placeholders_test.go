package graphs

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestFindPlaceholders(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"/etc/fuel/cluster/{CLUSTER_ID}/node.yaml", []string{"CLUSTER_ID"}},
		{"rsync://{MASTER_IP}:/puppet/{OPENSTACK_VERSION}/modules/", []string{"MASTER_IP", "OPENSTACK_VERSION"}},
		{"{SETTINGS.public_ssl.hostname}", []string{"SETTINGS.public_ssl.hostname"}},
		{"echo ${HOME} %{::fqdn} {{ .deps.a }} {{X}} {lower} {A-B}", nil},
		{"{UNKNOWN_2}", []string{"UNKNOWN_2"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got []string
			for _, ph := range findPlaceholders(tt.in) {
				got = append(got, ph.name+dotted(ph.path))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

const placeholderGraph = `- id: upload_node_configuration
  type: exec
  roles: ['*']
  test_pre:
    cmd: test -f /etc/fuel/cluster/{CLUSTER_ID}/node.yaml
  parameters:
    argv: [rsync, -a, 'rsync://{MASTER_IP}:/puppet/{OPENSTACK_VERSION}/modules/', /etc/puppet/modules/]
    env: {CN: '{CN_HOSTNAME}', REGION: '{SETTINGS.region.value}'}
    cwd: /var/lib/fuel/keys/{CLUSTER_ID}/nova
`

func TestResolvePlaceholders(t *testing.T) {
	g, err := ParseGraph(Options{}, Source{Name: "tasks.yaml", Data: []byte(placeholderGraph)})
	require.NoError(t, err)
	cluster := &model.Cluster{ID: "7", Settings: map[string]any{
		"master_ip":  "10.20.0.2",
		"public_ssl": map[string]any{"hostname": map[string]any{"value": "public.fuel.local"}},
		"region":     map[string]any{"value": "RegionOne"},
	}}
	release := &model.Release{ID: "liberty", Version: "liberty-8.0"}
	out, err := ResolvePlaceholders(g, ValuesFor(cluster, release))
	require.NoError(t, err)
	task := out.Tasks[0]
	assert.Equal(t, []any{"rsync", "-a", "rsync://10.20.0.2:/puppet/liberty-8.0/modules/", "/etc/puppet/modules/"}, task.Parameters["argv"])
	assert.Equal(t, map[string]any{"CN": "public.fuel.local", "REGION": "RegionOne"}, task.Parameters["env"])
	assert.Equal(t, "/var/lib/fuel/keys/7/nova", task.Parameters["cwd"])
	life, err := TaskLifecycle(task)
	require.NoError(t, err)
	assert.Equal(t, "test -f /etc/fuel/cluster/7/node.yaml", life.TestPre.Cmd)

	// The input graph is left as it was.
	assert.Equal(t, "rsync://{MASTER_IP}:/puppet/{OPENSTACK_VERSION}/modules/", g.Tasks[0].Parameters["argv"].([]any)[2])
	assert.Contains(t, g.Tasks[0].Extra[FieldTestPre].(map[string]any)["cmd"], "{CLUSTER_ID}")

	// Missing values: every one is reported, naming the task and the field.
	_, err = ResolvePlaceholders(g, ValuesFor(&model.Cluster{ID: "7"}, nil))
	require.Error(t, err)
	for _, want := range []string{
		`task "upload_node_configuration": parameters.argv[2]: placeholder {MASTER_IP}: cluster "7" has no setting master_ip`,
		`parameters.env.CN: placeholder {CN_HOSTNAME}`,
		`parameters.env.REGION: placeholder {SETTINGS.region.value}`,
		"tasks.yaml:1:3",
	} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = ResolvePlaceholders(g, ValuesFor(cluster, &model.Release{ID: "r"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "{OPENSTACK_VERSION}: the cluster's release has no version")
}

func TestUnknownPlaceholderIsAValidationError(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		line int
		path string
		msg  string
	}{
		{"unknown name", "  parameters: {cmd: 'echo {CLUSTERID}'}\n", 4, "[0].parameters.cmd", `unknown placeholder {CLUSTERID}; did you mean "CLUSTER_ID"?`},
		{"nested", "  parameters:\n    cmd: echo\n    env: {A: x, B: '{MASTERIP}'}\n", 6, "[0].parameters.env.B", "unknown placeholder {MASTERIP}"},
		{"settings without a path", "  parameters: {cmd: 'echo {SETTINGS}'}\n", 4, "[0].parameters.cmd", "needs a path"},
		{"path on a plain name", "  parameters: {cmd: 'echo {CLUSTER_ID.x}'}\n", 4, "[0].parameters.cmd", "takes no path"},
		{"in test_post", "  parameters: {cmd: echo}\n  test_post: {cmd: 'check {NODE_IP}'}\n", 5, "[0].test_post.cmd", "unknown placeholder {NODE_IP}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := "- id: a\n  type: shell\n  roles: ['*']\n" + tt.doc
			_, err := ParseGraph(Options{}, Source{Name: "graph.yaml", Data: []byte(doc)})
			var errs Errors
			require.True(t, errors.As(err, &errs), "%v", err)
			require.Len(t, errs, 1, "%v", err)
			assert.Equal(t, "graph.yaml", errs[0].Pos.Source)
			assert.Equal(t, tt.line, errs[0].Pos.Line)
			assert.Equal(t, tt.path, errs[0].Path)
			assert.Contains(t, errs[0].Message, tt.msg)
		})
	}
}

func TestDeclaredTypes(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"bare list", "- {id: a}\n", nil},
		{"graph document", "apiVersion: cairn/v1\nkind: Graph\nmetadata: {type: upgrade}\ntasks: []\n", []string{"upgrade"}},
		{"graph without a type", "kind: Graph\ntasks: []\n", nil},
		{"fuel graph object", `{"type": "provision", "name": "P", "tasks": []}`, []string{"provision"}},
		{"several documents", "- {id: a}\n---\nkind: Graph\nmetadata: {type: upgrade}\n---\nkind: graph\nmetadata: {type: upgrade}\n---\nkind: Graph\nmetadata: {type: default}\n", []string{"upgrade", "default"}},
		{"a package", "apiVersion: cairn/v1\nkind: File\nmetadata: {name: x}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DeclaredTypes([]byte(tt.doc))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := DeclaredTypes([]byte("a: [\n"))
	assert.Error(t, err)
}
