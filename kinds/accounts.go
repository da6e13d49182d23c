package kinds

// KindUser and KindUnixGroup are the accounts of a host, driven by the
// shadow tools. The group kind is unix_group: Fuel's task type "group"
// holds the name group.
const (
	KindUser      = "user"
	KindUnixGroup = "unix_group"
)

// userKind is the catalogue entry of user: it runs after the groups it
// names (its primary group and its supplementary groups).
var userKind = kindDef{Kind{
	Name:        KindUser,
	Description: "a user of the host's account files (useradd/usermod/userdel): uid, gid, groups, home, shell, comment, password hash from a secret",
	Attributes: map[string]AttrKind{
		"name": Namevar, "ensure": Property, "uid": Property, "gid": Property, "groups": Property,
		"home": Property, "shell": Property, "comment": Property, "password": Property,
		"managehome": Parameter, "system": Parameter,
	},
	AutoEdges: []AutoEdge{
		{Kind: KindUnixGroup, From: "gid", Attr: "name", Match: MatchEqual},
		{Kind: KindUnixGroup, From: "groups", Attr: "name", Match: MatchEqual},
	},
}, "user.json", nil}

// unixGroupKind is the catalogue entry of unix_group.
var unixGroupKind = kindDef{Kind{
	Name:        KindUnixGroup,
	Description: "a group of the host's account files (groupadd/groupmod/groupdel): gid",
	Attributes:  map[string]AttrKind{"name": Namevar, "ensure": Property, "gid": Property, "system": Parameter},
}, "unix_group.json", nil}
