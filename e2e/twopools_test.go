package e2e

// Two kinds of agent in one stack, on the real node: the stack that ran one pool moves to a
// `pools` list of two pools with different images and sizes (the shorthand's namespace stays,
// now holding only the exporter), verify passes per pool and across pools, and destroy leaves
// none of the three namespaces behind.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// onePoolCrossPoolSkip: with one pool the cross-pool control SKIPs, saying why; the only SKIP a
// one-pool run may have besides the exec readings on simulated nodes.
func onePoolCrossPoolSkip(rep *report.Report, c report.Check) bool {
	return c.Phase == "cross-pool" && rep.CrossPool != nil && rep.CrossPool.Skipped != ""
}

// browserAgentImage is the second pool's agent: an image of its own (busybox-static as the few
// programs verify's readings run, and httpprobe for the request), imported into the node under its reference: the two pools run different images.
const browserAgentImage = "warmpool.local/browser-agent:e2e"

// browserAgentFiles are the image's files: one copy of busybox per program (busybox runs the
// applet its file is named after).
func browserAgentFiles(emptyDir, httpprobe string) map[string]string {
	// The mount points a runtime expects in a root file system.
	files := map[string]string{"proc": emptyDir, "sys": emptyDir, "dev": emptyDir, "tmp": emptyDir, "etc": emptyDir}
	for _, prog := range []string{"busybox", "sh", "sleep", "uname", "cat", "ls", "ip"} {
		files["bin/"+prog] = "/usr/bin/busybox"
	}
	// The request goes through httpprobe: busybox-static's wget resolves even an address
	// through static glibc's NSS and crashed (signal 11) in the sandbox on the first live run.
	files["bin/httpprobe"] = httpprobe
	return files
}

// twoPoolsConfig is the README's two-pool example, sized for the local node: its CPU requests
// are small, so the node holds both pools beside the other stacks of TestLiveRealNodeEndToEnd (the deployed
// stack's exporter asks 500m per replica while it compiles its source).
func twoPoolsConfig() string {
	pools := []map[string]any{
		// The arrivals sizing with every key of it KEDA evaluates: windows short enough that
		// verify's floors come back within a minute, a node launch in the refill, rounding to
		// nodes of 2 and a schedule window in force for the whole run (KEDA's cron trigger), so
		// 0, 1, 2 and 3 claims map to distinct sizes (4, 5, 6, 7) within maxReplicas 10 and the
		// pool at rest holds the schedule's 3 rounded to a node, not minReplicas.
		{"name": "code", "maxReplicas": 10, "template": map[string]any{
			"image":     contract.WarmPodImage,
			"command":   []string{"sleep", "infinity"},
			"resources": map[string]any{"requests": map[string]any{"cpu": "10m", "memory": "32Mi"}, "limits": map[string]any{"memory": "64Mi"}},
		}, "sizing": map[string]any{"policy": "arrivals", "shortWindowSeconds": 15, "longWindowSeconds": 45,
			"nodeLaunchSeconds": 3, "sandboxesPerNode": 2, "schedule": []map[string]any{scheduleAroundNow(time.Now(), 3)}}},
		{"name": "browser", "template": map[string]any{
			"image": browserAgentImage, "command": []string{"/bin/sleep", "infinity"},
			"resources":              map[string]any{"requests": map[string]any{"cpu": "20m", "memory": "96Mi"}},
			"readOnlyRootFilesystem": true, "scratch": map[string]any{"mountPath": "/scratch", "sizeLimit": "64Mi"},
		}},
	}
	b, _ := json.Marshal(pools)
	return string(b)
}

// scheduleAroundNow is a daily window from an hour before now to three hours after, in UTC,
// keeping warm spares: in force for the whole test, whatever time of day it runs.
func scheduleAroundNow(now time.Time, warm int) map[string]any {
	start, end := now.UTC().Add(-time.Hour), now.UTC().Add(3*time.Hour)
	return map[string]any{
		"start": fmt.Sprintf("%d %d * * *", start.Minute(), start.Hour()),
		"end":   fmt.Sprintf("%d %d * * *", end.Minute(), end.Hour()),
		"warm":  warm,
	}
}

// twoPools moves the stack to two pools and proves them with verify.
func (e *realEnv) twoPools(ctx context.Context, t *testing.T, verifyBin string) {
	archive := filepath.Join(e.work, "browser-agent.tar")
	empty := filepath.Join(e.work, "empty-dir")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := framework.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	httpprobe := filepath.Join(e.work, "httpprobe")
	// In the control plane's module, which holds it.
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", httpprobe, "./nodeimage/httpprobe")
	build.Dir, build.Env = filepath.Join(root, "e2e", "localcluster"), append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building httpprobe: %v\n%s", err, out)
	}
	if err := localcluster.WriteImageArchive(browserAgentImage, browserAgentFiles(empty, httpprobe),
		v1.Config{Env: []string{"PATH=/bin"}}, archive); err != nil {
		t.Fatal(err)
	}
	if err := e.cluster.ImportImage(ctx, archive); err != nil {
		t.Fatal(err)
	}
	stackNamespace := e.ns
	e.config["pools"] = twoPoolsConfig()
	if err := e.stack.SetConfig(ctx, e.config); err != nil {
		t.Fatal(err)
	}
	e.upStack(ctx, t)
	if got := e.outputs.String("stackNamespace"); got != stackNamespace {
		t.Fatalf("stackNamespace output %q, want the shorthand's namespace %q (it keeps the exporter)", got, stackNamespace)
	}
	e.waitExporterRolledOut(ctx, t, 5*time.Minute)
	for _, p := range []struct{ name, image, memory string }{{"code", contract.WarmPodImage, "32Mi"}, {"browser", browserAgentImage, "96Mi"}} {
		ns := stackNamespace + "-" + p.name
		framework.Eventually(t, ctx, fmt.Sprintf("pool %s's warm sandbox to be Ready in %s, running %s", p.name, ns, p.image), framework.SandboxStartBound, func(ctx context.Context) (bool, error) {
			pods, err := e.cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			for _, pod := range pods.Items {
				c := pod.Spec.Containers[0]
				if c.Image != p.image || c.Resources.Requests.Memory().String() != p.memory {
					return false, fmt.Errorf("pod %s runs %s with memory request %s, want %s and %s", pod.Name, c.Image, c.Resources.Requests.Memory(), p.image, p.memory)
				}
				for _, cond := range pod.Status.Conditions {
					if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
						return true, nil
					}
				}
			}
			return false, fmt.Errorf("%d pod(s) in %s, none Ready", len(pods.Items), ns)
		})
	}
	rep, code := e.runVerify(ctx, t, verifyBin, "two-pools-verify", "--phase", "all", "--require-exec", "--probe-url", outsideProbeURL)
	if code != 0 || rep.Failed != 0 {
		t.Errorf("verify on two pools exited %d with %d failed", code, rep.Failed)
	}
	if out, err := os.ReadFile(filepath.Join(e.work, "two-pools-verify.txt")); err != nil || !strings.Contains(string(out), "the pools' phases run side by side") {
		t.Errorf("verify did not say it ran the two pools' phases side by side (%v)", err)
	}
	if rep.CrossPool == nil || rep.CrossPool.Skipped != "" || len(rep.CrossPool.Rounds) != 2 {
		t.Errorf("verify's cross-pool control did not run a round per pool: %+v", rep.CrossPool)
	}
	if c, err := framework.ScheduledFormulaCheck(rep, "code"); err != nil {
		t.Error(err)
	} else {
		t.Logf("code pool: %s %s: %.400s", c.Status, c.Name, c.Evidence)
	}
	for _, c := range rep.Checks {
		if c.Phase != "cross-pool" {
			continue
		}
		t.Logf("cross-pool: %s %s: %.200s", c.Status, c.Name, c.Evidence)
		if c.Status != report.Pass {
			t.Errorf("cross-pool check %q: %s", c.Name, c.Status)
		}
	}
}

// nothingLeft checks that destroy removed every namespace the stack owned.
func (e *realEnv) nothingLeft(ctx context.Context, t *testing.T, namespaces []string) {
	for _, ns := range namespaces {
		framework.Eventually(t, ctx, "namespace "+ns+" to be gone after destroy", 3*time.Minute, func(ctx context.Context) (bool, error) {
			_, err := e.cluster.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			if err != nil {
				return false, err
			}
			return false, fmt.Errorf("namespace %s still exists", ns)
		})
	}
}
