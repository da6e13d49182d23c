#!/bin/sh
# After removal. On purge (deb) the server's data directory goes with the
# settings dpkg removes; the cairn user stays, as Debian's policy asks
# (files it owned elsewhere would otherwise pass to a later user).
set -e
case "$1" in
purge)
	rm -rf /var/lib/cairn
	rmdir /etc/cairn 2>/dev/null || true
	;;
esac
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
exit 0
