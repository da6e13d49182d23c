-- Fuel's cluster data: a release's version (the {OPENSTACK_VERSION}
-- placeholder), a cluster's settings tree and each node's attributes, as
-- JSON text. With a sealing key the JSON holds one sealed value instead
-- (see store/sealer_clusters.go).
ALTER TABLE releases ADD COLUMN version TEXT NOT NULL DEFAULT '';
ALTER TABLE clusters ADD COLUMN settings TEXT NOT NULL DEFAULT 'null';
ALTER TABLE nodes ADD COLUMN attributes TEXT NOT NULL DEFAULT 'null';
