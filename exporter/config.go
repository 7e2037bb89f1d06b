package exporter

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// In-cluster defaults: where the kubelet mounts a ServiceAccount token, its CA
// and its namespace.
const (
	DefaultTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"
	DefaultCAFile    = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
	DefaultListen    = ":8080"
	// DefaultReadTimeout bounds one read of the API, all pages included. A read
	// runs in the background (see ScrapeDeadline), so it may take longer than a
	// scrape: a slow but healthy list of 100 000 claims still completes.
	DefaultReadTimeout = 30 * time.Second
)

// Config is everything the exporter needs to run; LoadConfig fills it from
// flags and environment variables.
type Config struct {
	APIURL    string // base URL of the Kubernetes API server
	TokenFile string // bearer token, re-read on every request
	CAFile    string // PEM bundle to trust; empty means the system roots
	Namespace string // namespace whose SandboxClaims are counted
	Selector  string // label selector; empty counts every claim
	Listen    string // address the HTTP server binds
	// ReadTimeout bounds one whole read (every page of it); a scrape waits
	// for it at most ScrapeDeadline.
	ReadTimeout time.Duration
}

// LoadConfig reads flags from args, falling back to the EXPORTER_* variables
// that getenv returns and then to the in-cluster defaults. A flag wins over its
// variable so that a one-off command line can override a pod's environment.
func LoadConfig(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	defaultTimeout := DefaultReadTimeout
	if v := getenv("EXPORTER_READ_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return Config{}, fmt.Errorf("EXPORTER_READ_TIMEOUT: %w", err)
		}
		defaultTimeout = d
	}

	var cfg Config
	fs := flag.NewFlagSet("claim-exporter", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&cfg.APIURL, "api-url", env("EXPORTER_API_URL", inClusterURL(getenv)),
		"Kubernetes API server URL [EXPORTER_API_URL] (default https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)")
	fs.StringVar(&cfg.TokenFile, "token-file", env("EXPORTER_TOKEN_FILE", DefaultTokenFile),
		"file holding the bearer token, re-read on every request [EXPORTER_TOKEN_FILE]")
	fs.StringVar(&cfg.CAFile, "ca-file", env("EXPORTER_CA_FILE", DefaultCAFile),
		"PEM file of the CA that signs the API server's certificate; empty trusts the system roots [EXPORTER_CA_FILE]")
	fs.StringVar(&cfg.Namespace, "namespace", getenv("EXPORTER_NAMESPACE"),
		"namespace whose SandboxClaims are counted [EXPORTER_NAMESPACE] (default: the namespace file beside the token)")
	fs.StringVar(&cfg.Selector, "selector", getenv("EXPORTER_SELECTOR"),
		"label selector of the claims to count; empty counts every claim in the namespace [EXPORTER_SELECTOR]")
	fs.StringVar(&cfg.Listen, "listen", env("EXPORTER_LISTEN", DefaultListen),
		"address to serve /demand, /metrics and /healthz on [EXPORTER_LISTEN]")
	fs.DurationVar(&cfg.ReadTimeout, "read-timeout", defaultTimeout,
		"bound on one read of the API, all pages included; a scrape waits for a read at most "+ScrapeDeadline.String()+
			" and otherwise serves the last count, the read going on in the background [EXPORTER_READ_TIMEOUT]")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}

	if cfg.APIURL == "" {
		return Config{}, errors.New("no API server URL: set --api-url (EXPORTER_API_URL) or run in a pod (KUBERNETES_SERVICE_HOST)")
	}
	if cfg.TokenFile == "" {
		return Config{}, errors.New("--token-file is empty")
	}
	if cfg.Namespace == "" {
		// The kubelet writes the pod's namespace beside the token it mounts.
		nsFile := filepath.Join(filepath.Dir(cfg.TokenFile), "namespace")
		b, err := os.ReadFile(nsFile)
		if err != nil {
			return Config{}, fmt.Errorf("no namespace: set --namespace (EXPORTER_NAMESPACE) or provide %s: %w", nsFile, err)
		}
		cfg.Namespace = strings.TrimSpace(string(b))
		if cfg.Namespace == "" {
			return Config{}, fmt.Errorf("no namespace: %s is empty", nsFile)
		}
	}
	if cfg.ReadTimeout <= 0 {
		return Config{}, fmt.Errorf("--read-timeout must be positive, got %s", cfg.ReadTimeout)
	}
	return cfg, nil
}

// inClusterURL is the API server address Kubernetes injects into every pod;
// JoinHostPort brackets an IPv6 service address.
func inClusterURL(getenv func(string) string) string {
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return ""
	}
	return "https://" + net.JoinHostPort(host, port)
}
