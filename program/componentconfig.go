package program

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"warmpool.local/warm-pool-autoscaling-keda/components"
)

// ClusterKeys are the program's keys about its own cluster: make one, or which kubeconfig
// reaches it. An AutoscaledWarmPool component runs on the cluster its caller's kubernetes
// provider reaches, so these are not its inputs; every other key of Pulumi.yaml is, with the
// same default and the same rules (ComponentInputKeys).
var ClusterKeys = []string{
	"clusterMode", "clusterName", "kubernetesVersion", "vpcId", "privateSubnetIds", "publicSubnetIds",
	"adminPrincipalArns", "previewPrincipalArn", "endpointPrivateAccess", "endpointPublicAccess",
	"endpointPublicAccessCidrs", "tags", "upgradePolicy", "clusterLogTypes", "clusterLogRetentionDays", "secretsKmsKeyArn", "natGatewayPerZone", "deletionProtection",
	"sandboxNodePool", "sandboxNodeCpu", "kubeconfig", "kubeContext",
}

// errInputNotSet is Try's answer for a key the component was not given: the default applies.
var errInputNotSet = errors.New("input not set")

// inputSource serves a component's inputs as the config reader's keys, in the form the CLI
// hands config over (scalars as text, lists and objects as JSON), and records what was read.
type inputSource struct {
	inputs map[string]string
	read   map[string]bool
}

func (s *inputSource) Try(key string) (string, error) {
	s.read[key] = true
	v, ok := s.inputs[key]
	if !ok || slices.Contains(ClusterKeys, key) {
		return "", errInputNotSet
	}
	return v, nil
}

// LoadComponentConfig is LoadConfig for an AutoscaledWarmPool component: the same reader, defaults
// and rules over its inputs, on the caller's cluster, with the paths the caller marked secret
// (keepSecrets) and, in a preview, those not known yet (awaitUnknown). Every mistake is reported
// at once, each naming its input;
// nothing is registered before the inputs are valid.
func LoadComponentConfig(project, stack, name string, in ComponentInputs) (*Config, error) {
	inputs := in.Values
	src := &inputSource{inputs: inputs, read: map[string]bool{}}
	r := &configReader{cfg: src}
	c := r.read(project, stack)
	c.ClusterMode, c.ClusterName, c.callersCluster = components.ModeExisting, "", true
	var errs []string
	for _, key := range slices.Sorted(maps.Keys(inputs)) {
		switch {
		case slices.Contains(ClusterKeys, key):
			errs = append(errs, fmt.Sprintf("%s is not an input of %s: it is the program's own cluster's key, and the component runs on the cluster its kubernetes provider reaches (pass that provider in the providers option); remove %s", key, AutoscaledWarmPoolType, key))
		case !src.read[key]:
			errs = append(errs, fmt.Sprintf("%s is not an input of %s; its inputs are %s", key, AutoscaledWarmPoolType, strings.Join(ComponentInputKeys(), ", ")))
		}
	}
	errs = append(errs, c.keepSecrets(in.Secrets)...)
	errs = append(errs, c.awaitUnknown(in.Unknown)...)
	if errs = c.problems(append(r.errs, errs...)...); len(errs) > 0 {
		return nil, fmt.Errorf("invalid inputs of %s %q:\n  - %s", AutoscaledWarmPoolType, name, strings.Join(errs, "\n  - "))
	}
	return c, nil
}

// ComponentInputKeys are the keys the program reads less ClusterKeys, sorted: an
// AutoscaledWarmPool's inputs. The package's schema lists exactly these (provider's tests).
func ComponentInputKeys() []string {
	src := &inputSource{read: map[string]bool{}}
	(&configReader{cfg: src}).read("project", "stack")
	var keys []string
	for key := range src.read {
		if !slices.Contains(ClusterKeys, key) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys
}
