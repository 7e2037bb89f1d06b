package verifier

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
)

// A ScaledObject still terminating is not "restored": the restore waits for it
// to go, creates the copy and reads back one without a deletionTimestamp.
func TestRestoreWaitsOutTerminating(t *testing.T) {
	c := newCluster(t)
	c.start()
	ctx := context.Background()
	sos := c.dyn.Resource(gvr.ScaledObject).Namespace(testNS)
	live, err := sos.Get(ctx, "warm-pool", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf syncBuffer
	r := newRestorer(c.dyn, testNS, newReport(&buf), 10*time.Millisecond)
	r.armScaledObject(live)

	// KEDA's finalizer holds the old object for a moment.
	now := metav1.Now()
	live.SetDeletionTimestamp(&now)
	if _, err := sos.Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = sos.Delete(ctx, "warm-pool", metav1.DeleteOptions{})
	}()
	back, err := r.restoreScaledObject(ctx, time.Minute) // ends once the finalizer lets go, 200 ms in
	if err != nil {
		t.Fatal(err)
	}
	if back.GetDeletionTimestamp() != nil || back.GetUID() == live.GetUID() {
		t.Fatalf("restored object is the terminating one: uid %s deletionTimestamp %v", back.GetUID(), back.GetDeletionTimestamp())
	}
	if len(back.GetFinalizers()) != 0 || back.GetResourceVersion() == "7" {
		t.Fatalf("server-set fields were copied: %v", back.Object["metadata"])
	}
	if r.armed() != nil {
		t.Fatal("a successful restore must disarm the handler")
	}
}
