package components

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"warmpool.local/warm-pool-autoscaling-keda/poll"
)

// What create mode waits for on a cluster it has just made, before anything in the cluster:
//
//  1. its API endpoint answering GET /healthz (awscomponents/cluster.go). EKS reports the
//     cluster ACTIVE, and pulumi-eks hands on the kubeconfig, possibly before the endpoint
//     answers; pulumi-eks v3.9.1 waits for /healthz only
//     `if (!pulumi.runtime.isDryRun() && args.endpointPublicAccess)` (nodejs/eks/cluster/cluster.ts,
//     line 799; the condition comes from pulumi/pulumi-eks#1135, which skips the wait for
//     private-only endpoints), so without endpointPublicAccess set it does not wait at all. The
//     program waits itself, for any endpoint this machine can reach.
//  2. the RuntimeClass isolated-sandbox (sandboxruntime.go), which EKS Auto Mode adds to the
//     cluster; nothing documents that it exists the moment the cluster is ACTIVE.
//
// Neither wait runs in a preview (dry run), nor in existing mode.

// Patience bounds one of those waits: how long at most, and how often to ask.
type Patience struct {
	Timeout  time.Duration
	Interval time.Duration
}

var (
	// APIEndpointPatience bounds the wait for the new cluster's endpoint to answer /healthz.
	// pulumi-eks's own wait gives up after 300 s and carries on; this one fails with a message.
	APIEndpointPatience = Patience{Timeout: 10 * time.Minute, Interval: 5 * time.Second}
	// RuntimeClassPatience bounds the wait for Auto Mode to add the isolated-sandbox RuntimeClass.
	RuntimeClassPatience = Patience{Timeout: 5 * time.Minute, Interval: 10 * time.Second}
)

// wait calls check every p.Interval until it reports done, p.Timeout has passed or ctx ends
// (poll.Wait: a failed check is retried, never the end of the wait). After each check that is
// not done it calls progress with the time waited and why (the check's error, or nil). When it
// gives up it returns the last reason: the last check's error, nil if the last check answered
// "not yet" (a check the deadline cut short does not replace the answer before it), or ctx's
// error when ctx ended.
func wait(ctx context.Context, p Patience, check func(context.Context) (bool, error), progress func(waited time.Duration, why error)) (bool, error) {
	err := poll.Wait{Timeout: p.Timeout, Interval: p.Interval,
		Progress: func(s poll.Status) { progress(s.Waited, s.Err) }}.Until(ctx, check)
	var nr *poll.NotReached
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &nr) && nr.Interrupted != nil:
		return false, nr.Interrupted
	case errors.As(err, &nr):
		return false, nr.Err
	}
	return false, err
}

// waited is how a duration reads in progress lines: whole seconds.
func waited(d time.Duration) string { return d.Round(time.Second).String() }

// kubeconfigEndpoint reads the server and its CA from the kubeconfig of the current context (or
// the only cluster): pulumi-eks's KubeconfigJson has one cluster with server and
// certificate-authority-data (generateKubeconfig in nodejs/eks/cluster/cluster.ts).
func kubeconfigEndpoint(kubeconfig string) (server string, roots *x509.CertPool, err error) {
	config, err := clientcmd.Load([]byte(kubeconfig))
	if err != nil {
		return "", nil, fmt.Errorf("the new cluster's kubeconfig does not parse: %w", err)
	}
	name := ""
	if c, ok := config.Contexts[config.CurrentContext]; ok {
		name = c.Cluster
	} else if len(config.Clusters) == 1 {
		for n := range config.Clusters {
			name = n
		}
	}
	cluster, ok := config.Clusters[name]
	if !ok || cluster.Server == "" {
		return "", nil, errors.New("the new cluster's kubeconfig names no server")
	}
	if len(cluster.CertificateAuthorityData) > 0 {
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(cluster.CertificateAuthorityData) {
			return "", nil, errors.New("the new cluster's kubeconfig has certificate-authority-data that holds no PEM certificate")
		}
	}
	return cluster.Server, roots, nil
}

// WaitForAPIEndpoint waits until the kubeconfig's server answers GET /healthz, without credentials,
// as pulumi-eks's own wait asks it (cluster.ts, lines 799-817): Kubernetes' default ClusterRole
// system:public-info-viewer lets everyone, unauthenticated too, read /healthz, /livez, /readyz and
// /version. So the wait needs neither the access entry nor the AWS CLI. 200 is ready; 401 or 403
// also means the API server itself answered (on a cluster that refuses anonymous requests) and is
// taken as ready; anything else, or no answer, is waited out. The server's certificate is checked
// against the cluster's CA from the kubeconfig.
func WaitForAPIEndpoint(ctx context.Context, kubeconfig string, p Patience, say func(msg string, ephemeral bool)) error {
	server, roots, err := kubeconfigEndpoint(kubeconfig)
	if err != nil {
		return err
	}
	healthz := strings.TrimRight(server, "/") + "/healthz"
	if _, err := url.Parse(healthz); err != nil {
		return fmt.Errorf("the new cluster's server %q is not a URL: %w", server, err)
	}
	client := &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			Proxy:           http.ProxyFromEnvironment,
			TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		},
	}
	defer client.CloseIdleConnections()
	check := func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, healthz, nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		switch resp.StatusCode {
		case http.StatusOK, http.StatusUnauthorized, http.StatusForbidden:
			return true, nil
		default:
			return false, fmt.Errorf("GET /healthz answered %s", resp.Status)
		}
	}
	misses := 0
	ok, why := wait(ctx, p, check, func(d time.Duration, why error) {
		if misses++; misses == 1 {
			say(fmt.Sprintf("the new cluster's API endpoint %s does not answer GET /healthz yet (%v); waiting up to %s for it", server, why, p.Timeout), false)
			return
		}
		say(fmt.Sprintf("waiting for the API endpoint %s to answer /healthz (%s of at most %s; last: %v)", server, waited(d), p.Timeout, why), true)
	})
	if ok {
		if misses > 0 {
			say(fmt.Sprintf("the new cluster's API endpoint %s answers /healthz", server), false)
		}
		return nil
	}
	return fmt.Errorf("the new cluster's API endpoint %s did not answer GET /healthz within %s (last: %v). "+
		"Nothing has been created in the cluster yet. The cluster's endpoint is public, so check that this machine reaches it "+
		"(a proxy: HTTPS_PROXY; a firewall), then run `pulumi up` again: it resumes here", server, p.Timeout, why)
}

// RuntimeClassReader asks the cluster whether a RuntimeClass exists: (false, nil) when the API
// answers that it does not, an error when the API could not answer.
type RuntimeClassReader func(ctx context.Context, name string) (bool, error)

// kubeconfigRuntimeClassReader reads RuntimeClasses with the kubeconfig's credentials (on EKS, the
// `aws eks get-token` exec plugin, as the Kubernetes provider uses them).
func kubeconfigRuntimeClassReader(kubeconfig string) (RuntimeClassReader, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(kubeconfig))
	if err != nil {
		return nil, fmt.Errorf("the new cluster's kubeconfig: %w", err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("a client for the new cluster: %w", err)
	}
	client.Timeout = 10 * time.Second
	base := strings.TrimRight(cfg.Host, "/") + "/apis/node.k8s.io/v1/runtimeclasses/"
	return func(ctx context.Context, name string) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+url.PathEscape(name), nil)
		if err != nil {
			return false, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		switch resp.StatusCode {
		case http.StatusOK:
			var rc struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(body, &rc); err != nil || rc.Metadata.Name != name {
				return false, fmt.Errorf("GET RuntimeClass %s answered 200 with something that is not that RuntimeClass", name)
			}
			return true, nil
		case http.StatusNotFound:
			return false, nil
		default:
			return false, fmt.Errorf("GET RuntimeClass %s answered %s", name, resp.Status)
		}
	}, nil
}

// waitForRuntimeClass waits until read finds the RuntimeClass, saying what it waits for.
func waitForRuntimeClass(ctx context.Context, read RuntimeClassReader, name string, p Patience, say func(msg string, ephemeral bool)) error {
	check := func(ctx context.Context) (bool, error) { return read(ctx, name) }
	misses := 0
	ok, why := wait(ctx, p, check, func(d time.Duration, why error) {
		state := "the API answers that it does not exist"
		if why != nil {
			state = "the read failed: " + why.Error()
		}
		if misses++; misses == 1 {
			say(fmt.Sprintf("RuntimeClass %s is not on the new cluster yet (%s): EKS Auto Mode adds it; waiting up to %s for it", name, state, p.Timeout), false)
			return
		}
		say(fmt.Sprintf("waiting for RuntimeClass %s, which EKS Auto Mode adds to a new cluster (%s of at most %s; %s)", name, waited(d), p.Timeout, state), true)
	})
	if ok {
		if misses > 0 {
			say(fmt.Sprintf("RuntimeClass %s is on the new cluster", name), false)
		}
		return nil
	}
	last := "the API answered that it does not exist"
	if why != nil {
		last = "the last read failed: " + why.Error()
	}
	return fmt.Errorf("RuntimeClass %q is not on the new cluster after waiting %s (%s). EKS Auto Mode adds it to a cluster of "+
		"Kubernetes 1.36 or newer (Nitro Sandboxes) some time after the cluster is ACTIVE, and the warm pool's pods cannot start without it; "+
		"nothing has been created in the cluster yet. Run `pulumi up` again: it resumes here and waits again. If it never appears, "+
		"check the cluster's version and that Auto Mode is enabled (`aws eks describe-cluster --name <cluster>`)", name, p.Timeout, last)
}

// SayOn prints a wait's progress on the component: ephemeral lines are the row's status in the
// CLI's display, the others stay in the output.
func SayOn(ctx *pulumi.Context, on pulumi.Resource) func(msg string, ephemeral bool) {
	return func(msg string, ephemeral bool) {
		_ = ctx.Log.Info(msg, &pulumi.LogArgs{Resource: on, Ephemeral: ephemeral})
	}
}
