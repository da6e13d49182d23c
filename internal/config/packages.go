package config

import (
	"fmt"
	"strings"
)

// loadPackageManager reads CAIRN_PACKAGE_MANAGER: auto, apt or dnf (the
// names providers.PackageOptions.Manager takes), in any case.
func loadPackageManager(vals map[string]string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(vals["CAIRN_PACKAGE_MANAGER"]))
	switch v {
	case "auto", "apt", "dnf":
		return v, nil
	}
	return "", fmt.Errorf("CAIRN_PACKAGE_MANAGER: want auto, apt or dnf, got %q", vals["CAIRN_PACKAGE_MANAGER"])
}
