package framework

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// tokenSeconds is how long a requested token lives: longer than any run.
const tokenSeconds = int64(3600)

// Token is a TokenRequest token of the ServiceAccount ns/sa: what the kubelet would mount in
// the exporter's pod.
func Token(ctx context.Context, client kubernetes.Interface, ns, sa string) (string, error) {
	exp := tokenSeconds
	tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("TokenRequest for %s/%s: %w", ns, sa, err)
	}
	return tr.Status.Token, nil
}

// BoundToken is a TokenRequest token of ns/sa bound to a new Secret named secret, so deleting
// the Secret revokes the token.
func BoundToken(ctx context.Context, client kubernetes.Interface, ns, sa, secret string) (string, error) {
	sec, err := client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("creating Secret %s/%s to bind a token to: %w", ns, secret, err)
	}
	exp := tokenSeconds
	tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &exp,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: sec.Name, UID: sec.UID},
	}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("TokenRequest for %s/%s bound to Secret %s: %w", ns, sa, secret, err)
	}
	return tr.Status.Token, nil
}
