package program

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"

	"warmpool.local/warm-pool-autoscaling-keda/components"
)

// secretEnvPath is where an AutoscaledWarmPool keeps a secret input secret: an env value of a
// template, or a template's whole env, the shorthand pool's or a listed pool's.
var secretEnvPath = regexp.MustCompile(`^(?:pools\[([0-9]+)\]\.)?template\.env(?:\.(.+))?$`)

// keepSecrets marks the env values a caller passed as secrets (their input paths, e.g.
// template.env.API_KEY), so the SandboxTemplates carry them as secrets and the engine keeps them
// encrypted in the state. A secret input anywhere else is refused, naming it: the program writes
// such a value in clear into the cluster's objects, and the state would hold it in clear.
func (c *Config) keepSecrets(paths []string) []string {
	var errs []string
	for _, path := range paths {
		m := secretEnvPath.FindStringSubmatch(path)
		if m == nil {
			errs = append(errs, fmt.Sprintf("%s is a secret, and %s keeps a secret input secret only in a template's env values (template.env.NAME, pools[i].template.env.NAME): "+
				"anywhere else it is written into the cluster's objects and the state in clear; pass %s as a plain value, or hand the secret to the agent through template.env", path, AutoscaledWarmPoolType, path))
			continue
		}
		agent := c.templateAgent(m[1])
		if agent == nil {
			continue // an entry that did not read, reported as such
		}
		names := []string{m[2]}
		if m[2] == "" {
			names = slices.Sorted(maps.Keys(agent.Env))
		}
		agent.SecretEnv = append(agent.SecretEnv, names...)
	}
	return errs
}

// templateAgent is the agent an input path's template describes: the one pool's (pool ""), or
// the listed pool's at index pool; nil for an entry that did not read.
func (c *Config) templateAgent(pool string) *components.Agent {
	if pool == "" {
		return &c.Agent
	}
	i, _ := strconv.Atoi(pool)
	if i >= len(c.PoolList) {
		return nil
	}
	return &c.PoolList[i].Agent
}
