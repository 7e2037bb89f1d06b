package procspec

import (
	"strconv"
	"time"
)

// EtcdSettings are what etcd's command line depends on.
type EtcdSettings struct {
	Binary     string
	DataDir    string
	ClientPort int
	PeerPort   int
}

// ClientURL is where etcd serves its clients.
func (s EtcdSettings) ClientURL() string { return "http://127.0.0.1:" + strconv.Itoa(s.ClientPort) }

// Etcd is etcd, the control plane's store, on loopback; ready when its
// /health answers.
func Etcd(s EtcdSettings) Spec {
	clientURL, peerURL := s.ClientURL(), "http://127.0.0.1:"+strconv.Itoa(s.PeerPort)
	return Spec{
		Name: "etcd", binary: s.Binary,
		args: []string{
			"--name=local", "--data-dir=" + s.DataDir,
			"--listen-client-urls=" + clientURL, "--advertise-client-urls=" + clientURL,
			"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=local=" + peerURL,
			// A throw-away store: durability buys nothing here and fsync costs seconds.
			"--unsafe-no-fsync=true", "--log-level=warn",
		},
		ready: readiness{url: clientURL + "/health", timeout: 60 * time.Second},
	}
}
