package components

// Modes, spelled as the config takes them.
const (
	ModeCreate   = "create"
	ModeExisting = "existing"
	ModeRequire  = "require"
	ModeInstall  = "install"
	ModeAdopt    = "adopt"
)

// ModeShared is no config value: an install (KEDA, agent-sandbox) or the RuntimeClass that an
// AutoscaledWarmPool adopts (requires) from another one of its stack, which installs (creates) it.
// Nothing is read: in a preview of a new cluster the install does not exist yet, and the
// component depends on the installing one, so it is there before anything of the component.
const ModeShared = "shared"
