//! Outside WebAssembly (a driver's native tests), the imports the
//! [`testing`](crate::testing) world answers, with the signatures of the
//! generated bindings, so that `host` and `logging` read the same either
//! way. OpenStack and the cluster's secrets exist only in the host.

use crate::bindings::openkeel::magnum_driver as b;
use crate::testing as t;

pub mod kube {
    use super::*;
    use b::types::{HostError, K8sObject, ObjectRef, Selector};

    pub fn apply(obj: &K8sObject) -> Result<K8sObject, HostError> {
        Ok(t::apply(obj.clone().into()).into())
    }

    pub fn get(r: &ObjectRef) -> Result<Option<K8sObject>, HostError> {
        Ok(t::get(&r.clone().into()).map(Into::into))
    }

    pub fn list_by_label(sel: &Selector) -> Result<Vec<K8sObject>, HostError> {
        Ok(t::list(
            &sel.api_version,
            &sel.kind,
            sel.namespace.as_deref(),
            &sel.labels,
        )
        .into_iter()
        .map(Into::into)
        .collect())
    }

    pub fn delete(r: &ObjectRef) -> Result<bool, HostError> {
        Ok(t::delete(&r.clone().into()))
    }
}

pub mod config {
    use super::*;
    use b::types::HostError;

    pub fn get(key: &str) -> Option<String> {
        t::option(key)
    }

    pub fn all() -> Vec<(String, String)> {
        t::options()
    }

    pub fn read_file(path: &str) -> Result<String, HostError> {
        t::file(path).ok_or_else(|| HostError::NotFound(format!("file {path}")))
    }
}

pub mod state {
    use super::*;
    use b::types::HostError;

    pub fn get(key: &str) -> Option<String> {
        t::state_get(key)
    }

    pub fn set(key: &str, value: &str) -> Result<(), HostError> {
        t::state_set(key, value);
        Ok(())
    }

    pub fn remove(key: &str) {
        t::state_remove(key)
    }

    pub fn clear() {
        t::state_clear()
    }
}

pub mod log {
    use super::*;
    pub use b::log::Level;

    pub fn write(level: Level, message: &str, fields: &[(String, String)]) {
        t::log(level.into(), message, fields.to_vec());
    }

    pub fn max_level() -> Level {
        t::max_level().into()
    }
}

pub use b::{cluster_secrets, openstack};
