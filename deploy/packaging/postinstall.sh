#!/bin/sh
# After install or upgrade (deb: configure; rpm: 1 or 2): the server's
# system user and group "cairn", its data directory and the permissions of
# the settings, which hold secrets. Services are neither enabled nor
# started: see /etc/cairn/*.env first.
set -e

if ! getent group cairn >/dev/null 2>&1; then
	groupadd --system cairn
fi
if ! getent passwd cairn >/dev/null 2>&1; then
	nologin=/usr/sbin/nologin
	[ -x "$nologin" ] || nologin=/sbin/nologin
	useradd --system --gid cairn --home-dir /var/lib/cairn --no-create-home \
		--shell "$nologin" --comment "Cairn server" cairn
fi

install -d -m 0700 -o cairn -g cairn /var/lib/cairn
install -d -m 0755 -o root -g root /etc/cairn
if [ -f /etc/cairn/server.env ]; then
	chown root:cairn /etc/cairn/server.env
	chmod 0640 /etc/cairn/server.env
fi
if [ -f /etc/cairn/agent.env ]; then
	chown root:root /etc/cairn/agent.env
	chmod 0600 /etc/cairn/agent.env
fi

if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	# An upgrade (deb: configure with the old version; rpm: 2) restarts
	# the services that run, on the new binary: each drains its steps in
	# flight on SIGTERM (CAIRN_WORKER_DRAIN) and the others carry on.
	if { [ "$1" = configure ] && [ -n "$2" ]; } || [ "$1" = 2 ]; then
		systemctl try-restart cairn-server.service cairn-agent.service 'cairn-agent@*.service' >/dev/null 2>&1 || true
	fi
fi
exit 0
