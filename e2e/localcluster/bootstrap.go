package localcluster

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
)

const fieldManager = "localcluster"

var (
	CRDGVR        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	APIServiceGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	// Karpenter's (Options.Karpenter).
	NodePoolGVR      = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	NodeClaimGVR     = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	KWOKNodeClassGVR = schema.GroupVersionResource{Group: "karpenter.kwok.sh", Version: "v1alpha1", Resource: "kwoknodeclasses"}
)

// bootstrap applies what the nodes and the add-ons need before they start,
// waits for the CRDs to be Established, then applies the add-ons' objects of
// those CRDs.
func (pl *plane) bootstrap(ctx context.Context, kinds []nodeKind) error {
	addonObjs, crdDirs, err := pl.addonObjectsAndCRDs()
	if err != nil {
		return err
	}
	objs := append(nodeObjects(kinds, pl.isolatedRuntimeClass), addonObjs...)
	for _, o := range objs {
		if err := pl.apply(ctx, &unstructured.Unstructured{Object: o}); err != nil {
			return err
		}
	}
	var crdNames []string
	for _, dir := range crdDirs {
		names, err := pl.applyCRDs(ctx, dir)
		if err != nil {
			return err
		}
		crdNames = append(crdNames, names...)
	}
	if err := pl.waitCRDsEstablished(ctx, crdNames); err != nil {
		return err
	}
	for _, o := range pl.addonCustomResources() {
		if err := pl.apply(ctx, &unstructured.Unstructured{Object: o}); err != nil {
			return err
		}
	}
	return nil
}

// kedaAPIObjects are KEDA's namespace and how the aggregator reaches its
// metrics adapter, a process on loopback.
func (pl *plane) kedaAPIObjects(p *pki.PKI) ([]map[string]any, error) {
	kedaCAPEM, err := os.ReadFile(p.Path(pki.KEDACA + ".crt"))
	if err != nil {
		return nil, err
	}
	return []map[string]any{
		{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "keda"}},
		// The aggregator resolves an ExternalName service to externalName:port,
		// which is how it reaches the adapter, a process on loopback.
		{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "keda-metrics-apiserver", "namespace": "keda"},
			"spec": map[string]any{"type": "ExternalName", "externalName": "localhost",
				"ports": []any{map[string]any{"name": "https", "port": pl.ports.adapterSecure, "protocol": "TCP"}}},
		},
		{
			"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": "v1beta1.external.metrics.k8s.io"},
			"spec": map[string]any{
				"group": "external.metrics.k8s.io", "version": "v1beta1",
				"service":              map[string]any{"name": "keda-metrics-apiserver", "namespace": "keda", "port": pl.ports.adapterSecure},
				"caBundle":             base64.StdEncoding.EncodeToString(kedaCAPEM),
				"groupPriorityMinimum": 100, "versionPriority": 100,
			},
		},
	}, nil
}

// applyCRDs server-side applies every CRD in dir (the large ones exceed the
// client-side apply annotation limit). agent-sandbox's CRDs declare a
// conversion webhook served by its controller; locally that webhook is off and
// the project only uses v1beta1 (the storage version), so the conversion
// stanza is dropped, which leaves strategy None.
func (pl *plane) applyCRDs(ctx context.Context, dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
		for {
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil {
				if err.Error() == "EOF" {
					break
				}
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if obj == nil {
				continue
			}
			u := &unstructured.Unstructured{Object: obj}
			if u.GetKind() != "CustomResourceDefinition" {
				continue
			}
			unstructured.RemoveNestedField(u.Object, "spec", "conversion")
			if err := pl.apply(ctx, u); err != nil {
				return nil, err
			}
			names = append(names, u.GetName())
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no CRDs found in %s", dir)
	}
	return names, nil
}

func (pl *plane) waitCRDsEstablished(ctx context.Context, names []string) error {
	return pl.waitFor(ctx, "the CRDs to be Established", 60*time.Second, func(ctx context.Context) (bool, error) {
		for _, n := range names {
			crd, err := pl.dynamic.Resource(CRDGVR).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if !ConditionTrue(crd, "Established") {
				return false, fmt.Errorf("CRD %s is not Established yet", n)
			}
		}
		return true, nil
	})
}

// apply server-side applies u with the dynamic client, resolving its resource
// through discovery.
func (pl *plane) apply(ctx context.Context, u *unstructured.Unstructured) error {
	gvk := u.GroupVersionKind()
	gvr, namespaced, err := pl.resourceFor(gvk)
	if err != nil {
		return err
	}
	data, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: fieldManager, Force: &force}
	ri := pl.dynamic.Resource(gvr)
	if namespaced {
		_, err = ri.Namespace(u.GetNamespace()).Patch(ctx, u.GetName(), types.ApplyPatchType, data, opts)
	} else {
		_, err = ri.Patch(ctx, u.GetName(), types.ApplyPatchType, data, opts)
	}
	if err != nil {
		return fmt.Errorf("applying %s %s: %w", gvk.Kind, u.GetName(), err)
	}
	// Status is a subresource for nodes: set what the scheduler reads.
	if gvk.Kind == "Node" {
		if _, err := ri.ApplyStatus(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
			return fmt.Errorf("applying the status of node %s: %w", u.GetName(), err)
		}
	}
	return nil
}

func (pl *plane) resourceFor(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, error) {
	list, err := pl.client.Discovery().ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	if err != nil {
		return schema.GroupVersionResource{}, false, fmt.Errorf("discovering %s: %w", gvk.GroupVersion(), err)
	}
	for _, r := range list.APIResources {
		if r.Kind == gvk.Kind && !bytes.ContainsRune([]byte(r.Name), '/') {
			return gvk.GroupVersion().WithResource(r.Name), r.Namespaced, nil
		}
	}
	return schema.GroupVersionResource{}, false, fmt.Errorf("the API server has no resource of kind %s in %s", gvk.Kind, gvk.GroupVersion())
}

// ConditionTrue reports whether u has status.conditions[type=typ] with status True.
func ConditionTrue(u *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}
