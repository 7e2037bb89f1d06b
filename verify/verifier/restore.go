package verifier

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
)

// Restorer undoes what verify did to the cluster, on every exit path: it
// deletes the claims this run created, by their exact names (never by label:
// a claim someone else made with our labels is not ours), and recreates the
// ScaledObject from the copy taken before the control removed it.
type Restorer struct {
	mu     sync.Mutex
	dyn    dynamic.Interface
	ns     string
	rep    reporter
	poll   time.Duration
	claims []string                   // created by this run and not yet deleted
	so     *unstructured.Unstructured // armed copy; nil when nothing to restore
}

// reporter is what records checks: the report, or one pool's slice of it.
type reporter interface {
	printer
	Pass(phase, name, evidence string)
	Fail(phase, name, evidence string)
}

func newRestorer(dyn dynamic.Interface, ns string, rep reporter, poll time.Duration) *Restorer {
	return &Restorer{dyn: dyn, ns: ns, rep: rep, poll: poll}
}

// createClaim creates (never applies) a demand claim. AlreadyExists is an
// error: a claim of that name that this run did not create is not reused.
// Only a successful create is tracked for deletion.
func (r *Restorer) createClaim(ctx context.Context, name, pool string) (*unstructured.Unstructured, time.Time, error) {
	u, err := r.dyn.Resource(gvr.SandboxClaim).Namespace(r.ns).Create(ctx, newDemandClaim(r.ns, name, pool), metav1.CreateOptions{})
	at := time.Now()
	if err != nil {
		return nil, at, err
	}
	r.mu.Lock()
	r.claims = append(r.claims, name)
	r.mu.Unlock()
	return u, at, nil
}

// deleteClaim deletes one claim this run created, by exact name.
func (r *Restorer) deleteClaim(ctx context.Context, name string) (time.Time, error) {
	r.mu.Lock()
	ours := false
	for _, n := range r.claims {
		ours = ours || n == name
	}
	r.mu.Unlock()
	if !ours {
		return time.Time{}, fmt.Errorf("refusing to delete sandboxclaim/%s: this run did not create it", name)
	}
	err := r.dyn.Resource(gvr.SandboxClaim).Namespace(r.ns).Delete(ctx, name, metav1.DeleteOptions{})
	at := time.Now()
	if err != nil && !apierrors.IsNotFound(err) {
		return at, fmt.Errorf("deleting sandboxclaim/%s: %w", name, err)
	}
	r.mu.Lock()
	for i, n := range r.claims {
		if n == name {
			r.claims = append(r.claims[:i], r.claims[i+1:]...)
			break
		}
	}
	r.mu.Unlock()
	return at, nil
}

// deleteAllClaims deletes every claim this run created and still holds.
func (r *Restorer) deleteAllClaims(ctx context.Context) ([]string, error) {
	r.mu.Lock()
	names := append([]string(nil), r.claims...)
	r.mu.Unlock()
	var deleted []string
	for _, n := range names {
		if _, err := r.deleteClaim(ctx, n); err != nil {
			return deleted, err
		}
		deleted = append(deleted, n)
	}
	return deleted, nil
}

// ownedClaims lists the claims this run still holds.
func (r *Restorer) ownedClaims() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.claims...)
}

// armScaledObject keeps a recreatable copy of the ScaledObject: server-set
// metadata and status stripped, so a create of it is a fresh object.
func (r *Restorer) armScaledObject(live *unstructured.Unstructured) {
	c := live.DeepCopy()
	delete(c.Object, "status")
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
		"deletionGracePeriodSeconds", "managedFields", "finalizers", "selfLink"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	r.mu.Lock()
	r.so = c
	r.mu.Unlock()
}

func (r *Restorer) armed() *unstructured.Unstructured {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.so
}

// restoreScaledObject makes the ScaledObject exist and not be terminating:
// an existing one being deleted is waited out, then the copy is created, and
// the result is read back (a create over a terminating object would vanish
// with it). It disarms on success.
func (r *Restorer) restoreScaledObject(ctx context.Context, timeout time.Duration) (*unstructured.Unstructured, error) {
	so := r.armed()
	if so == nil {
		return nil, nil
	}
	ri := r.dyn.Resource(gvr.ScaledObject).Namespace(r.ns)
	var back *unstructured.Unstructured
	_, err := pollUntil(ctx, r.rep, "scaledobject/"+so.GetName()+" to be present and not terminating", timeout, r.poll,
		func(ctx context.Context) (bool, string, error) {
			cur, err := ri.Get(ctx, so.GetName(), metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				if _, err := ri.Create(ctx, so.DeepCopy(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					return false, "create failed", fmt.Errorf("creating scaledobject/%s: %w", so.GetName(), err)
				}
				cur, err = ri.Get(ctx, so.GetName(), metav1.GetOptions{})
				if err != nil {
					return false, "created, read back failed", fmt.Errorf("reading back scaledobject/%s: %w", so.GetName(), err)
				}
			case err != nil:
				return false, "read failed", fmt.Errorf("reading scaledobject/%s: %w", so.GetName(), err)
			}
			if cur.GetDeletionTimestamp() != nil {
				return false, "terminating", nil
			}
			back = cur
			return true, "present", nil
		})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.so = nil
	r.mu.Unlock()
	return back, nil
}

// Run is the exit handler: claims first (so a restored autoscaler does not
// scale up for them), then the ScaledObject. It uses its own context because
// the run's context may be the one an interrupt cancelled.
func (r *Restorer) Run(timeout time.Duration) error {
	if r.armed() == nil && len(r.ownedClaims()) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var firstErr error
	if names := r.ownedClaims(); len(names) > 0 {
		r.rep.Printf("exit handler: deleting the claims this run created, by name: %v", names)
		deleted, err := r.deleteAllClaims(ctx)
		if err != nil {
			r.rep.Fail("restore", "exit handler deleted this run's claims", fmt.Sprintf("deleted %v, then: %v", deleted, err))
			firstErr = err
		} else {
			r.rep.Pass("restore", "exit handler deleted this run's claims", fmt.Sprintf("deleted by exact name: %v", deleted))
		}
	}
	if so := r.armed(); so != nil {
		r.rep.Printf("exit handler: restoring scaledobject/%s", so.GetName())
		back, err := r.restoreScaledObject(ctx, timeout)
		if err != nil {
			r.rep.Fail("restore", "exit handler restored the ScaledObject", err.Error())
			if firstErr == nil {
				firstErr = err
			}
		} else {
			r.rep.Pass("restore", "exit handler restored the ScaledObject",
				fmt.Sprintf("scaledobject/%s read back present (uid %s) and not terminating", back.GetName(), back.GetUID()))
		}
	}
	return firstErr
}
