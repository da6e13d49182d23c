-- The cluster a stack's last successful apply ran on: its targeted
-- resources are on that cluster's nodes, so drift checks, repairs and the
-- destroy go there, and an apply to another cluster is refused while the
-- stack holds resources. '' for a stack applied without a cluster.
ALTER TABLE stacks ADD COLUMN cluster_id TEXT NOT NULL DEFAULT '';
