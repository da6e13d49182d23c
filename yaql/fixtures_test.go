package yaql

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/model"
)

// fuelLibraryDir is where the fuel-library task files are: ../shared beside
// the checkout, as CI has it.
func fuelLibraryDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "testdata", "fuel-library")
	if d := os.Getenv("CAIRN_FUEL_LIBRARY"); d != "" {
		dir = d
	}
	if _, err := os.Stat(dir); err != nil {
		requireOrSkip(t, "fuel-library task files", err)
	}
	return dir
}

// requireOrSkip fails when CAIRN_REQUIRE_ALL is set (CI), else skips.
func requireOrSkip(t *testing.T, what string, err error) {
	t.Helper()
	if os.Getenv("CAIRN_REQUIRE_ALL") != "" {
		t.Fatalf("%s is required here (CAIRN_REQUIRE_ALL is set): %v", what, err)
	}
	t.Skipf("%s unavailable: %v", what, err)
}

// fuelExpr is one yaql expression of fuel-library and where it is.
type fuelExpr struct {
	File, Path, Source string
}

// fuelExpressions extracts every {yaql_exp: …} of fuel-library's task files:
// conditions, strategy amounts, parameter values, cross-dependencies.
func fuelExpressions(t *testing.T) []fuelExpr {
	t.Helper()
	dir := fuelLibraryDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	sort.Strings(files)
	var out []fuelExpr
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var doc yaml.Node
		require.NoError(t, yaml.Unmarshal(raw, &doc), f)
		// Walk the nodes, not decoded maps: fuel-library repeats a key here
		// and there, and every expression counts.
		var walk func(n *yaml.Node, path string)
		walk = func(n *yaml.Node, path string) {
			switch n.Kind {
			case yaml.DocumentNode:
				for _, c := range n.Content {
					walk(c, path)
				}
			case yaml.AliasNode:
				walk(n.Alias, path)
			case yaml.MappingNode:
				for i := 0; i+1 < len(n.Content); i += 2 {
					k, v := n.Content[i], n.Content[i+1]
					if v.Kind == yaml.AliasNode {
						v = v.Alias
					}
					if k.Value == "yaql_exp" {
						require.Equal(t, yaml.ScalarNode, v.Kind, "%s %s: yaql_exp is not a string", f, path)
						out = append(out, fuelExpr{File: filepath.Base(f), Path: path, Source: v.Value})
						continue
					}
					walk(v, path+"."+k.Value)
				}
			case yaml.SequenceNode:
				for i, c := range n.Content {
					walk(c, path+"["+strconv.Itoa(i)+"]")
				}
			}
		}
		walk(&doc, "")
	}
	return out
}

// fixtureCluster is a realistic Fuel cluster: a controller, a compute and a
// Ceph OSD node, settings in Fuel's editable form.
func fixtureCluster() *model.Cluster {
	v := func(x any) map[string]any { return map[string]any{"value": x} }
	settings := map[string]any{
		"common": map[string]any{
			"debug":            v(false),
			"use_syslog":       v(true),
			"region":           v("RegionOne"),
			"workers_max":      v(16),
			"auto_assign_fips": v(false),
		},
		"storage": map[string]any{
			"metadata":       map[string]any{"label": "Storage", "weight": 60},
			"objects_ceph":   v(false),
			"images_ceph":    v(true),
			"volumes_ceph":   v(true),
			"ephemeral_ceph": v(false),
			"osd_pool_size":  v("3"),
		},
		"ceilometer": map[string]any{"enabled": v(true), "db_password": v("ceilo-secret")},
		"ironic":     map[string]any{"enabled": v(false)},
		"murano-cfapi": map[string]any{
			"enabled": v(false),
		},
		"public_ssl": map[string]any{
			"horizon":     v(true),
			"services":    v(true),
			"cert_source": v("self_signed"),
			"hostname":    v("public.fuel.local"),
			"cert_data":   v(map[string]any{"content": "CERT"}),
		},
		"neutron_advanced_configuration": map[string]any{"neutron_l3_ha": v(false), "neutron_dvr": v(false)},
		"repo_setup": map[string]any{
			"repo_type": v("fuel"),
			"repos":     v([]any{map[string]any{"name": "ubuntu", "uri": "http://archive.ubuntu.com/ubuntu", "priority": nil}}),
		},
		"provision": map[string]any{
			"name":     v("ubuntu"),
			"method":   v("image"),
			"packages": v("acl\nanacron\nbash"),
		},
		"rabbit":                           map[string]any{"password": v("rabbit-secret"), "user": v("nova")},
		"mysql":                            map[string]any{"root_password": v("db-secret"), "wsrep_password": v("w")},
		"keystone":                         map[string]any{"admin_token": v("token")},
		"glance":                           map[string]any{"user_password": v("g")},
		"heat":                             map[string]any{"enabled": v(true)},
		"horizon":                          map[string]any{"secret_key": v("h")},
		"swift":                            map[string]any{"user_password": v("s")},
		"access":                           map[string]any{"user": v("admin"), "password": v("admin"), "tenant": v("admin"), "email": v("admin@localhost")},
		"cgroups":                          map[string]any{"metadata": map[string]any{"enabled": false}},
		"aodh":                             map[string]any{"db_password": v("a")},
		"murano":                           map[string]any{"enabled": v(false)},
		"cinder":                           map[string]any{"db_password": v("c"), "user_password": v("cu")},
		"nova":                             map[string]any{"db_password": v("n"), "state_path": v("/var/lib/nova")},
		"sahara":                           map[string]any{"enabled": v(false)},
		"mongo":                            map[string]any{"enabled": v(false)},
		"external_mongo":                   map[string]any{"hosts_ip": v(""), "mongo_replset": v("")},
		"external_ntp":                     map[string]any{"ntp_list": v([]any{"0.pool.ntp.org", "1.pool.ntp.org"})},
		"external_dns":                     map[string]any{"dns_list": v([]any{"8.8.8.8"})},
		"configuration":                    map[string]any{"nova_config": map[string]any{}},
		"murano_settings":                  map[string]any{"murano_repo_url": v("http://storage.apps.openstack.org/")},
		"nova_quota":                       false,
		"operator_user":                    map[string]any{"name": v("fueladmin"), "password": v("op")},
		"service_user":                     map[string]any{"name": v("fuel"), "password": v("svc")},
		"puppet":                           map[string]any{"modules": v("rsync://10.20.0.2:/puppet/modules/")},
		"syslog":                           map[string]any{"syslog_server": v(""), "syslog_port": v("514")},
		"base_syslog":                      map[string]any{"syslog_server": "10.20.0.2", "syslog_port": "514"},
		"test_vm_image":                    map[string]any{"os_name": "cirros", "img_name": "TestVM"},
		"workloads_collector":              map[string]any{"enabled": v(true), "username": v("fuel_stats_user")},
		"mu_upgrade":                       map[string]any{"enabled": v(false), "repos": v("mos,mos-updates")},
		"mp":                               []any{map[string]any{"point": "1", "weight": "1"}, map[string]any{"point": "2", "weight": "2"}},
		"vms_conf":                         []any{},
		"deployment_mode":                  "ha_compact",
		"libvirt_type":                     "kvm",
		"master_ip":                        "10.20.0.2",
		"use_cow_images":                   true,
		"resume_guests_state_on_host_boot": true,
		"plugins":                          []any{},
		// Fuel's serializer wrote it so: {value: …} at the top.
		"deployed_before": map[string]any{"value": false},
		"quantum":         true,
		"quantum_settings": map[string]any{
			"L2":       map[string]any{"segmentation_type": "vlan"},
			"keystone": map[string]any{"admin_password": "q"},
		},
		"network_metadata": map[string]any{
			"vips": map[string]any{
				"management": map[string]any{"ipaddr": "10.20.0.2", "node_roles": []any{"controller", "primary-controller"}},
				"public":     map[string]any{"ipaddr": "172.16.0.2", "node_roles": []any{"controller", "primary-controller"}},
				"vrouter":    map[string]any{"ipaddr": "10.20.0.1", "node_roles": []any{"controller", "primary-controller"}},
			},
		},
	}
	netRoles := func(ip string) map[string]any {
		return map[string]any{"mgmt/messaging": ip, "mgmt/database": ip, "ex": nil}
	}
	return &model.Cluster{
		ID: "env-1", Name: "Fuel lab", ReleaseID: "liberty-9.0",
		Settings: settings,
		Nodes: []model.Node{
			{ID: "1", Name: "node-1", Roles: []string{"primary-controller"}, Attributes: map[string]any{
				"fqdn": "node-1.domain.tld", "network_roles": netRoles("10.20.0.3"),
				"node_volumes": []any{map[string]any{"id": "sda", "size": 10240}}, "network_scheme": map[string]any{"version": "1.1", "transformations": []any{map[string]any{"action": "add-br", "name": "br-mgmt"}}, "endpoints": map[string]any{"br-mgmt": map[string]any{"IP": []any{"10.20.0.3/24"}}}},
			}},
			{ID: "2", Name: "node-2", Roles: []string{"compute"}, Attributes: map[string]any{
				"fqdn": "node-2.domain.tld", "network_roles": netRoles("10.20.0.4"),
				"node_volumes": []any{map[string]any{"id": "sda", "size": 10240}}, "network_scheme": map[string]any{"version": "1.1", "transformations": []any{map[string]any{"action": "add-br", "name": "br-mgmt"}}, "endpoints": map[string]any{"br-mgmt": map[string]any{"IP": []any{"10.20.0.4/24"}}}},
			}},
			{ID: "3", Name: "node-3", Roles: []string{"ceph-osd"}, Attributes: map[string]any{
				"fqdn": "node-3.domain.tld", "network_roles": netRoles("10.20.0.5"),
				"node_volumes": []any{map[string]any{"id": "sda", "size": 10240}}, "network_scheme": map[string]any{"version": "1.1", "transformations": []any{map[string]any{"action": "add-br", "name": "br-mgmt"}}, "endpoints": map[string]any{"br-mgmt": map[string]any{"IP": []any{"10.20.0.5/24"}}}},
			}},
		},
	}
}

// changedCluster is fixtureCluster after an operator's changes: debug on,
// a new public hostname, Ceph for objects, l3 HA, and a fourth node.
func changedCluster() *model.Cluster {
	c := fixtureCluster()
	s := c.Settings
	s["common"].(map[string]any)["debug"] = map[string]any{"value": true}
	s["deployed_before"] = map[string]any{"value": true}
	s["public_ssl"].(map[string]any)["hostname"] = map[string]any{"value": "cloud.example.com"}
	s["storage"].(map[string]any)["objects_ceph"] = map[string]any{"value": true}
	s["neutron_advanced_configuration"].(map[string]any)["neutron_l3_ha"] = map[string]any{"value": true}
	s["plugins"] = []any{map[string]any{"name": "lma", "version": "1.0"}}
	s["nova_quota"] = true
	s["external_ntp"] = map[string]any{"ntp_list": map[string]any{"value": []any{"ntp.example.com"}}}
	c.Nodes = append(c.Nodes, model.Node{ID: "4", Name: "node-4", Roles: []string{"compute", "cinder"}, Attributes: map[string]any{
		"fqdn": "node-4.domain.tld", "network_roles": map[string]any{"mgmt/messaging": "10.20.0.6"},
	}})
	return c
}

// fixture is one evaluation's input, named for failure messages.
type fixture struct {
	Name string
	In   Input
}

// fixtures are, for a controller, a compute and a Ceph OSD node: a first
// run (no previous data), a second run after changes, and a second run
// with nothing changed.
func fixtures(t *testing.T) []fixture {
	t.Helper()
	rel := &model.Release{ID: "liberty-9.0", Name: "Liberty on Ubuntu 14.04", Version: "liberty-9.0"}
	before, after := fixtureCluster(), changedCluster()
	var out []fixture
	for _, id := range []string{"1", "2", "3"} {
		d0, err := DeploymentData(before, rel, before.Node(id))
		require.NoError(t, err)
		d1, err := DeploymentData(after, rel, after.Node(id))
		require.NoError(t, err)
		role := before.Node(id).Roles[0]
		out = append(out,
			fixture{role + " first run", d0.Input(nil)},
			fixture{role + " changed", d1.Input(d0.Data)},
			fixture{role + " unchanged", d0.Input(d0.Data)},
		)
	}
	return out
}

// pythonWithYaql finds a Python that imports yaql: $CAIRN_PYTHON, python3
// or the system's /usr/bin/python3 (where Debian's python3-yaql is).
func pythonWithYaql(t *testing.T) string {
	t.Helper()
	candidates := []string{"python3", "/usr/bin/python3"}
	if p := os.Getenv("CAIRN_PYTHON"); p != "" {
		candidates = []string{p}
	}
	var lastErr error
	for _, c := range candidates {
		out, err := exec.Command(c, "-c", "import yaql, yaml").CombinedOutput()
		if err == nil {
			return c
		}
		lastErr = &pyError{c, strings.TrimSpace(string(out)), err}
	}
	requireOrSkip(t, "python3-yaql (apt-get install python3-yaql)", lastErr)
	return ""
}

type pyError struct {
	python, out string
	err         error
}

func (e *pyError) Error() string { return e.python + ": " + e.err.Error() + ": " + lastLine(e.out) }

func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	return lines[len(lines)-1]
}
