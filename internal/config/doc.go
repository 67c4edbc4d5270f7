// Package config reads Magnum's configuration files with oslo.config's
// semantics and exposes them as typed Options with Magnum's group names,
// option names and defaults. It also translates the SQLAlchemy URL of
// [database]/connection into a Go driver DSN (ParseDatabaseURL).
//
// # File syntax
//
// ParseINI follows oslo.config's parser: "key = value" or "key: value"
// inside "[group]" sections (group names are lower-cased, except DEFAULT);
// lines starting with '#' or ';' are comments and there are no inline
// comments; an indented line continues the previous value (joined with a
// newline); a key given several times feeds a multi-valued option (the last
// one wins for the others). Values may reference other options with "$name"
// (same group, then [DEFAULT]), "${name}" or "${group.name}"; "$$" or "\$"
// is a literal dollar sign and an unknown name is an error.
//
// # Loading
//
// Load(files, dirs) reads every --config-file in order, then each
// --config-dir's "*.conf" files in sorted order; later files win. It returns
// the options, warnings (unknown groups and options, deprecated names,
// options accepted but ignored such as [api]/api_paste_config and
// [keystone_authtoken]/memcached_servers) and an error for a missing file,
// a malformed line ("file:line: ...") or a bad value ("invalid value for
// [api]/port: ..."). Every modelled option is validated at load time, not
// on first use as in oslo.config.
//
// The CLI calls it once, in the root command's PersistentPreRunE, from its
// repeatable --config-file and --config-dir flags, logs each warning at
// Warn level and passes the *Options down; there is no global:
//
//	opts, warnings, err := config.Load(configFiles, configDirs)
//	if err != nil {
//		return err // one line: the file, line or option is named
//	}
//	for _, w := range warnings {
//		logger.Warn("configuration", "warning", w)
//	}
//
// When neither flag is given the CLI may default to /etc/magnum/magnum.conf
// if it exists, as Magnum's services do. Note that --config-file and
// --config-dir are applied files first, then directories, whatever their
// order on the command line.
//
// Options not modelled as fields are still available raw through
// Options.Lookup and Options.LookupAll. Options.Files lists the files read
// (relative paths such as [oslo_policy]/policy_file are resolved against
// their directories), Options.DatabaseTarget translates
// [database]/connection (plus connection_parameters) and
// Options.KeystoneURL picks Magnum's own Identity endpoint.
//
// # Deviations from oslo.config
//
// "${DEFAULT.name}" names [DEFAULT] (oslo.config has no group called
// DEFAULT and fails). Unknown options and groups produce warnings, which
// oslo.config does not emit. [database]/connection has no default (Magnum's
// is an SQLite file inside its Python package). [DEFAULT]/auth_strategy is
// ours: "keystone" (default) or "noauth". [healthcheck] carries the
// settings Magnum puts in api-paste.ini, which is not read. Error messages
// never repeat a malformed line other than a section header, nor a secret
// option's value, since either may hold a password.
package config
