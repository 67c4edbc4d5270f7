//! openkeel-magnum: the Magnum v1 API host.

pub mod auth;
