package verifier

import (
	"context"
	"testing"

	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// The access reviews pass on the blueprint's Role and fail on each grant too
// many (or too few), and on a review that could not be made.
func TestAccess(t *testing.T) {
	cases := []struct {
		name     string
		setup    func(c *cluster)
		wantFail []string
	}{
		{name: "the blueprint's Role"},
		{name: "cannot even list", setup: func(c *cluster) { c.denyAll = true },
			wantFail: []string{"may get sandboxclaims", "may list sandboxclaims"}},
		{name: "may watch", setup: func(c *cluster) { c.allowExtra = map[string]bool{"watch sandboxclaims " + testNS: true} },
			wantFail: []string{"may not watch sandboxclaims"}},
		{name: "may delete", setup: func(c *cluster) { c.allowExtra = map[string]bool{"delete sandboxclaims " + testNS: true} },
			wantFail: []string{"may not delete sandboxclaims"}},
		{name: "a ClusterRole: list across namespaces", setup: func(c *cluster) { c.allowExtra = map[string]bool{"list sandboxclaims ": true} },
			wantFail: []string{"may not list sandboxclaims.extensions.agents.x-k8s.io across all namespaces"}},
		{name: "reads another namespace", setup: func(c *cluster) { c.allowExtra = map[string]bool{"list sandboxclaims default": true} },
			wantFail: []string{"may not list sandboxclaims.extensions.agents.x-k8s.io in default"}},
		{name: "reads secrets", setup: func(c *cluster) { c.allowExtra = map[string]bool{"list secrets " + testNS: true} },
			wantFail: []string{"may not list secrets"}},
		{name: "may scale the pool", setup: func(c *cluster) { c.allowExtra = map[string]bool{"update sandboxwarmpools " + testNS: true} },
			wantFail: []string{"may not update sandboxwarmpools/scale"}},
		{name: "reviews refused", setup: func(c *cluster) { c.sarErr = true },
			wantFail: []string{"may get sandboxclaims", "may not delete sandboxclaims", "may not list secrets"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			if tc.setup != nil {
				tc.setup(c)
			}
			c.start()
			var buf syncBuffer
			rep := newReport(&buf)
			r := newRunner(testConfig(), c.kube, c.dyn, nil, nil, rep)
			if err := r.access(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(rep.Checks) != len(accessReviews(testNS, testNS)) {
				t.Fatalf("%d checks for %d reviews", len(rep.Checks), len(accessReviews(testNS, testNS)))
			}
			if len(tc.wantFail) == 0 && !rep.OK() {
				t.Fatalf("failures: %v", rep.Failures())
			}
			for _, f := range tc.wantFail {
				if got := status(t, rep, f); got != report.Fail {
					t.Errorf("%q is %s, want FAIL\n%s", f, got, buf.String())
				}
			}
		})
	}
}
