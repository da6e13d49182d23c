// Package fuellab is a Fuel lab: fuel-library's release graph with the
// commands of its tasks replaced (ReadRelease), a fleet of nodes with
// Fuel's roles and facts (Nodes) and the settings of a Fuel cluster as
// Fuel keeps them (Settings), shared by the tests that expand and execute
// fuel-library's graphs and by the benchmark that executes them on many
// nodes.
package fuellab

// Settings are a Fuel cluster's editable attributes ({value: x} leaves),
// enough for every condition, strategy amount and cross dependency of
// fuel-library's release graph to evaluate, and for the changed()
// conditions of a second execution to compare. Each call returns a new
// value.
func Settings() map[string]any {
	v := func(x any) map[string]any { return map[string]any{"value": x} }
	return map[string]any{
		"common": map[string]any{
			"debug": v(false), "use_syslog": v(true), "region": v("RegionOne"),
			"workers_max": v(16), "auto_assign_fips": v(false),
		},
		"storage": map[string]any{
			"objects_ceph": v(false), "images_ceph": v(true), "volumes_ceph": v(true),
			"ephemeral_ceph": v(false), "volumes_lvm": v(false), "osd_pool_size": v("3"),
		},
		"ceilometer":   map[string]any{"enabled": v(true)},
		"ironic":       map[string]any{"enabled": v(false)},
		"murano-cfapi": map[string]any{"enabled": v(false)},
		"public_ssl": map[string]any{
			"horizon": v(true), "services": v(true), "cert_source": v("self_signed"),
			"hostname": v("public.fuel.local"), "cert_data": v(map[string]any{"content": "CERT"}),
		},
		"neutron_advanced_configuration": map[string]any{"neutron_l3_ha": v(false), "neutron_dvr": v(false)},
		"repo_setup": map[string]any{
			"repo_type": v("fuel"),
			"repos":     v([]any{map[string]any{"name": "ubuntu", "uri": "http://archive.ubuntu.com/ubuntu", "priority": nil}}),
		},
		"provision":           map[string]any{"name": v("ubuntu"), "method": v("image"), "packages": v("acl\nbash")},
		"rabbit":              map[string]any{"password": v("r"), "user": v("nova")},
		"mysql":               map[string]any{"root_password": v("d"), "wsrep_password": v("w")},
		"keystone":            map[string]any{"admin_token": v("t")},
		"heat":                map[string]any{"enabled": v(true)},
		"access":              map[string]any{"user": v("admin"), "password": v("admin"), "tenant": v("admin"), "email": v("admin@localhost")},
		"cgroups":             map[string]any{"metadata": map[string]any{"enabled": false}},
		"murano":              map[string]any{"enabled": v(false)},
		"sahara":              map[string]any{"enabled": v(false)},
		"mongo":               map[string]any{"enabled": v(false)},
		"external_mongo":      map[string]any{"hosts_ip": v(""), "mongo_replset": v("")},
		"external_ntp":        map[string]any{"ntp_list": v([]any{"0.pool.ntp.org"})},
		"external_dns":        map[string]any{"dns_list": v([]any{"8.8.8.8"})},
		"configuration":       map[string]any{"nova_config": map[string]any{}},
		"puppet":              map[string]any{"modules": v("rsync://10.20.0.2:/puppet/modules/")},
		"syslog":              map[string]any{"syslog_server": v(""), "syslog_port": v("514")},
		"workloads_collector": map[string]any{"enabled": v(true)},
		"mu_upgrade":          map[string]any{"enabled": v(false)},
		"nova_quota":          false,
		// What the changed() conditions of a second execution compare.
		"aodh":                             map[string]any{"db_password": "a", "user_password": "a"},
		"cinder":                           map[string]any{"db_password": "c", "user_password": "c"},
		"glance":                           map[string]any{"db_password": "g", "user_password": "g"},
		"nova":                             map[string]any{"db_password": "n", "user_password": "n"},
		"swift":                            map[string]any{"user_password": "s"},
		"horizon":                          map[string]any{"secret_key": "h"},
		"base_syslog":                      map[string]any{"syslog_server": "10.20.0.2", "syslog_port": "514"},
		"test_vm_image":                    map[string]any{"img_name": "TestVM", "disk_format": "qcow2"},
		"murano_settings":                  map[string]any{"murano_repo_url": ""},
		"operator_user":                    map[string]any{"name": "fueladmin"},
		"service_user":                     map[string]any{"name": "fuel"},
		"mp":                               []any{map[string]any{"point": "1", "weight": "1"}},
		"vms_conf":                         []any{},
		"debug":                            false,
		"libvirt_type":                     "qemu",
		"use_cow_images":                   true,
		"resume_guests_state_on_host_boot": true,
		"deployment_mode":                  "ha_compact",
		"master_ip":                        "10.20.0.2",
		"plugins":                          []any{},
		"deployed_before":                  map[string]any{"value": false},
		"quantum":                          true,
		"quantum_settings":                 map[string]any{"L2": map[string]any{"segmentation_type": "vlan"}, "keystone": map[string]any{"admin_password": "q"}},
		"network_metadata": map[string]any{
			"vips": map[string]any{
				"management": map[string]any{"ipaddr": "10.20.0.2", "node_roles": []any{"controller", "primary-controller"}},
				"public":     map[string]any{"ipaddr": "172.16.0.2", "node_roles": []any{"controller", "primary-controller"}},
				"vrouter":    map[string]any{"ipaddr": "10.20.0.1", "node_roles": []any{"controller", "primary-controller"}},
			},
		},
	}
}
