//! An oslo.config-compatible reader of INI configuration files.
//!
//! It knows nothing of Magnum: the option table of a service is given to it.
