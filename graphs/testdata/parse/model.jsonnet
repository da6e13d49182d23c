// One package and one graph, as model.yaml says them.
local meta = { apiVersion: 'cairn/v1' };
local teamKind = meta {
  kind: 'Kind',
  metadata: { name: 'Team' },
  spec: {
    base: 'http',
    wrap: 'body',
    defaults: { url: 'https://teams.example.com', path: '/api/teams' },
    schema: { type: 'object', properties: { name: { type: 'string' } } },
  },
};
local task(id, type) = { id: id, type: type };
[
  teamKind,
  meta { kind: 'Team', metadata: { name: 'ops' }, spec: { name: 'Operations' } },
  meta { kind: 'Directory', metadata: { name: 'etc' }, spec: { path: '/etc', mode: '0755' } },
  meta {
    kind: 'File',
    metadata: { name: 'motd' },
    spec: {
      path: '/etc/motd',
      content: 'hello from %s, {{ env "SITE" }}' % std.extVar('site'),
      mode: 420,
    },
    dependsOn: ['Directory/etc'],
    associations: [{ kind: 'Team', name: 'ops' }],
    target: { roles: ['web', '/^db-\\d+$/'], nodes: ['node-1'] },
    meta: { retry: 3, delay: '2s', timeout: 90, noop: false },
  },
  meta {
    kind: 'Graph',
    metadata: { name: 'Upgrade database', type: 'upgrade' },
    tasks: [
      task('maintenance-on', 'shell') {
        version: '2.1.0',
        roles: ['*'],
        parameters: { cmd: 'touch /tmp/maintenance', timeout: 60, retries: 2, interval: 1.5 },
      },
      task('stop-api', 'exec') {
        roles: ['controller'],
        requires: ['maintenance-on'],
        required_for: ['migrate-db'],
        'cross-depends': [{ name: 'maintenance-on', role: 'master', policy: 'any' }],
        strategy: { type: 'parallel', amount: 2 },
        condition: 'eq .node.name "node-1"',
        fail_on_error: false,
        parameters: { command: 'systemctl stop api', undo: 'systemctl start api', env: { LANG: 'C' } },
        reexecute_on: ['deploy_changes'],
      },
      task('migrate-db', 'exec') {
        roles: 'controller',
        strategy: { type: 'one_by_one' },
        fault_tolerance: '30%',
        condition: null,
        parameters: { argv: ['migrate', '--all'] },
      },
    ],
  },
]
