package plane

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

const fieldManager = "localcluster"

// The resources of Kubernetes' own that the control plane waits on.
var (
	CRDGVR        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	APIServiceGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
)

// ApplyCRDs server-side applies every CRD in dir (the large ones exceed the
// client-side apply annotation limit). agent-sandbox's CRDs declare a
// conversion webhook served by its controller; locally that webhook is off and
// the project only uses v1beta1 (the storage version), so the conversion
// stanza is dropped, which leaves strategy None.
func (pl *Plane) ApplyCRDs(ctx context.Context, dir string) ([]string, error) {
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
			if err := pl.Apply(ctx, u); err != nil {
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

// WaitCRDsEstablished waits until the API server serves the named CRDs.
func (pl *Plane) WaitCRDsEstablished(ctx context.Context, names []string) error {
	return pl.WaitFor(ctx, "the CRDs to be Established", 60*time.Second, func(ctx context.Context) (bool, error) {
		for _, n := range names {
			crd, err := pl.Dynamic.Resource(CRDGVR).Get(ctx, n, metav1.GetOptions{})
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

// Apply server-side applies u with the dynamic client, resolving its resource
// through discovery.
func (pl *Plane) Apply(ctx context.Context, u *unstructured.Unstructured) error {
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
	ri := pl.Dynamic.Resource(gvr)
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

func (pl *Plane) resourceFor(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, error) {
	list, err := pl.Client.Discovery().ServerResourcesForGroupVersion(gvk.GroupVersion().String())
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
