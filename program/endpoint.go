package program

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// Create mode's defaults: the private endpoint on (nodes and anything in the VPC reach the API
// server without leaving it), the public one on so that `up` from a laptop or a hosted CI runner
// works the first time (narrow it with endpointPublicAccessCidrs, or turn it off), and the
// standard-support upgrade policy.
const (
	defaultEndpointPrivateAccess = true
	defaultEndpointPublicAccess  = true
	defaultUpgradePolicy         = components.UpgradePolicyStandard
)

// defaultClusterLogTypes: who called the API server and what they did (api, audit) and who
// they authenticated as (authenticator). These pods run code a model wrote, so a security review
// asks for the audit trail first; controllerManager and scheduler are for debugging the control
// plane and cost ingestion without answering that question. CloudWatch Logs bills what is sent.
var defaultClusterLogTypes = []string{"api", "audit", "authenticator"}

// defaultClusterLogRetentionDays: a quarter's audit trail, what a review of an incident reaches back
// to; longer retention belongs in the team's log archive, not in a stack's log group.
const defaultClusterLogRetentionDays = 90

// kmsKeyArn is a KMS key's or alias's ARN in any partition, the forms EKS's encryptionConfig takes
// (EKS API reference, Provider.keyArn).
var kmsKeyArn = regexp.MustCompile(`^arn:aws(-cn|-us-gov|-iso|-iso-b|-iso-e|-iso-f)?:kms:[a-z]{2}(-[a-z]+)+-[0-9]:[0-9]{12}:(key/[A-Za-z0-9-]+|alias/[A-Za-z0-9/_-]+)$`)

// awsTagText is the characters IAM allows in a tag key or value ([\p{L}\p{Z}\p{N}_.:/=+\-@]*, IAM
// API reference, Tag), the narrowest of the services the stack tags (EC2 and EKS take more):
// pulumi-eks tags the cluster's IAM role, so a tag IAM refuses fails `up` after the network exists.
var awsTagText = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$`)

// AWS's rules for tags, in Unicode characters: 127 for a key is EC2's (its API reference, Tag:
// "a maximum of 127 Unicode characters"; most services take 128), 256 for a value.
const (
	maxTagKey   = 127
	maxTagValue = 256
	// maxUserTags leaves room under AWS's 50 tags per resource for the program's own (Name, the
	// cluster's, the load-balancer role and the stack's).
	maxUserTags = 45
)

// AWSTags are the tags on every AWS resource the stack creates: the team's `tags`, and the
// stack's own, which says which stack made it.
func (c *Config) AWSTags() map[string]string {
	m := map[string]string{}
	for k, v := range c.Tags {
		m[k] = v
	}
	m[contract.StackLabel] = c.StackLabelValue()
	return m
}

// readTags reads the `tags` object, a map of tag keys to values.
func (c *Config) readTags(r *configReader) {
	raw, err := r.cfg.Try("tags")
	if err != nil || strings.Join(strings.Fields(raw), "") == "{}" {
		return
	}
	if o, ok := decodeObject(raw, "tags.", &r.errs); ok {
		// Read as the one field of an object around it, so messages name tags.<key>.
		outer := configObject{m: map[string]any{"tags": o.m}, errs: o.errs, used: map[string]bool{}}
		c.Tags = outer.stringMap("tags")
	}
}

// validateCreateMode checks the endpoint, tag and upgrade-policy keys of create mode.
func (c *Config) validateCreateMode(add func(string, ...any)) {
	if !c.EndpointPrivateAccess && !c.EndpointPublicAccess {
		add("endpointPrivateAccess and endpointPublicAccess are both false; EKS needs at least one endpoint: keep the private one (reach it from inside the VPC) or the public one")
	}
	if !c.EndpointPublicAccess && len(c.EndpointPublicAccessCidrs) > 0 {
		add("endpointPublicAccessCidrs is set but endpointPublicAccess is false, so it would allow nothing; remove it (`pulumi config rm endpointPublicAccessCidrs`) or turn the public endpoint on")
	}
	// Without the private endpoint the nodes reach the API server through the public one, from
	// their NAT's address: with the program's own network it joins the list
	// (awscomponents/cluster.go); a VPC of the team's own has a NAT the program cannot know, so
	// the nodes could be locked out.
	natJoins := !c.EndpointPrivateAccess && c.EndpointPublicAccess && len(c.EndpointPublicAccessCidrs) > 0
	if natJoins && c.VpcID != "" {
		add("endpointPrivateAccess is false and endpointPublicAccessCidrs restricts the public endpoint, with the VPC %s of your own: the nodes would reach the API server through the public endpoint "+
			"from your NAT's address, which the program cannot know, and would be locked out unless it is listed; keep endpointPrivateAccess true (the default: nodes stay inside the VPC)", c.VpcID)
	}
	maxCidrs, why := components.MaxPublicAccessCidrs, ""
	if natJoins && c.VpcID == "" {
		// the NAT gateways' addresses take one each
		if c.NatGatewayPerZone {
			maxCidrs -= components.NetworkZones
			why = fmt.Sprintf(", and the program adds its %d NAT gateways' addresses (endpointPrivateAccess is false, natGatewayPerZone is true), so give at most %d", components.NetworkZones, maxCidrs)
		} else {
			maxCidrs--
			why = fmt.Sprintf(", and the program adds its NAT gateway's address (endpointPrivateAccess is false), so give at most %d", maxCidrs)
		}
	}
	if len(c.EndpointPublicAccessCidrs) > maxCidrs {
		add("endpointPublicAccessCidrs has %d blocks; EKS allows %d per cluster%s", len(c.EndpointPublicAccessCidrs), components.MaxPublicAccessCidrs, why)
	}
	if len(c.ClusterLogTypes) > 0 && !slices.Contains(components.LogRetentionDays, c.ClusterLogRetentionDays) {
		add("clusterLogRetentionDays is %d; CloudWatch Logs keeps a group for one of %v days (default %d)", c.ClusterLogRetentionDays, components.LogRetentionDays, defaultClusterLogRetentionDays)
	}
	if c.SecretsKmsKeyArn != "" && !kmsKeyArn.MatchString(c.SecretsKmsKeyArn) {
		add("secretsKmsKeyArn is %q; give the ARN of a symmetric KMS key (or its alias) in the cluster's region, such as arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab", c.SecretsKmsKeyArn)
	}
	seenLog := map[string]bool{}
	for _, t := range c.ClusterLogTypes {
		if !slices.Contains(components.ClusterLogTypes, t) {
			add("clusterLogTypes has %q; EKS's control-plane log types are %s (default %s; [] sends none)", t, strings.Join(components.ClusterLogTypes, ", "), strings.Join(defaultClusterLogTypes, ", "))
		} else if seenLog[t] {
			add("clusterLogTypes lists %q twice; list it once", t)
		}
		seenLog[t] = true
	}
	seen := map[string]bool{}
	for _, cidr := range c.EndpointPublicAccessCidrs {
		if msg := components.CheckPublicAccessCidr("endpointPublicAccessCidrs", cidr); msg != "" {
			add("%s", msg)
		}
		if seen[cidr] {
			add("endpointPublicAccessCidrs lists %q twice; list it once", cidr)
		}
		seen[cidr] = true
	}
	if c.UpgradePolicy != components.UpgradePolicyStandard && c.UpgradePolicy != components.UpgradePolicyExtended {
		add("upgradePolicy is %q; it must be %s (the default: upgraded at the end of standard support, no extended-support charge) or %s (stays on its version into paid extended support)",
			c.UpgradePolicy, components.UpgradePolicyStandard, components.UpgradePolicyExtended)
	}
	if len(c.Tags) > maxUserTags {
		add("tags has %d tags; AWS allows 50 per resource and the program adds up to 5 of its own, so give at most %d", len(c.Tags), maxUserTags)
	}
	for k, v := range c.Tags {
		switch {
		case k == "" || utf8.RuneCountInString(k) > maxTagKey:
			add("tags has a key of %d characters; AWS tag keys are 1..%d (EC2's bound)", utf8.RuneCountInString(k), maxTagKey)
		case strings.HasPrefix(strings.ToLower(k), "aws:"):
			add("tags.%s: the aws: prefix is reserved for AWS's own tags; choose another key", k)
		case k == "Name" || k == contract.StackLabel || strings.HasPrefix(k, "kubernetes.io/"):
			add("tags.%s is a tag the program sets itself (Name, %s, kubernetes.io/*: EKS and load balancers read them); choose another key", k, contract.StackLabel)
		case utf8.RuneCountInString(v) > maxTagValue:
			add("tags.%s has a value of %d characters; AWS tag values are at most %d", k, utf8.RuneCountInString(v), maxTagValue)
		case !awsTagText.MatchString(k) || !awsTagText.MatchString(v):
			add("tags.%s = %q has a character IAM refuses in tags (the cluster's IAM role carries them); use letters, digits, spaces and _ . : / = + - @", k, v)
		}
	}
}

// createModeKeysSet are the create-mode keys the stack sets away from their defaults.
func createModeKeysSet(r *configReader) []string {
	var set []string
	for _, k := range []struct{ key, def string }{
		{"endpointPrivateAccess", strconv.FormatBool(defaultEndpointPrivateAccess)},
		{"endpointPublicAccess", strconv.FormatBool(defaultEndpointPublicAccess)},
		{"endpointPublicAccessCidrs", "[]"},
		{"tags", "{}"},
		{"upgradePolicy", defaultUpgradePolicy},
		{"clusterLogTypes", `["` + strings.Join(defaultClusterLogTypes, `","`) + `"]`},
		{"clusterLogRetentionDays", strconv.Itoa(defaultClusterLogRetentionDays)},
		{"secretsKmsKeyArn", ""},
		{"natGatewayPerZone", "false"},
		{"deletionProtection", "false"},
		{"sandboxNodePool", strconv.FormatBool(defaultSandboxNodePool)},
		{"sandboxNodeCpu", strconv.Itoa(defaultSandboxNodeCPU)},
	} {
		// An empty value is the str/list readers' to judge, not a setting.
		if v, _ := r.cfg.Try(k.key); r.setAwayFrom(k.key, k.def) && strings.TrimSpace(v) != "" {
			set = append(set, k.key)
		}
	}
	return set
}

// refuseCreateModeKeys refuses, in existing mode, the create-mode keys the stack set.
func (c *Config) refuseCreateModeKeys(add func(string, ...any)) {
	if len(c.createModeKeysSet) > 0 {
		add("%s only apply to a cluster the stack creates (clusterMode=create); an existing cluster keeps its endpoint, tags, logs, encryption, upgrade policy, network, nodes and protection, so remove them (%s)",
			strings.Join(c.createModeKeysSet, ", "), rmCommands(c.createModeKeysSet))
	}
}

func rmCommands(keys []string) string {
	cmds := make([]string, len(keys))
	for i, k := range keys {
		cmds[i] = fmt.Sprintf("`pulumi config rm %s`", k)
	}
	return strings.Join(cmds, ", ")
}
