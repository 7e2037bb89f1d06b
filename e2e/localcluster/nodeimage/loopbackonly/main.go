// Command loopbackonly is a CNI plugin for pods that must have no network
// but loopback (isolated-sandbox under gVisor, and the runc handler that
// stands for "no isolation" in the reject run): it reserves an address with
// the host-local IPAM plugin and reports it on eth0, because containerd's CRI
// refuses a sandbox without one, but it creates no interface and no route,
// so the pod never joins the bridge. DEL releases the address.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	if err := run(); err != nil {
		// The CNI error format: a JSON object on stdout, exit 1.
		_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"cniVersion": "1.0.0", "code": 999, "msg": err.Error()})
		os.Exit(1)
	}
}

func run() error {
	cmd := os.Getenv("CNI_COMMAND")
	if cmd == "VERSION" {
		fmt.Println(`{"cniVersion":"1.0.0","supportedVersions":["0.4.0","1.0.0"]}`)
		return nil
	}
	conf, err := readAll()
	if err != nil {
		return err
	}
	var netConf struct {
		CNIVersion string `json:"cniVersion"`
		IPAM       struct {
			Type string `json:"type"`
		} `json:"ipam"`
	}
	if err := json.Unmarshal(conf, &netConf); err != nil {
		return fmt.Errorf("parsing the network configuration: %w", err)
	}
	switch cmd {
	case "ADD":
		out, err := ipam(netConf.IPAM.Type, conf)
		if err != nil {
			return err
		}
		var res struct {
			IPs []struct {
				Address string `json:"address"`
			} `json:"ips"`
		}
		if err := json.Unmarshal(out, &res); err != nil || len(res.IPs) == 0 {
			return fmt.Errorf("the IPAM plugin gave no address: %s", out)
		}
		ips := []map[string]any{}
		for _, ip := range res.IPs {
			ips = append(ips, map[string]any{"interface": 0, "address": ip.Address})
		}
		return json.NewEncoder(os.Stdout).Encode(map[string]any{
			"cniVersion": netConf.CNIVersion,
			"interfaces": []map[string]any{{"name": os.Getenv("CNI_IFNAME"), "sandbox": os.Getenv("CNI_NETNS")}},
			"ips":        ips,
		})
	case "DEL":
		_, err := ipam(netConf.IPAM.Type, conf)
		return err
	case "CHECK", "GC", "STATUS":
		return nil
	}
	return fmt.Errorf("unknown CNI_COMMAND %q", cmd)
}

var stdin []byte

func readAll() ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(os.Stdin)
	stdin = b.Bytes()
	return stdin, err
}

// ipam runs the IPAM plugin with the same command, environment and config.
func ipam(plugin string, conf []byte) ([]byte, error) {
	if plugin == "" || strings.ContainsRune(plugin, '/') {
		return nil, fmt.Errorf("bad ipam type %q", plugin)
	}
	for _, dir := range filepath.SplitList(os.Getenv("CNI_PATH")) {
		bin := filepath.Join(dir, plugin)
		if _, err := os.Stat(bin); err != nil {
			continue
		}
		c := exec.Command(bin)
		c.Stdin = bytes.NewReader(conf)
		var out, errOut bytes.Buffer
		c.Stdout, c.Stderr = &out, &errOut
		if err := c.Run(); err != nil {
			return nil, fmt.Errorf("%s: %w: %s %s", plugin, err, out.String(), errOut.String())
		}
		return out.Bytes(), nil
	}
	return nil, fmt.Errorf("IPAM plugin %s not found in CNI_PATH %s", plugin, os.Getenv("CNI_PATH"))
}
