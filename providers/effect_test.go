package providers

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cairn-io/cairn/model"
)

// Which changes may not be repeated after a crash cut them off: commands
// without a guard; not guarded ones, Fuel tasks with test_pre, deletes,
// nor the kinds that converge to a state they read back.
func TestRepeatUnsafe(t *testing.T) {
	reg := fuelRegistry(map[string]string{"erase_node": "true"})
	tests := []struct {
		name string
		req  Request
		want bool
	}{
		{"bare exec", Request{Kind: "exec", Spec: model.Spec{"command": "make install"}}, true},
		{"Fuel shell task", Request{Kind: "shell", Spec: model.Spec{"command": "make install"}}, true},
		{"exec with creates", Request{Kind: "exec", Spec: model.Spec{"command": "make install", "creates": "/opt/app"}}, false},
		{"exec with unless", Request{Kind: "exec", Spec: model.Spec{"command": "make install", "unless": "test -e /opt/app"}}, false},
		{"exec with onlyif", Request{Kind: "exec", Spec: model.Spec{"command": "make install", "onlyif": "test ! -e /opt/app"}}, false},
		{"exec with test_pre", Request{Kind: "exec", Spec: model.Spec{"command": "make install"}, TestPre: &model.TaskCheck{Cmd: "test -e /opt/app"}}, false},
		{"provisioning hook", Request{Kind: "hook", Spec: model.Spec{"hook": "erase_node"}}, true},
		{"file", Request{Kind: "file", Spec: model.Spec{"path": "/etc/app.conf", "content": "x"}}, false},
		{"directory", Request{Kind: "directory", Spec: model.Spec{"path": "/srv"}}, false},
		{"reboot, guarded by its boot marker", Request{Kind: "reboot", Spec: model.Spec{}}, false},
		{"an unknown kind", Request{Kind: "widget", Spec: model.Spec{}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, reg.RepeatUnsafe(tt.req))
		})
	}
}
