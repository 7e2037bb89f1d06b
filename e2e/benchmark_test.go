package e2e

// Benchmarks on the local control plane. They are measurements, not tests:
// run them with
//
//	go test -C e2e -run '^$' -bench . -benchtime 1x -timeout 60m .
//
// (E2E_HPA_SYNC_PERIOD sets the HPA sync period; 15s, EKS's, by default.)
// Each demand change comes at a random phase of the HPA's sync period, so the
// figures are the latency a user sees, not the worst case of a phase-locked loop.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/tcpproxy"
)

// BenchmarkReactionLatency measures, over E2E_TRIALS trials (default 10), the
// time from a demand change (3 claims created, or deleted) to spec.replicas
// reaching the new target (3, or the floor 1), on the stack as `pulumi up`
// deploys it. Reports p50/p95 for each direction.
func BenchmarkReactionLatency(b *testing.B) {
	trials := 10
	if v := os.Getenv("E2E_TRIALS"); v != "" {
		trials, _ = strconv.Atoi(v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	sync := hpaSyncPeriod(b)
	e := newEnv(b, ctx, sync)
	e.up(ctx, b)
	e.startExporterWithToken(ctx, b)
	claims := []string{"bench-1", "bench-2", "bench-3"}
	var up, down []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for trial := 0; trial < trials; trial++ {
			// A random phase against the HPA's sync: changing demand right after
			// the previous decision would always wait a whole period.
			time.Sleep(time.Duration(rand.Int64N(int64(sync))))
			start := time.Now()
			for _, n := range claims {
				e.createClaim(ctx, b, n)
			}
			e.waitSpecReplicas(ctx, b, 3, 3*time.Minute)
			up = append(up, time.Since(start))
			time.Sleep(time.Duration(rand.Int64N(int64(sync))))
			start = time.Now()
			for _, n := range claims {
				e.deleteClaim(ctx, b, n)
			}
			e.waitSpecReplicas(ctx, b, 1, 3*time.Minute)
			down = append(down, time.Since(start))
			fmt.Fprintf(os.Stderr, "trial %d: up %s, down %s\n", trial+1, up[len(up)-1].Round(10*time.Millisecond), down[len(down)-1].Round(10*time.Millisecond))
		}
	}
	b.StopTimer()
	b.ReportMetric(percentile(up, 50).Seconds(), "up-p50-s")
	b.ReportMetric(percentile(up, 95).Seconds(), "up-p95-s")
	b.ReportMetric(percentile(down, 50).Seconds(), "down-p50-s")
	b.ReportMetric(percentile(down, 95).Seconds(), "down-p95-s")
	b.ReportMetric(sync.Seconds(), "hpa-sync-s")
	fmt.Fprintf(os.Stderr, "HPA sync %s, KEDA pollingInterval 5s, %d trials: up p50 %s p95 %s max %s; down p50 %s p95 %s max %s\n",
		sync, len(up), percentile(up, 50), percentile(up, 95), percentile(up, 100), percentile(down, 50), percentile(down, 95), percentile(down, 100))
}

// BenchmarkExporterAt10000Claims measures one scrape of the exporter (a
// local process with a TokenRequest token of a get/list-only ServiceAccount)
// against the real API server holding 10 000 SandboxClaims, for each counting
// path, beside a plain full-object list of the same claims with the same
// token: bytes read off the wire (TLS included, the Go client's default gzip
// negotiation) and time per scrape. The agent-sandbox controller is not
// started, so the claims are inert objects and nothing else loads the server.
func BenchmarkExporterAt10000Claims(b *testing.B) {
	if os.Getenv(localcluster.SkipEnv) == "1" {
		b.Skipf("%s=1: nothing measured", localcluster.SkipEnv)
	}
	const claims = 10000
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	work := b.TempDir()
	c, err := framework.StartCluster(ctx, localcluster.Options{StateDir: filepath.Join(work, "cluster"), Progress: framework.NewLogWriter(b),
		Without: []string{"agent-sandbox-controller", "keda"}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	ns := "bench"
	token := benchNamespace(b, ctx, c, ns)
	tokenFile := filepath.Join(work, "token")
	writeFileAtomic(b, tokenFile, token)
	start := time.Now()
	createClaims(b, ctx, c, ns, claims)
	b.Logf("created %d claims in %s", claims, time.Since(start).Round(time.Second))

	apiURL, _ := url.Parse(c.APIServerURL)
	proxy, err := tcpproxy.Start(apiURL.Host)
	if err != nil {
		b.Fatal(err)
	}
	defer proxy.Close()
	exporterBin := goBuild(b, work, framework.ExporterCommand)

	scrape := func(b *testing.B, url string) {
		code, body := framework.HTTPGet(url)
		if code != http.StatusOK {
			b.Fatalf("exporter answered %d: %s", code, body)
		}
	}
	for _, path := range []struct{ name, selector string }{
		{"remainingItemCount(no selector)", ""},
		{"paginated-metadata-list(selector)", "bench=claim"},
	} {
		b.Run(path.name, func(b *testing.B) {
			exp := framework.LocalExporter{Binary: exporterBin, APIURL: "https://" + proxy.Addr(), TokenFile: tokenFile,
				CAFile: c.CAFile, Namespace: ns, Selector: path.selector, Addr: freeAddr(b), ReadTimeout: 60 * time.Second}
			procs := process.NewSet(work, false)
			defer procs.Stop(5 * time.Second)
			if _, err := exp.Start(ctx, procs, "claim-exporter"); err != nil {
				b.Fatal(err)
			}
			framework.Eventually(b, ctx, "the exporter to count "+strconv.Itoa(claims), time.Minute, func(context.Context) (bool, error) {
				d, err := framework.Demand(exp.DemandURL())
				return err == nil && d.ActiveClaims == claims, err
			})
			before := proxy.BytesFromTarget()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				scrape(b, exp.DemandURL())
			}
			b.StopTimer()
			b.ReportMetric(float64(proxy.BytesFromTarget()-before)/float64(b.N), "wire-bytes/scrape")
		})
	}
	b.Run("full-list(the blueprint's request)", func(b *testing.B) {
		client := benchHTTPClient(b, c.CAFile)
		req := func() {
			r, _ := http.NewRequest(http.MethodGet, "https://"+proxy.Addr()+"/apis/"+contract.AgentSandboxExtensionsAPIVersion+"/namespaces/"+ns+"/"+contract.SandboxClaimsResource, nil)
			r.Header.Set("Authorization", "Bearer "+token)
			resp, err := client.Do(r)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("full list answered %s", resp.Status)
			}
		}
		before := proxy.BytesFromTarget()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			req()
		}
		b.StopTimer()
		b.ReportMetric(float64(proxy.BytesFromTarget()-before)/float64(b.N), "wire-bytes/scrape")
	})
}

// benchNamespace makes ns with a ServiceAccount whose Role is the exporter's
// (get, list on sandboxclaims) and returns a TokenRequest token for it.
func benchNamespace(b *testing.B, ctx context.Context, c *localcluster.Cluster, ns string) string {
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	framework.Eventually(b, ctx, "the default ServiceAccount", 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	})
	if _, err := c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: contract.ExporterName}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: contract.ExporterName}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{contract.AgentSandboxExtensionsGroup}, Resources: []string{contract.SandboxClaimsResource}, Verbs: []string{"get", "list"}}}}
	if _, err := c.Client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: contract.ExporterName},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: contract.ExporterName},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: contract.ExporterName, Namespace: ns}}}
	if _, err := c.Client.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	token, err := framework.Token(ctx, c.Client, ns, contract.ExporterName)
	if err != nil {
		b.Fatal(err)
	}
	return token
}

// createClaims creates n claims with a few parallel writers; each is created
// as a client would (server-side apply would add its own managedFields).
func createClaims(b *testing.B, ctx context.Context, c *localcluster.Cluster, ns string, n int) {
	const writers = 8
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		go func(w int) {
			for i := w; i < n; i += writers {
				u := framework.NewClaim(fmt.Sprintf("claim-%05d", i), contract.DefaultPoolName, map[string]any{"bench": "claim"})
				if _, err := c.Dynamic.Resource(gvr.SandboxClaim).Namespace(ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < writers; w++ {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
}

// benchHTTPClient is a plain Go client trusting the cluster CA: the same
// transport defaults (gzip negotiation included) as the exporter's.
func benchHTTPClient(b *testing.B, caFile string) *http.Client {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		b.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (p*len(s)+99)/100 - 1
	if i < 0 {
		i = 0
	}
	return s[i].Round(10 * time.Millisecond)
}
