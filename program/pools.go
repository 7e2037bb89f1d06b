package program

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/exporter"
	"warmpool.local/warm-pool-autoscaling-keda/schedule"
)

// PoolSettings are a pool's agent, bounds and sizing: each Pool's, and in the Config the top-level
// keys of the one-pool shorthand, which its pool takes whole.
type PoolSettings struct {
	// Agent is the pool's container (the `template` key); the Config's is zero without one: the
	// placeholder.
	Agent components.Agent

	MinReplicas           int
	MaxReplicas           int
	TargetValue           string
	ActivationTargetValue string
	LoadCap               int
	PollingInterval       int
	FallbackReplicas      int
	// Headroom is how many warm sandboxes the pool keeps above demand:
	// desired = ceil(claims / targetValue) + Headroom (0: the blueprint's mapping).
	Headroom      int
	ClaimSelector string
	// ExporterURL overrides the URL KEDA reads for this pool (empty: the exporter's Service).
	ExporterURL string
	// Sizing is the pool's sizing policy (the `sizing` key); the Config's is zero without one:
	// claims.
	Sizing components.Sizing
	// ScaleUp and ScaleDown are how the HPA lets the pool grow and shrink (the `scaleUp` and
	// `scaleDown` keys); the Config's are also each listed pool's unless it sets its own.
	ScaleUp, ScaleDown components.ScalingRules
}

// Pool is one warm pool as the program deploys it: its names, its agent, its bounds and its
// sizing. The top-level keys are the one-pool shorthand; the `pools` list gives several.
type Pool struct {
	Name             string
	Namespace        string
	TemplateName     string
	ScaledObjectName string
	PoolSettings
	// ownScaleUp and ownScaleDown: a listed pool set its own object; otherwise the top-level key's
	// rules are checked once, where the stack set them, not once per pool.
	ownScaleUp, ownScaleDown bool

	// prefix is how messages name this pool's keys: "" for the shorthand, "pools[i]." in the list.
	prefix string
}

// nameKey is the key of the pool's name: poolName in the shorthand, name in the list.
func (p *Pool) nameKey() string {
	if p.prefix != "" {
		return "name"
	}
	return "poolName"
}

// Listed reports whether the pool comes from the `pools` list (own namespace, /demand/<name>).
func (p *Pool) Listed() bool { return p.prefix != "" }

// ArrivalWindows are the exporter's arrival windows this pool's sizing reads (nil: none).
func (p *Pool) ArrivalWindows() []int {
	if p.Sizing.Policy != components.SizingArrivals {
		return nil
	}
	return []int{p.Sizing.ShortWindowSeconds, p.Sizing.LongWindowSeconds}
}

// Pools are the stack's pools: the `pools` list, or the one pool the top-level keys describe.
func (c *Config) Pools() []*Pool {
	if len(c.PoolList) > 0 {
		return c.PoolList
	}
	return []*Pool{c.shorthandPool()}
}

// shorthandPool is the pool the top-level keys describe, in the stack's namespace.
func (c *Config) shorthandPool() *Pool {
	p := &Pool{
		Name: c.PoolName, Namespace: c.Namespace, TemplateName: c.TemplateName, ScaledObjectName: contract.ScaledObjectName,
		PoolSettings: c.PoolSettings,
	}
	if p.Agent.Image == "" {
		p.Agent = components.DefaultAgent()
	}
	if p.Sizing.Policy == "" {
		p.Sizing = components.DefaultSizing()
	}
	return p
}

// configObject is a decoded structured config value whose keys are checked: an unknown key (a
// typo, or a field the program owns) is an error naming it, never silently ignored.
type configObject struct {
	at   string // how messages name this object: "pools[0].", "template."
	m    map[string]any
	errs *[]string
	used map[string]bool
	// reads, when set, records each field read as its path and how it was read (inputshapes_test.go
	// holds the readers to InputShapes with it); nested objects share it.
	reads map[string]string
}

func decodeObject(raw, at string, errs *[]string) (configObject, bool) {
	o := configObject{at: at, errs: errs, used: map[string]bool{}}
	d := json.NewDecoder(bytes.NewReader([]byte(raw)))
	d.UseNumber()
	if err := d.Decode(&o.m); err != nil {
		o.fail("%s is not an object (%v); set its fields with `pulumi config set --path '%s<field>' <value>`", strings.TrimSuffix(at, "."), err, at)
		return o, false
	}
	return o, true
}

// read marks field k read, how.
func (o configObject) read(k, how string) {
	o.used[k] = true
	if o.reads != nil {
		o.reads[o.at+k] = how
	}
}

func (o configObject) fail(format string, args ...any) {
	*o.errs = append(*o.errs, fmt.Sprintf(format, args...))
}

// str reads a string field; numbers and booleans are taken as written (`pulumi config set
// --path` stores "1" as a number).
func (o configObject) str(k, def string) string {
	o.read(k, "str")
	v, ok := o.m[k]
	if !ok || v == nil {
		return def
	}
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	o.fail("%s%s must be a string, not %s", o.at, k, jsonKind(v))
	return def
}

func (o configObject) integer(k string, def int) int {
	o.read(k, "integer")
	v, ok := o.m[k]
	if !ok || v == nil {
		return def
	}
	s := fmt.Sprint(v)
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		o.fail("%s%s is %q, which is not a whole number", o.at, k, s)
		return def
	}
	return n
}

func (o configObject) boolean(k string, def bool) bool {
	o.read(k, "boolean")
	v, ok := o.m[k]
	if !ok || v == nil {
		return def
	}
	switch x := v.(type) {
	case bool:
		return x
	case string:
		if b, err := strconv.ParseBool(x); err == nil {
			return b
		}
	}
	o.fail("%s%s is %v; it must be true or false", o.at, k, v)
	return def
}

func (o configObject) strings(k string) []string {
	o.read(k, "strings")
	v, ok := o.m[k]
	if !ok || v == nil {
		return nil
	}
	list, isList := v.([]any)
	if !isList {
		o.fail("%s%s must be a list of strings, e.g. `pulumi config set --path '%s%s[0]' <value>`", o.at, k, o.at, k)
		return nil
	}
	var out []string
	for _, e := range list {
		switch x := e.(type) {
		case string:
			out = append(out, x)
		case json.Number:
			out = append(out, x.String())
		default:
			o.fail("%s%s has %v, which is not a string", o.at, k, e)
		}
	}
	return out
}

func (o configObject) stringMap(k string) map[string]string {
	o.read(k, "stringMap")
	v, ok := o.m[k]
	if !ok || v == nil {
		return nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		o.fail("%s%s must be a map of names to values, e.g. `pulumi config set --path '%s%s.NAME' value`", o.at, k, o.at, k)
		return nil
	}
	out := map[string]string{}
	for name, e := range m {
		switch x := e.(type) {
		case string:
			out[name] = x
		case json.Number:
			out[name] = x.String()
		case bool:
			out[name] = strconv.FormatBool(x)
		default:
			o.fail("%s%s.%s is %v, which is not a string", o.at, k, name, e)
		}
	}
	return out
}

// object reads a nested object field.
func (o configObject) object(k string) (configObject, bool) {
	o.read(k, "object")
	v, ok := o.m[k]
	if !ok || v == nil {
		return configObject{}, false
	}
	b, _ := json.Marshal(v)
	child, ok := decodeObject(string(b), o.at+k+".", o.errs)
	child.reads = o.reads
	return child, ok
}

// objects reads a list of objects, each with its keys checked and named by its index.
func (o configObject) objects(k string) []configObject {
	o.read(k, "objects")
	v, ok := o.m[k]
	if !ok || v == nil {
		return nil
	}
	list, isList := v.([]any)
	if !isList {
		o.fail("%s%s must be a list of objects, e.g. `pulumi config set --path '%s%s[0].<field>' <value>`", o.at, k, o.at, k)
		return nil
	}
	var out []configObject
	for i, e := range list {
		b, _ := json.Marshal(e)
		if e, ok := decodeObject(string(b), fmt.Sprintf("%s%s[%d].", o.at, k, i), o.errs); ok {
			e.reads = o.reads
			out = append(out, e)
		}
	}
	return out
}

// ownedByTheProgram are pod fields a team might try to set that the isolation depends on.
var ownedByTheProgram = map[string]string{
	"runtimeClassName":             "the RuntimeClass is always " + contract.RuntimeClassName + " (VM isolation)",
	"annotations":                  "the sandbox annotations (no network, do-not-disrupt) are the program's",
	"automountServiceAccountToken": "a sandbox never gets a ServiceAccount token",
	"serviceAccountName":           "a sandbox never gets a ServiceAccount token",
	"securityContext":              "the security context is the restricted level's; only runAsUser (non-root) and readOnlyRootFilesystem are yours",
	"privileged":                   "a sandbox is never privileged",
	"capabilities":                 "a sandbox drops every capability",
	"hostNetwork":                  "a sandbox has no network at all",
	"hostPID":                      "a sandbox shares nothing with its node",
	"hostIPC":                      "a sandbox shares nothing with its node",
	"volumes":                      "the only volume is the scratch emptyDir (template.scratch)",
	"networkIsolated":              "a sandbox never has a network",
}

// done reports the keys nobody read: typos and fields the program owns.
func (o configObject) done(known []string) {
	for k := range o.m {
		if o.used[k] {
			continue
		}
		if why, owned := ownedByTheProgram[k]; owned {
			o.fail("%s%s cannot be configured: %s; remove it (`pulumi config rm --path '%s%s'`)", o.at, k, why, o.at, k)
			continue
		}
		o.fail("%s%s is not a key the program knows; the keys are %s", o.at, k, strings.Join(known, ", "))
	}
}

func (o configObject) keysRead() []string {
	var ks []string
	for k := range o.used {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// readAgent reads a `template` object: the agent's container.
func readAgent(o configObject) components.Agent {
	def := components.DefaultAgent()
	a := components.Agent{
		Image:                  o.str("image", def.Image),
		Command:                o.strings("command"),
		Args:                   o.strings("args"),
		WorkingDir:             o.str("workingDir", ""),
		Env:                    o.stringMap("env"),
		RunAsUser:              o.integer("runAsUser", components.SandboxUID),
		ReadOnlyRootFilesystem: o.boolean("readOnlyRootFilesystem", false),
	}
	if v, set := o.m["image"]; set && v != nil && a.Image == "" {
		// Without this, an empty image would read as "no template" and the placeholder would
		// silently replace every other setting of the template.
		o.fail("%simage is empty; give your agent's image (registry/path:tag), or remove the key for the placeholder %s", o.at, def.Image)
		a.Image = def.Image
	}
	if _, set := o.m["image"]; !set && a.Command == nil && a.Args == nil {
		// The placeholder's command goes with the placeholder's image.
		a.Command = def.Command
	}
	if res, ok := o.object("resources"); ok {
		a.Requests = res.stringMap("requests")
		a.Limits = res.stringMap("limits")
		res.done(res.keysRead())
	}
	if scratch, ok := o.object("scratch"); ok {
		a.ScratchMountPath = scratch.str("mountPath", "")
		a.ScratchSizeLimit = scratch.str("sizeLimit", "")
		scratch.done(scratch.keysRead())
	}
	o.done(o.keysRead())
	return a
}

// readSizing reads a `sizing` object.
func readSizing(o configObject) components.Sizing {
	def := components.DefaultSizing()
	s := components.Sizing{
		Policy:             o.str("policy", def.Policy),
		BootSeconds:        o.integer("bootSeconds", def.BootSeconds),
		HPASyncSeconds:     o.integer("hpaSyncSeconds", def.HPASyncSeconds),
		ShortWindowSeconds: o.integer("shortWindowSeconds", def.ShortWindowSeconds),
		LongWindowSeconds:  o.integer("longWindowSeconds", def.LongWindowSeconds),
	}
	target := o.str("warmHitTarget", strconv.FormatFloat(def.WarmHitTarget, 'f', -1, 64))
	v, err := strconv.ParseFloat(target, 64)
	if err != nil || !warmHitTarget.MatchString(target) {
		o.fail("%swarmHitTarget is %q; write the share of claims that should find a warm sandbox as a decimal such as 0.99", o.at, target)
		v = def.WarmHitTarget
	}
	s.WarmHitTarget = v
	s.NodeLaunchSeconds = o.integer("nodeLaunchSeconds", def.NodeLaunchSeconds)
	s.SandboxesPerNode = o.integer("sandboxesPerNode", def.SandboxesPerNode)
	for _, w := range o.objects("schedule") {
		s.Schedule = append(s.Schedule, schedule.Window{
			Start: w.str("start", ""), End: w.str("end", ""),
			Timezone: w.str("timezone", schedule.DefaultTimezone), Warm: w.integer("warm", 0),
		})
		w.done(w.keysRead())
	}
	o.done(o.keysRead())
	return s
}

// readPools reads the `pools` list; each entry's defaults come from the top-level keys where
// they are bounds or settings, and from its name where they are names.
func (c *Config) readPools(raw string, errs *[]string) {
	var entries []json.RawMessage
	if err := json.Unmarshal([]byte(raw), &entries); err != nil {
		*errs = append(*errs, fmt.Sprintf("pools is not a list (%v); set it with `pulumi config set --path 'pools[0].name' <name>`", err))
		return
	}
	for i, e := range entries {
		o, ok := decodeObject(string(e), fmt.Sprintf("pools[%d].", i), errs)
		if !ok {
			continue
		}
		c.PoolList = append(c.PoolList, c.readPool(o))
	}
	if len(entries) == 0 {
		*errs = append(*errs, "pools is an empty list; remove it (`pulumi config rm pools`) for the one pool the top-level keys describe, or add a pool")
	}
}

// readPool reads one entry of the `pools` list.
func (c *Config) readPool(o configObject) *Pool {
	name := o.str("name", "")
	p := &Pool{
		Name: name, prefix: o.at,
		Namespace:        o.str("namespace", c.Namespace+"-"+name),
		TemplateName:     o.str("templateName", name+"-agent"),
		ScaledObjectName: name,
		PoolSettings: PoolSettings{
			MinReplicas:           o.integer("minReplicas", c.MinReplicas),
			MaxReplicas:           o.integer("maxReplicas", c.MaxReplicas),
			TargetValue:           o.str("targetValue", c.TargetValue),
			ActivationTargetValue: o.str("activationTargetValue", ""),
			LoadCap:               o.integer("loadCap", c.LoadCap),
			PollingInterval:       o.integer("pollingInterval", c.PollingInterval),
			FallbackReplicas:      o.integer("fallbackReplicas", c.FallbackReplicas),
			Headroom:              o.integer("headroom", 0),
			ClaimSelector:         o.str("claimSelector", ""),
			ExporterURL:           o.str("exporterUrl", ""),
			Agent:                 components.DefaultAgent(),
			Sizing:                components.DefaultSizing(),
			ScaleUp:               c.ScaleUp,
			ScaleDown:             c.ScaleDown,
		},
	}
	if t, ok := o.object("template"); ok {
		p.Agent = readAgent(t)
	}
	if s, ok := o.object("sizing"); ok {
		p.Sizing = readSizing(s)
	}
	if s, ok := o.object(scaleUpDirection.key); ok {
		p.ScaleUp, p.ownScaleUp = readScalingRules(s, c.ScaleUp, scaleUpDirection), true
	}
	if s, ok := o.object(scaleDownDirection.key); ok {
		p.ScaleDown, p.ownScaleDown = readScalingRules(s, c.ScaleDown, scaleDownDirection), true
	}
	o.done(o.keysRead())
	return p
}

// validatePool checks one pool's keys; every message starts with the key, prefixed with the
// pool's place in the list (pools[i].) when it comes from the list.
func (c *Config) validatePool(p *Pool, add func(string, ...any)) {
	padd := func(format string, args ...any) { add(p.prefix+format, args...) }
	if p.Listed() {
		checkNamespace(p.prefix+"namespace", p.Namespace, add)
		if len(p.Name) > 40 {
			padd("name %q is longer than 40 characters; the exporter's Role and URL carry it, so choose a shorter name", p.Name)
		}
	}
	for _, n := range []struct{ key, value string }{{p.nameKey(), p.Name}, {"templateName", p.TemplateName}} {
		// 63, not 253: the pool's name ends up in KEDA's HPA name and in label values.
		if len(n.value) > 63 || len(validation.IsDNS1123Subdomain(n.value)) > 0 {
			padd("%s %q is not a valid Kubernetes object name (lower-case letters, digits, '-' and '.', at most 63, starting and ending with a letter or digit)", n.key, n.value)
		}
	}

	if p.MinReplicas < 0 {
		padd("minReplicas is %d; it cannot be negative (0 allows scale-to-zero, 1 keeps one warm sandbox at rest)", p.MinReplicas)
	}
	if p.MaxReplicas < 1 || p.MaxReplicas > math.MaxInt32 {
		padd("maxReplicas is %d; it must be at least 1 and at most %d (the HPA's and the pool's replica counts are 32-bit)", p.MaxReplicas, math.MaxInt32)
	}
	if p.MinReplicas > p.MaxReplicas {
		padd("minReplicas (%d) is greater than maxReplicas (%d); lower minReplicas or raise maxReplicas", p.MinReplicas, p.MaxReplicas)
	}
	if p.LoadCap < 1 || p.LoadCap > p.MaxReplicas {
		padd("loadCap is %d; it must be between 1 and maxReplicas (%d), so verify never asks for more warm capacity than the pool's bound", p.LoadCap, p.MaxReplicas)
	}
	if v, err := strconv.ParseFloat(p.TargetValue, 64); !metricValue.MatchString(p.TargetValue) || err != nil || v <= 0 {
		padd("targetValue is %q; it must be a number greater than 0 (KEDA divides the claim count by it), written as a decimal with at most 3 decimals and below 1000000000, e.g. \"1\" for one warm sandbox per active claim", p.TargetValue)
	}
	if p.ActivationTargetValue != "" {
		if !metricValue.MatchString(p.ActivationTargetValue) {
			padd("activationTargetValue is %q; it must be a number of 0 or more, written as a decimal with at most 3 decimals and below 1000000000, or empty", p.ActivationTargetValue)
		} else if p.MinReplicas > 0 {
			// KEDA's activation only decides between 0 and 1 replicas; above a floor of 1 it is never consulted.
			padd("activationTargetValue is %q but minReplicas is %d: activation only decides whether the pool scales from 0 to 1, so with a floor above 0 it does nothing; remove it, or set minReplicas to 0",
				p.ActivationTargetValue, p.MinReplicas)
		}
	}
	if p.PollingInterval < 1 || p.PollingInterval > 3600 {
		padd("pollingInterval is %d; it must be between 1 and 3600 seconds", p.PollingInterval)
	}
	if p.FallbackReplicas < 0 || p.FallbackReplicas > p.MaxReplicas {
		padd("fallbackReplicas is %d; it must be between 0 (hold the current size when the exporter cannot answer) and maxReplicas (%d)", p.FallbackReplicas, p.MaxReplicas)
	}
	if p.Headroom < 0 || p.Headroom >= p.MaxReplicas {
		padd("headroom is %d; it must be between 0 (one warm sandbox per targetValue claims, nothing more) and maxReplicas-1 (%d): at maxReplicas or more the pool never leaves its maximum, which is a fixed pool (set minReplicas=maxReplicas instead)", p.Headroom, p.MaxReplicas-1)
	}
	if p.Headroom > 0 && p.MinReplicas == 0 {
		padd("headroom is %d with minReplicas 0: the headroom keeps at least %d warm sandboxes, so the pool can never scale to zero; set minReplicas to 1 or more, or headroom to 0", p.Headroom, p.Headroom)
	}
	if p.ExporterURL != "" {
		if u, err := url.Parse(p.ExporterURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			padd("exporterUrl is %q; it must be an http:// or https:// URL with a host (and no user info) that serves the exporter's /demand JSON", p.ExporterURL)
		}
	}
	if _, err := labels.Parse(p.ClaimSelector); err != nil {
		padd("claimSelector %q is not a Kubernetes label selector (%v); write it as kubectl -l takes it, e.g. app.kubernetes.io/part-of=warm-pool-autoscaling-keda or tier in (a,b)", p.ClaimSelector, err)
	}
	validateAgent("template.", p.Agent, padd)
	validateSizing(p, padd)
	if p.ownScaleUp {
		validateScalingRules(p.ScaleUp, p.MaxReplicas, scaleUpDirection, padd)
	}
	if p.ownScaleDown {
		validateScalingRules(p.ScaleDown, p.MaxReplicas, scaleDownDirection, padd)
	}
}

// validateAcrossPools checks what pools must not share.
func validateAcrossPools(c *Config, pools []*Pool, add func(string, ...any)) {
	seen := map[string]string{}
	for _, p := range pools {
		for _, n := range []struct{ kind, key, value string }{
			{"name", p.prefix + p.nameKey(), "pool/" + p.Name},
			{"templateName", p.prefix + "templateName", "template/" + p.TemplateName},
			{"namespace", p.prefix + "namespace", "namespace/" + p.Namespace},
		} {
			if p.Listed() && n.kind == "namespace" && p.Namespace == c.Namespace {
				add("%s is %q, the stack's namespace, which holds the exporter; give each pool a namespace of its own (the default is <namespace>-<name>)", n.key, p.Namespace)
			}
			if other, dup := seen[n.value]; dup {
				add("%s %q is also %s; every pool needs its own %s", n.key, strings.SplitN(n.value, "/", 2)[1], other, n.kind)
			}
			seen[n.value] = n.key
		}
	}
}

// exporterPools is the pool list the exporter is given (EXPORTER_POOLS), in pool order; nil for
// the one pool without arrival windows, which the exporter counts from its namespace and selector
// as it always has.
func (c *Config) exporterPools() []contract.ExporterPool {
	pools := c.Pools()
	if len(c.PoolList) == 0 && pools[0].ArrivalWindows() == nil {
		return nil
	}
	out := make([]contract.ExporterPool, len(pools))
	for i, p := range pools {
		out[i] = contract.ExporterPool{Name: p.Name, Namespace: p.Namespace, Selector: p.ClaimSelector, ArrivalWindowsSeconds: p.ArrivalWindows()}
	}
	return out
}

// jsonKind names a config value's JSON type as a message should: a user wrote JSON, not Go.
func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case bool:
		return "true or false"
	case json.Number, float64, int:
		return "a number"
	}
	return "that"
}

// maxEnvString is the kernel's bound on one "NAME=value" string of a process's environment
// (MAX_ARG_STRLEN, 32 pages of 4 KiB): above it the exporter's container cannot start.
const maxEnvString = 32 * 4096

// validateExporterPools runs the exporter's own parser on the exact EXPORTER_POOLS the program
// renders, and checks the string fits one environment variable.
func (c *Config) validateExporterPools(add func(string, ...any)) {
	list := c.exporterPools()
	if list == nil {
		return
	}
	rendered := make([]components.ExporterPool, len(list))
	for i, p := range list {
		rendered[i] = components.ExporterPool{ExporterPool: p}
	}
	env := components.PoolsEnv(rendered)
	if _, err := exporter.ParsePools(env); err != nil {
		if len(c.PoolList) == 0 {
			add("the claim exporter would refuse the pool the program renders for it from poolName, namespace and claimSelector: %v", err)
		} else {
			add("the claim exporter would refuse the pool list the program renders for it (its pool N is pools[N-1]): %v", err)
		}
	}
	if n := len(contract.ExporterPoolsEnv) + 1 + len(env); n > maxEnvString {
		add("the %d pools render to a %d-byte %s, above the %d bytes the kernel allows one environment variable, so the exporter could not start; "+
			"shorten the claimSelectors or split the pools across stacks", len(list), n, contract.ExporterPoolsEnv, maxEnvString)
	}
}

// isDNSLabel is Kubernetes' own rule for a namespace or handler name.
func isDNSLabel(s string) bool { return len(validation.IsDNS1123Label(s)) == 0 }
