// Package deploy holds what installs Cairn on hosts: the systemd units
// (systemd/), the packaging of the .deb and .rpm (packaging/, built by
// `make packages`) and Temporal's dynamic configuration. Its tests check
// the units with systemd-analyze, build the packages, install the .deb and
// run a server and an agent the way their units would.
package deploy
