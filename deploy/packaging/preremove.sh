#!/bin/sh
# Before removal (deb: remove; rpm: 0, not on upgrade): stop the services
# so no agent runs a step from a binary being removed.
set -e
case "$1" in
remove | 0)
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
		systemctl stop cairn-agent.service cairn-server.service 'cairn-agent@*.service' >/dev/null 2>&1 || true
		systemctl disable cairn-agent.service cairn-server.service >/dev/null 2>&1 || true
	fi
	;;
esac
exit 0
