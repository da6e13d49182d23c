package temporalclient_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/cairn-io/cairn/internal/temporalclient"
	"github.com/cairn-io/cairn/internal/testenv"
)

const apiKey = "tk_9f8e7d6c5b4a"

func TestAPIKeySentOnEveryCallAndNeverLogged(t *testing.T) {
	p := newPKI(t, apiKey)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	sec := p.mtls()
	sec.APIKey = apiKey
	c, err := temporalclient.Dial(ctx, p.config(sec), temporalclient.Params{Logger: log})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "default"})
	require.NoError(t, err)
	_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
	require.NoError(t, err)

	calls := p.front.Calls()
	require.GreaterOrEqual(t, len(calls), 3, "%v", methods(calls))
	for _, call := range calls {
		assert.Equal(t, "Bearer "+apiKey, call.Authorization, call.Method)
	}
	assert.NotContains(t, logs.String(), apiKey)
}

func TestAPIKeyFromFile(t *testing.T) {
	p := newPKI(t, apiKey)
	sec := p.mtls()
	sec.APIKeyFile = testenv.WriteFile(t, t.TempDir(), "api-key", []byte(apiKey+"\n"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := temporalclient.Dial(ctx, p.config(sec), temporalclient.Params{})
	require.NoError(t, err)
	c.Close()
	require.NotEmpty(t, p.front.Calls())
	assert.Equal(t, "Bearer "+apiKey, p.front.Calls()[0].Authorization)
}

func TestWrongOrMissingAPIKeyIsRefused(t *testing.T) {
	p := newPKI(t, apiKey)
	for name, key := range map[string]string{"wrong": "tk_other", "missing": ""} {
		t.Run(name, func(t *testing.T) {
			sec := p.mtls()
			sec.APIKey = key
			_, err := dialFailing(t, p, sec)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "missing or wrong API key")
		})
	}
}
