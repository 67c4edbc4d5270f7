//! The list cache: rendered list answers kept by the process, each valid
//! while the database's change stamp is the one it was read under.
//!
//! The change stamp is the sum of the counters of migration 3
//! (`openkeel_change`), which triggers on `cluster`, `nodegroup` and
//! `cluster_template` raise in every writer's own transaction, whoever the
//! writer is. A sum never goes down, so an unchanged sum means no write to
//! those tables has committed in between. An answer is stored only when
//! the stamp read before the page and the stamp read after it are equal
//! (no write committed while the page was read), and served only to a
//! request whose own stamp, read after it arrived, is that same stamp: a
//! cached answer never shows a row older than the last committed write a
//! reader could already have seen.
//!
//! Answers not in the cache are built by as many requests at a time as the
//! machine has cores ([`ListCache::build_permit`]); a request that had to
//! wait for its turn looks again first, so that a burst of the same list reads the rows once
//! and holds one page's memory per core, not one per request.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;

/// The bytes of rendered answers kept at most.
pub const MAX_BYTES: usize = 32 << 20;
/// The answers kept at most.
pub const MAX_ENTRIES: usize = 256;

/// Rendered list answers by request key, all read under one change stamp.
pub struct ListCache {
    inner: Mutex<Inner>,
    hits: AtomicU64,
    misses: AtomicU64,
    builds: tokio::sync::Semaphore,
}

impl Default for ListCache {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        ListCache {
            inner: Mutex::default(),
            hits: AtomicU64::default(),
            misses: AtomicU64::default(),
            builds: tokio::sync::Semaphore::new(cores),
        }
    }
}

#[derive(Default)]
struct Inner {
    /// The stamp every entry was read under.
    stamp: i64,
    entries: HashMap<String, Bytes>,
    bytes: usize,
}

impl Inner {
    fn clear(&mut self, stamp: i64) {
        self.stamp = stamp;
        self.entries.clear();
        self.bytes = 0;
    }
}

impl ListCache {
    /// The answer stored for `key` under `stamp`, counted as a hit or a
    /// miss. A newer stamp drops every entry.
    pub fn get(&self, key: &str, stamp: i64) -> Option<Bytes> {
        let mut inner = lock(&self.inner);
        if stamp > inner.stamp {
            inner.clear(stamp);
        }
        let found = if stamp == inner.stamp {
            inner.entries.get(key).cloned()
        } else {
            None
        };
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Stores `body` for `key`, read under `stamp` (the stamp before and
    /// after the read, equal). An answer read under an older stamp than the
    /// cache's is not stored; one too large for the bounds neither.
    pub fn put(&self, key: String, stamp: i64, body: Bytes) {
        if body.len() > MAX_BYTES / 4 {
            return;
        }
        let mut inner = lock(&self.inner);
        if stamp < inner.stamp {
            return;
        }
        if stamp > inner.stamp {
            inner.clear(stamp);
        }
        while inner.entries.len() >= MAX_ENTRIES || inner.bytes + body.len() > MAX_BYTES {
            let Some(victim) = inner.entries.keys().next().cloned() else {
                break;
            };
            if let Some(b) = inner.entries.remove(&victim) {
                inner.bytes -= b.len();
            }
        }
        inner.bytes += body.len();
        if let Some(old) = inner.entries.insert(key, body) {
            inner.bytes -= old.len();
        }
    }

    /// A turn to build an answer the cache lacks: one per core at a time.
    /// `None` never happens (the semaphore is not closed); a caller then
    /// builds without a turn.
    pub async fn build_permit(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        self.builds.acquire().await.ok()
    }

    /// A turn, if one is free now (`None`: every turn is taken).
    pub fn try_build_permit(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        self.builds.try_acquire().ok()
    }

    /// (hits, misses) since the start of the process.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    /// (entries, bytes) held now.
    pub fn size(&self) -> (usize, usize) {
        let inner = lock(&self.inner);
        (inner.entries.len(), inner.bytes)
    }
}

fn lock(m: &Mutex<Inner>) -> std::sync::MutexGuard<'_, Inner> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn an_answer_is_served_only_under_its_own_stamp() {
        let c = ListCache::default();
        assert_eq!(c.get("k", 5), None);
        c.put("k".into(), 5, body("a"));
        assert_eq!(c.get("k", 5), Some(body("a")));
        assert_eq!(c.get("other", 5), None);
        // A write committed since: the stamp grew, the entry is gone for
        // good, even for a reader that comes back with the old stamp.
        assert_eq!(c.get("k", 6), None);
        assert_eq!(c.get("k", 5), None);
        assert_eq!(c.size(), (0, 0));
        assert_eq!(c.counts(), (1, 4));
    }

    #[test]
    fn an_answer_read_under_an_older_stamp_is_not_stored() {
        let c = ListCache::default();
        c.put("new".into(), 9, body("n"));
        c.put("old".into(), 8, body("o"));
        assert_eq!(c.get("old", 8), None);
        assert_eq!(c.get("old", 9), None);
        assert_eq!(c.get("new", 9), Some(body("n")));
        // A newer answer replaces everything older.
        c.put("newer".into(), 10, body("x"));
        assert_eq!(c.size(), (1, 1));
    }

    #[test]
    fn the_bounds_hold() {
        let c = ListCache::default();
        for i in 0..MAX_ENTRIES + 10 {
            c.put(format!("k{i}"), 1, body("0123456789"));
        }
        assert_eq!(c.size(), (MAX_ENTRIES, MAX_ENTRIES * 10));
        let big = Bytes::from(vec![b'x'; MAX_BYTES / 4]);
        for i in 0..5 {
            c.put(format!("big{i}"), 1, big.clone());
        }
        let (n, bytes) = c.size();
        assert!(bytes <= MAX_BYTES && n <= MAX_ENTRIES, "{n} {bytes}");
        assert_eq!(c.get("big4", 1).map(|b| b.len()), Some(MAX_BYTES / 4));
        c.put("huge".into(), 1, Bytes::from(vec![b'x'; MAX_BYTES / 4 + 1]));
        assert_eq!(c.get("huge", 1), None);
    }
}
