package compose

import (
	"debug/buildinfo"
	"net"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/api"
	"github.com/cairn-io/cairn/internal/testenv"
)

// uiServerModule is the module the Temporal CLI embeds its UI from.
const uiServerModule = "github.com/temporalio/ui-server/v2"

// envOf reads a service's environment variable ("" when unset).
func envOf(svc types.ServiceConfig, k string) string {
	if v := svc.Environment[k]; v != nil {
		return *v
	}
	return ""
}

// hostPort returns the port svc publishes on the host for target ("" when
// it does not publish it).
func hostPort(svc types.ServiceConfig, target uint32) string {
	for _, p := range svc.Ports {
		if p.Target == target {
			return p.Published
		}
	}
	return ""
}

// publisherOf returns the service publishing host port port.
func publisherOf(t *testing.T, project *types.Project, port string) types.ServiceConfig {
	t.Helper()
	for _, svc := range project.Services {
		for _, p := range svc.Ports {
			if p.Published == port {
				return svc
			}
		}
	}
	require.Failf(t, "port not published", "no service publishes host port %s", port)
	return types.ServiceConfig{}
}

// The compose UI is the one the dev server embeds, so what developers see
// with `cairn dev` is what the multi-machine path shows.
func TestComposeUIIsTheDevServersUI(t *testing.T) {
	bin, err := testenv.TemporalBinary()
	require.NoError(t, err)
	info, err := buildinfo.ReadFile(bin)
	require.NoError(t, err, "build info of %s", bin)
	i := slices.IndexFunc(info.Deps, func(m *debug.Module) bool { return m.Path == uiServerModule })
	require.GreaterOrEqual(t, i, 0, "%s does not embed %s", bin, uiServerModule)
	version := info.Deps[i].Version

	ui, err := load(t).GetService("temporal-ui")
	require.NoError(t, err)
	image, tag, ok := strings.Cut(ui.Image, ":")
	require.True(t, ok, "the UI image %q has no tag", ui.Image)
	assert.Equal(t, "temporalio/ui", image)
	assert.Equal(t, strings.TrimPrefix(version, "v"), tag, "the compose UI differs from the dev server's (%s %s)", uiServerModule, version)
}

// Payloads sealed with the codec key are readable in the UI: its codec
// endpoint is published by a proxy that forwards decode requests to the
// cairn service's /codec with the API token the browser cannot send, and
// Cairn lets the UI's origin call it.
func TestComposeUIDecodesThroughCairnsCodec(t *testing.T) {
	project := load(t)
	ui, err := project.GetService("temporal-ui")
	require.NoError(t, err)
	cairn, err := project.GetService("cairn")
	require.NoError(t, err)

	endpoint, err := url.Parse(envOf(ui, "TEMPORAL_CODEC_ENDPOINT"))
	require.NoError(t, err, "TEMPORAL_CODEC_ENDPOINT")
	codecPath := strings.TrimSuffix(api.CodecPrefix, "/")
	assert.Equal(t, codecPath, endpoint.Path, "the UI's codec endpoint should be Cairn's %s", codecPath)
	assert.Equal(t, "false", envOf(ui, "TEMPORAL_CODEC_PASS_ACCESS_TOKEN"), "the UI has no login whose token Cairn could check")

	// The proxy publishing the endpoint adds the API token and reaches the
	// cairn service's API port, for decoding only.
	proxy := publisherOf(t, project, endpoint.Port())
	require.Len(t, proxy.Configs, 1, "%s should take its configuration from a compose config", proxy.Name)
	cfg, ok := project.Configs[proxy.Configs[0].Source]
	require.True(t, ok, "config %q missing", proxy.Configs[0].Source)
	_, apiPort, err := net.SplitHostPort(envOf(cairn, "CAIRN_API_ADDR"))
	require.NoError(t, err, "CAIRN_API_ADDR")
	assert.Contains(t, cfg.Content, "proxy_pass http://cairn:"+apiPort+";", "%s should forward to the cairn service's API", proxy.Name)
	assert.Contains(t, cfg.Content, `"Bearer test-token"`, "%s should add CAIRN_API_TOKEN", proxy.Name)
	assert.Contains(t, cfg.Content, "location = "+codecPath+"/decode {", "%s should serve decode", proxy.Name)
	assert.NotContains(t, cfg.Content, "/encode", "%s should not mint sealed payloads", proxy.Name)

	// Cairn lets the UI's origin (where its link points, where the UI is
	// published) call the codec.
	uiURL, err := url.Parse(envOf(cairn, "CAIRN_TEMPORAL_UI_URL"))
	require.NoError(t, err, "CAIRN_TEMPORAL_UI_URL")
	assert.Equal(t, hostPort(ui, 8080), uiURL.Port(), "CAIRN_TEMPORAL_UI_URL should be where the UI is published")
	uiOrigin := uiURL.Scheme + "://" + uiURL.Host
	origins := strings.Split(envOf(cairn, "CAIRN_CODEC_ORIGINS"), ",")
	assert.Contains(t, origins, uiOrigin, "CAIRN_CODEC_ORIGINS should allow the UI's origin")
	assert.Contains(t, origins, "http://127.0.0.1:"+uiURL.Port(), "CAIRN_CODEC_ORIGINS should allow the UI by address too")
	assert.Equal(t, uiURL.Hostname(), endpoint.Hostname(), "the UI should reach the codec endpoint on the host it is reached on")
}
