package exporter

import (
	"bytes"
	"encoding/json"
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

// Bounds of a pool's configuration (EXPORTER_POOLS).
const (
	// MaxPoolNameLength: a pool's name is a DNS label this long at most (the program derives
	// object names from it).
	MaxPoolNameLength = 40
	// MaxArrivalWindow bounds the long arrival window: the exporter remembers every claim created
	// within it (about 100 bytes each), so it stays a window, not a history.
	MaxArrivalWindow = time.Hour
)

// Pool is one set of claims the exporter counts and serves on its own path.
type Pool struct {
	// Name is served at DemandPath/<Name>; "" is the one-pool mode's pool, served at DemandPath.
	Name      string
	Namespace string // namespace whose SandboxClaims are counted
	Selector  string // label selector; empty counts every claim in Namespace
	// ShortWindow and LongWindow are the arrival windows (whole seconds, short < long); both 0
	// for a pool without an arrival signal.
	ShortWindow, LongWindow time.Duration
}

// HasArrivals says whether the pool serves arrivals (and is read with the full metadata list).
func (p Pool) HasArrivals() bool { return p.LongWindow > 0 }

// Config is everything the exporter needs to run; LoadConfig fills it from
// flags and environment variables.
type Config struct {
	APIURL    string // base URL of the Kubernetes API server
	TokenFile string // bearer token, re-read on every request
	CAFile    string // PEM bundle to trust; empty means the system roots
	// Pools are counted each on its own; at least one. Without EXPORTER_POOLS, one pool named ""
	// from --namespace (or the namespace file) and --selector.
	Pools []Pool
	// Refused are the entries of EXPORTER_POOLS the exporter does not serve, with why: they are
	// logged, counted in /metrics and named by /healthz and by their own /demand path.
	Refused []PoolProblem
	Listen  string // address the HTTP server binds
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
	var namespace, selector, pools string
	fs := flag.NewFlagSet("claim-exporter", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&cfg.APIURL, "api-url", env("EXPORTER_API_URL", inClusterURL(getenv)),
		"Kubernetes API server URL [EXPORTER_API_URL] (default https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)")
	fs.StringVar(&cfg.TokenFile, "token-file", env("EXPORTER_TOKEN_FILE", DefaultTokenFile),
		"file holding the bearer token, re-read on every request [EXPORTER_TOKEN_FILE]")
	fs.StringVar(&cfg.CAFile, "ca-file", env("EXPORTER_CA_FILE", DefaultCAFile),
		"PEM file of the CA that signs the API server's certificate; empty trusts the system roots [EXPORTER_CA_FILE]")
	fs.StringVar(&pools, "pools", getenv(PoolsEnv),
		`the pools to count, a JSON array of {"name", "namespace", "selector", "arrivalWindowsSeconds": [short, long]}, `+
			`each served at `+DemandPath+`/<name> [`+PoolsEnv+`] (default: one pool from --namespace and --selector, at `+DemandPath+`)`)
	fs.StringVar(&namespace, "namespace", getenv("EXPORTER_NAMESPACE"),
		"namespace whose SandboxClaims are counted, without --pools [EXPORTER_NAMESPACE] (default: the namespace file beside the token)")
	fs.StringVar(&selector, "selector", getenv("EXPORTER_SELECTOR"),
		"label selector of the claims to count, without --pools; empty counts every claim in the namespace [EXPORTER_SELECTOR]")
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
	if cfg.ReadTimeout <= 0 {
		return Config{}, fmt.Errorf("--read-timeout must be positive, got %s", cfg.ReadTimeout)
	}

	if pools != "" {
		// Each pool names its namespace and selector: a second source of either would leave
		// the reader guessing which one counts.
		if namespace != "" || selector != "" {
			return Config{}, fmt.Errorf("%s (--pools) is set, so each pool names its own namespace and selector: "+
				"unset EXPORTER_NAMESPACE/--namespace and EXPORTER_SELECTOR/--selector (got %q and %q), "+
				"or unset %s to count the one pool they name", PoolsEnv, namespace, selector, PoolsEnv)
		}
		p, refused, err := ParsePoolEntries(pools)
		if err != nil {
			return Config{}, err
		}
		if len(p) == 0 {
			msgs := make([]string, len(refused))
			for i, r := range refused {
				msgs[i] = r.String()
			}
			return Config{}, fmt.Errorf("%s: no entry can be served: %s", PoolsEnv, strings.Join(msgs, "; "))
		}
		cfg.Pools, cfg.Refused = p, refused
		return cfg, nil
	}

	if namespace == "" {
		// The kubelet writes the pod's namespace beside the token it mounts.
		nsFile := filepath.Join(filepath.Dir(cfg.TokenFile), "namespace")
		b, err := os.ReadFile(nsFile)
		if err != nil {
			return Config{}, fmt.Errorf("no namespace: set --namespace (EXPORTER_NAMESPACE) or provide %s: %w", nsFile, err)
		}
		namespace = strings.TrimSpace(string(b))
		if namespace == "" {
			return Config{}, fmt.Errorf("no namespace: %s is empty", nsFile)
		}
	}
	cfg.Pools = []Pool{{Namespace: namespace, Selector: selector}}
	return cfg, nil
}

// poolJSON is one element of EXPORTER_POOLS as written (contract.ExporterPool).
type poolJSON struct {
	Name                  string        `json:"name"`
	Namespace             string        `json:"namespace"`
	Selector              string        `json:"selector"`
	ArrivalWindowsSeconds []json.Number `json:"arrivalWindowsSeconds"`
}

// PoolProblem is an entry of EXPORTER_POOLS the exporter refused, and why. The exporter serves
// the other pools: one pool's typo must not take every pool's metric away.
type PoolProblem struct {
	Index   int    // 1-based place in the list
	Name    string // as written: may be empty or not a valid name
	Problem string // what is wrong and how to fix it
}

func (p PoolProblem) String() string {
	return fmt.Sprintf("pool %d (name %q): %s", p.Index, p.Name, p.Problem)
}

// ParsePools reads EXPORTER_POOLS: a JSON array of
// {"name", "namespace", "selector", "arrivalWindowsSeconds"}, the last two optional. It refuses
// the whole list when any entry is wrong, reporting every problem it finds, each with the pool,
// what is wrong and how to fix it. The program runs it on the exact list it renders, so the
// program and the exporter cannot disagree about a list.
func ParsePools(s string) ([]Pool, error) {
	pools, refused, err := ParsePoolEntries(s)
	if err != nil {
		return nil, err
	}
	if len(refused) > 0 {
		msgs := make([]string, len(refused))
		for i, r := range refused {
			msgs[i] = r.String()
		}
		return nil, fmt.Errorf("%s: %s", PoolsEnv, strings.Join(msgs, "; "))
	}
	return pools, nil
}

// ParsePoolEntries reads EXPORTER_POOLS entry by entry: the pools it can serve, and the entries
// it refuses with their problems. err is a list it cannot read at all (not a JSON array, or
// empty). A duplicated name refuses every entry with it (each would answer on the same path);
// two entries counting the same claims refuse the later one.
func ParsePoolEntries(s string) (pools []Pool, refused []PoolProblem, err error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields() // a misspelt key must not silently drop a setting
	dec.UseNumber()
	// Each entry is decoded on its own, so one entry's unknown key or wrong type refuses that
	// entry only.
	var raw []json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, nil, fmt.Errorf("%s is not a JSON array of pools like "+
			`[{"name": "code", "namespace": "agents-code", "selector": "", "arrivalWindowsSeconds": [30, 180]}]: %w`, PoolsEnv, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("%s has more after its JSON array; give one array of pools", PoolsEnv)
	}
	if len(raw) == 0 {
		return nil, nil, fmt.Errorf("%s lists no pool: add at least one "+
			`{"name": ..., "namespace": ...}, or unset it to count the one pool of EXPORTER_NAMESPACE`, PoolsEnv)
	}

	entries := make([]poolJSON, len(raw))
	problems := make([][]string, len(raw))
	bad := func(i int, format string, args ...any) {
		problems[i] = append(problems[i], fmt.Sprintf(format, args...))
	}
	for i, r := range raw {
		d := json.NewDecoder(bytes.NewReader(r))
		d.DisallowUnknownFields()
		d.UseNumber()
		if err := d.Decode(&entries[i]); err != nil {
			var named struct {
				Name any `json:"name"`
			}
			_ = json.Unmarshal(r, &named)
			if n, ok := named.Name.(string); ok {
				entries[i].Name = n
			}
			bad(i, `is not an object of "name", "namespace", "selector" and "arrivalWindowsSeconds" (%v); fix or remove the entry`, err)
		}
	}
	parsed := make([]Pool, len(entries))
	names := map[string][]int{}
	for i, p := range entries {
		if problems[i] != nil {
			continue
		}
		switch {
		case p.Name == "":
			bad(i, `"name" is missing; give the pool a name (it is served at %s/<name>)`, DemandPath)
		case len(p.Name) > MaxPoolNameLength || !isDNSLabel(p.Name):
			bad(i, "name is not a DNS label of at most %d characters (lower-case letters, digits and '-', "+
				"starting and ending with a letter or digit); rename it, e.g. %q", MaxPoolNameLength, suggestLabel(p.Name))
		default:
			names[p.Name] = append(names[p.Name], i)
		}
		switch {
		case p.Namespace == "":
			bad(i, `"namespace" is missing; give the namespace that holds the pool's claims`)
		case len(p.Namespace) > 63 || !isDNSLabel(p.Namespace):
			bad(i, "namespace %q is not a Kubernetes namespace name (a DNS label of at most 63 characters: "+
				"lower-case letters, digits and '-', starting and ending with a letter or digit)", p.Namespace)
		}
		if strings.TrimSpace(p.Selector) != p.Selector || strings.ContainsAny(p.Selector, "\n\r\t") {
			bad(i, "selector %q has surrounding or control whitespace; write it as a label selector such as %q",
				p.Selector, "app=code")
		}
		parsed[i] = Pool{Name: p.Name, Namespace: p.Namespace, Selector: p.Selector}
		if short, long, msg := parseWindows(p.ArrivalWindowsSeconds); msg != "" {
			bad(i, "%s", msg)
		} else {
			parsed[i].ShortWindow, parsed[i].LongWindow = short, long
		}
	}
	for _, at := range names {
		for _, i := range at {
			for _, j := range at {
				if j != i {
					bad(i, "the name is used by pool %d too; give each pool its own name", j+1)
				}
			}
		}
	}

	// Two pools in one namespace count the same claims unless selectors tell them apart: one
	// without a selector counts the other's claims too.
	for i := range parsed {
		for j := range i {
			a, b := parsed[j], parsed[i]
			if a.Namespace != b.Namespace || a.Namespace == "" {
				continue
			}
			switch {
			case a.Selector == "" || b.Selector == "":
				bad(i, "shares namespace %q with pool %d (name %q) and one of them has no selector, so it would count "+
					"the other's claims too; give each pool its own namespace (one namespace per pool keeps the one-item count) "+
					"or each a selector that tells their claims apart", b.Namespace, j+1, a.Name)
			case a.Selector == b.Selector:
				bad(i, "has the same namespace %q and selector %q as pool %d (name %q), so both count the same claims; "+
					"give one of them another namespace or selector", b.Namespace, b.Selector, j+1, a.Name)
			}
		}
	}
	for i, p := range parsed {
		if problems[i] != nil {
			refused = append(refused, PoolProblem{Index: i + 1, Name: entries[i].Name, Problem: strings.Join(problems[i], "; ")})
			continue
		}
		pools = append(pools, p)
	}
	return pools, refused, nil
}

// parseWindows checks arrivalWindowsSeconds: none, or [short, long] in whole seconds with
// 1 <= short < long <= MaxArrivalWindow. It returns a problem and its fix, or "".
func parseWindows(v []json.Number) (short, long time.Duration, problem string) {
	const fix = "give none, or two whole numbers of seconds [short, long] with 1 <= short < long <= %d, e.g. [30, 180]"
	max := int64(MaxArrivalWindow / time.Second)
	if len(v) == 0 {
		return 0, 0, ""
	}
	if len(v) != 2 {
		return 0, 0, fmt.Sprintf("arrivalWindowsSeconds has %d value(s) %v; "+fix, len(v), v, max)
	}
	var s [2]int64
	for k, n := range v {
		x, err := n.Int64()
		if err != nil {
			return 0, 0, fmt.Sprintf("arrivalWindowsSeconds value %s is not a whole number of seconds; "+fix, n, max)
		}
		s[k] = x
	}
	switch {
	case s[0] < 1:
		return 0, 0, fmt.Sprintf("arrivalWindowsSeconds short window %d is below 1 s; "+fix, s[0], max)
	case s[1] <= s[0]:
		return 0, 0, fmt.Sprintf("arrivalWindowsSeconds [%d, %d]: the long window must be longer than the short one "+
			"(short first); "+fix, s[0], s[1], max)
	case s[1] > max:
		return 0, 0, fmt.Sprintf("arrivalWindowsSeconds long window %d s is above %d s (the exporter remembers every claim "+
			"created within it); "+fix, s[1], max, max)
	}
	return time.Duration(s[0]) * time.Second, time.Duration(s[1]) * time.Second, ""
}

// isDNSLabel: RFC 1123 label, lower case (what Kubernetes names namespaces with).
func isDNSLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// suggestLabel turns a name into a DNS label for the error's "e.g.".
func suggestLabel(s string) string {
	var b bytes.Buffer
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && b.Bytes()[b.Len()-1] != '-':
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > MaxPoolNameLength {
		out = strings.TrimRight(out[:MaxPoolNameLength], "-")
	}
	if out == "" {
		out = "pool-1"
	}
	return out
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
