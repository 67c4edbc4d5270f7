//! The per-driver, per-cluster key-value store behind the `state` import:
//! process memory, bounded per cluster.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use crate::access::HostError;

/// The longest key.
const MAX_KEY: usize = 256;

#[derive(Default)]
pub(crate) struct StateStore {
    inner: Mutex<HashMap<(String, String), BTreeMap<String, String>>>,
}

impl StateStore {
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<(String, String), BTreeMap<String, String>>> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn get(&self, driver: &str, cluster: &str, key: &str) -> Option<String> {
        self.lock()
            .get(&(driver.to_string(), cluster.to_string()))
            .and_then(|m| m.get(key).cloned())
    }

    pub(crate) fn set(
        &self,
        driver: &str,
        cluster: &str,
        key: String,
        value: String,
        max_bytes: usize,
    ) -> Result<(), HostError> {
        if key.is_empty() || key.len() > MAX_KEY {
            return Err(HostError::Invalid(format!(
                "a state key must have 1 to {MAX_KEY} bytes"
            )));
        }
        let mut g = self.lock();
        let m = g
            .entry((driver.to_string(), cluster.to_string()))
            .or_default();
        let used: usize = m
            .iter()
            .filter(|(k, _)| **k != key)
            .map(|(k, v)| k.len() + v.len())
            .sum();
        if used + key.len() + value.len() > max_bytes {
            return Err(HostError::TooLarge(format!(
                "the state of a cluster is limited to {max_bytes} bytes"
            )));
        }
        m.insert(key, value);
        Ok(())
    }

    pub(crate) fn remove(&self, driver: &str, cluster: &str, key: &str) {
        let mut g = self.lock();
        let k = (driver.to_string(), cluster.to_string());
        if let Some(m) = g.get_mut(&k) {
            m.remove(key);
            if m.is_empty() {
                g.remove(&k);
            }
        }
    }

    pub(crate) fn clear(&self, driver: &str, cluster: &str) {
        self.lock()
            .remove(&(driver.to_string(), cluster.to_string()));
    }

    pub(crate) fn forget_cluster(&self, cluster: &str) {
        self.lock().retain(|(_, c), _| c != cluster);
    }

    pub(crate) fn snapshot(&self, driver: &str, cluster: &str) -> BTreeMap<String, String> {
        self.lock()
            .get(&(driver.to_string(), cluster.to_string()))
            .cloned()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_is_bounded_per_cluster() {
        let s = StateStore::default();
        assert!(s.set("d", "c", "k".into(), "v".repeat(10), 16).is_ok());
        // Replacing a key counts only the new value.
        assert!(s.set("d", "c", "k".into(), "w".repeat(15), 16).is_ok());
        assert!(matches!(
            s.set("d", "c", "k2".into(), "x".into(), 16),
            Err(HostError::TooLarge(_))
        ));
        assert!(s.set("d", "other", "k2".into(), "x".into(), 16).is_ok());
        assert!(s.set("d", "c", String::new(), "x".into(), 16).is_err());
        assert_eq!(s.get("d", "c", "k").map(|v| v.len()), Some(15));
        s.remove("d", "c", "k");
        assert_eq!(s.get("d", "c", "k"), None);
        s.forget_cluster("other");
        assert!(s.snapshot("d", "other").is_empty());
    }

    #[test]
    fn drivers_do_not_see_each_other() {
        let s = StateStore::default();
        assert!(s.set("a", "c", "k".into(), "1".into(), 100).is_ok());
        assert_eq!(s.get("b", "c", "k"), None);
        s.clear("b", "c");
        assert_eq!(s.get("a", "c", "k").as_deref(), Some("1"));
    }
}
