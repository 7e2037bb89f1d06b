package contract

// KEDA's ScaledObject API and the namespace its install lives in.
const (
	KedaGroup             = "keda.sh"
	KedaVersion           = "v1alpha1"
	KedaAPIVersion        = KedaGroup + "/" + KedaVersion
	ScaledObjectsResource = "scaledobjects"
	ScaledObjectKind      = "ScaledObject"
	// ScaledObjectCRD is the CRD whose presence means KEDA is installed.
	ScaledObjectCRD = ScaledObjectsResource + "." + KedaGroup
	KedaNamespace   = "keda"
	// KedaHPAPrefix: KEDA names the HPA it makes for a ScaledObject "keda-hpa-<name>".
	KedaHPAPrefix = "keda-hpa-"
)
