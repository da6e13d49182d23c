package kinds

// KindService is a systemd service, driven over D-Bus.
const KindService = "service"

// serviceKind is the catalogue entry of service.
var serviceKind = kindDef{Kind{
	Name:        KindService,
	Description: "a systemd service over D-Bus: running or stopped, enabled or not; restarted when refreshed",
	Attributes:  map[string]AttrKind{"name": Namevar, "ensure": Property, "enable": Property},
	Refresh: "restarts the service once when it runs and is to keep running; " +
		"nothing when this run starts it (the start is its refresh) or ensure is stopped",
}, "service.json", nil}
