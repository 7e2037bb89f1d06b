package verifier

import (
	"context"
	"fmt"

	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// accessReview is one question to the API server about the exporter's
// ServiceAccount, and the answer the Role should give.
type accessReview struct {
	verb, group, resource, subresource, namespace string
	allowed                                       bool
}

func (a accessReview) String() string {
	res := a.resource
	if a.subresource != "" {
		res += "/" + a.subresource
	}
	if a.group != "" {
		res += "." + a.group
	}
	where := "in " + a.namespace
	if a.namespace == "" {
		where = "across all namespaces"
	}
	return fmt.Sprintf("%s %s %s", a.verb, res, where)
}

// accessReviews: get/list claims in the pool's namespace, and nothing else a
// compromised exporter could use. With several pools the exporter lives in the
// stack's namespace (stackNS), which holds no pool: it may not list claims or
// read secrets there either.
func accessReviews(ns, stackNS string) []accessReview {
	const ext = contract.AgentSandboxExtensionsGroup
	other := "default"
	if ns == other || stackNS == other {
		other = "kube-system"
	}
	rs := []accessReview{
		{"get", ext, contract.SandboxClaimsResource, "", ns, true},
		{"list", ext, contract.SandboxClaimsResource, "", ns, true},
	}
	for _, v := range []string{"watch", "create", "update", "patch", "delete", "deletecollection"} {
		rs = append(rs, accessReview{v, ext, contract.SandboxClaimsResource, "", ns, false})
	}
	if stackNS != "" && stackNS != ns {
		rs = append(rs,
			accessReview{"list", ext, contract.SandboxClaimsResource, "", stackNS, false},
			accessReview{"get", "", "secrets", "", stackNS, false},
		)
	}
	return append(rs,
		accessReview{"list", ext, contract.SandboxClaimsResource, "", "", false},
		accessReview{"list", ext, contract.SandboxClaimsResource, "", other, false},
		accessReview{"get", "", "secrets", "", ns, false},
		accessReview{"list", "", "secrets", "", ns, false},
		accessReview{"list", "", "pods", "", ns, false},
		accessReview{"get", ext, contract.SandboxWarmPoolsResource, "", ns, false},
		accessReview{"update", ext, contract.SandboxWarmPoolsResource, "scale", ns, false},
		accessReview{"create", "", "pods", "exec", ns, false},
		accessReview{"impersonate", "", "serviceaccounts", "", ns, false},
		accessReview{"impersonate", "", "users", "", "", false},
	)
}

// access asks the API server, one SubjectAccessReview per verb, as the
// ServiceAccount (in the stack's namespace, beside the exporter) with the
// groups a real token of it carries, about the pool's namespace.
func (r *Runner) access(ctx context.Context) error {
	ns, sns, sa := r.cfg.Namespace, r.cfg.stackNamespace(), r.cfg.ExporterSA
	user := fmt.Sprintf("system:serviceaccount:%s:%s", sns, sa)
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + sns, "system:authenticated"}
	r.rep.Printf("subject: %s; the pool's namespace: %s", user, ns)
	for _, a := range accessReviews(ns, sns) {
		sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User: user, Groups: groups,
			ResourceAttributes: &authzv1.ResourceAttributes{Namespace: a.namespace, Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource},
		}}
		word := "may not"
		if a.allowed {
			word = "may"
		}
		name := fmt.Sprintf("the exporter %s %s", word, a)
		res, err := r.kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.rep.Fail("access", name, fmt.Sprintf("the review failed, so there is no answer: %v", err))
			continue
		}
		st := res.Status
		ev := fmt.Sprintf("SubjectAccessReview allowed=%t denied=%t reason=%q", st.Allowed, st.Denied, st.Reason)
		if st.EvaluationError != "" {
			ev += fmt.Sprintf(" evaluationError=%q", st.EvaluationError)
		}
		// An evaluation error is not an answer, even when it happens to deny.
		r.rep.Judge("access", name, st.Allowed == a.allowed && st.EvaluationError == "", ev)
	}
	return nil
}
