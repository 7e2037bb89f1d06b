package components

// Modes, spelled as the config takes them.
const (
	ModeCreate   = "create"
	ModeExisting = "existing"
	ModeRequire  = "require"
	ModeInstall  = "install"
	ModeAdopt    = "adopt"
)
