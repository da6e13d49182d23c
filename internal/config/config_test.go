package config

import "testing"

func TestLoadDefaultsAndOverrides(t *testing.T) {
	env := map[string]string{"CAIRN_API_TOKEN": "s3cret", "CAIRN_BODY_LIMIT": "1MiB", "CAIRN_FETCH_SCHEMES": "https, FILE"}
	c, err := Load(Values(func(k string) string { return env[k] }))
	if err != nil {
		t.Fatal(err)
	}
	if c.TemporalAddress != "127.0.0.1:7233" || c.TaskQueue != "cairn" || c.Parallelism != 10 {
		t.Fatalf("defaults not applied: %+v", c)
	}
	if c.APIToken != "s3cret" || c.BodyLimit != 1<<20 {
		t.Fatalf("overrides not applied: %+v", c)
	}
	if len(c.FetchSchemes) != 2 || c.FetchSchemes[1] != "file" {
		t.Fatalf("schemes = %v", c.FetchSchemes)
	}
}

func TestLoadRejectsBadValues(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"parallelism": {"CAIRN_PARALLELISM": "0"},
		"body limit":  {"CAIRN_BODY_LIMIT": "lots"},
		"api addr":    {"CAIRN_API_ADDR": "nohostport"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Load(Values(func(k string) string { return env[k] })); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"10MB": 10e6, "512KiB": 512 << 10, "1048576": 1048576, "2 M": 2 << 20} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}
