package engine

import "github.com/goxray/xray/internal/settings"

// Config is a session's configuration: xray.Options after
// settings.Resolve, one field per setting of settings.Table, named as
// Options names it. Start and Adopt check it with Config.Validate.
type Config = settings.Values

// ErrConfig is wrapped by every error Start returns for a Config it
// refuses; the message names the field (as xray.Options names it).
var ErrConfig = settings.ErrConfig
