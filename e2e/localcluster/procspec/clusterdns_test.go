package procspec

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/freeport"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"
	"warmpool.local/warm-pool-autoscaling-keda/poll"
)

// The CoreDNS the cache builds must run the Corefile the cluster generates:
// every directive in it needs its plugin compiled in (a missing `bind` once
// stopped the real-node run with "Unknown directive"). Started on a loopback
// address of its own, with an API server that does not answer, it must come
// up healthy and refuse a name outside the cluster's zones (it forwards
// nothing, so no query leaves the machine).
func TestLiveBuiltCoreDNSRunsTheGeneratedCorefile(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	bins, err := toolcache.Ensure(ctx, io.Discard, "coredns")
	if err != nil {
		t.Fatal(err)
	}
	ports, err := freeport.Ports(2)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The kubeconfig names a port nothing listens on: the kubernetes plugin
	// starts unsynced, which is enough to prove the Corefile is accepted.
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(unreachableKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	const bindAddress = "127.0.0.153" // all of 127/8 is loopback on Linux
	conf := filepath.Join(dir, "Corefile")
	if err := os.WriteFile(conf, []byte(corefile(bindAddress, ports[0], ports[1], kubeconfig)), 0o644); err != nil {
		t.Fatal(err)
	}
	// Started, logged and stopped as the control plane does it (by its own pid).
	procs := process.NewSet(dir, false)
	proc, err := procs.Start("coredns", bins.Path("coredns"), []string{"-conf", conf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { procs.Stop(5 * time.Second) })
	health := "http://127.0.0.1:" + strconv.Itoa(ports[0]) + "/health"
	if err := process.WaitHealthy(ctx, proc, health, nil, 30*time.Second); err != nil {
		log, _ := os.ReadFile(proc.Log)
		t.Fatalf("coredns on the generated Corefile: %v; its log:\n%s\nCorefile:\n%s", err, log, corefile(bindAddress, ports[0], ports[1], kubeconfig))
	}
	t.Logf("health %s answered 200", health)

	// The kubernetes plugin holds the server up to 5 s waiting for the API
	// server; health answers before that, so the first queries may be refused
	// by the kernel (nothing listens yet). Those are retried, never judged.
	var rcode dnsmessage.RCode
	if err := poll.Until(ctx, 30*time.Second, 200*time.Millisecond, func(context.Context) (bool, error) {
		var err error
		rcode, err = queryA(net.JoinHostPort(bindAddress, "53"), "example.com.")
		return err == nil, err
	}); err != nil {
		t.Fatalf("asking coredns for example.com: %v", err)
	}
	if rcode != dnsmessage.RCodeRefused {
		t.Fatalf("coredns answered %v for example.com, want REFUSED (a name outside cluster.local must not be forwarded)", rcode)
	}
	t.Logf("example.com: %v, as a server with no zone for it answers", rcode)
}

// queryA sends one A query over UDP and returns the answer's response code.
func queryA(server, name string) (dnsmessage.RCode, error) {
	q, err := (&dnsmessage.Message{
		Header:    dnsmessage.Header{ID: 4242, RecursionDesired: true},
		Questions: []dnsmessage.Question{{Name: dnsmessage.MustNewName(name), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}},
	}).Pack()
	if err != nil {
		return 0, err
	}
	conn, err := net.DialTimeout("udp", server, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return 0, err
	}
	if _, err := conn.Write(q); err != nil {
		return 0, err
	}
	buf := make([]byte, 1500)
	n, err := conn.Read(buf)
	if err != nil {
		return 0, err
	}
	var m dnsmessage.Message
	if err := m.Unpack(buf[:n]); err != nil {
		return 0, err
	}
	if m.Header.ID != 4242 || !m.Header.Response {
		return 0, fmt.Errorf("not an answer to our query: %+v", m.Header)
	}
	return m.Header.RCode, nil
}

const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: localcluster
  cluster:
    server: https://127.0.0.1:1
contexts:
- name: localcluster
  context:
    cluster: localcluster
    user: nobody
current-context: localcluster
users:
- name: nobody
  user:
    token: none
`
