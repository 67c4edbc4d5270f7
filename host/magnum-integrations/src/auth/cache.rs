//! The token cache: validation results keyed by the SHA-256 of the token (the
//! token itself is never stored), bounded to [`MAX_ENTRIES`] entries (least
//! recently used evicted first), each ending at its own time, with concurrent
//! validations of one token sharing one Keystone call.
//!
//! moka bounds the memory with its own (monotonic) clock; each entry also
//! records when it ends on the authenticator's clock, which decides whether a
//! hit is still good. Both agree in production; tests move the
//! authenticator's clock instead of sleeping.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use moka::Expiry;
use moka::future::Cache;
use moka::ops::compute::Op;
use moka::policy::EvictionPolicy;
use sha2::{Digest, Sha256};

use super::AuthError;
use super::token::Identity;

/// The most entries the cache holds.
pub(crate) const MAX_ENTRIES: u64 = 10_000;

/// How long a token Keystone rejected stays rejected without asking again:
/// long enough that a client retrying a bad token does not reach Keystone on
/// every request, short enough that a wrong verdict cannot last.
// Deviation: keystonemiddleware remembers a rejection for token_cache_time.
pub(crate) const NEGATIVE_CACHE_TIME: Duration = Duration::from_secs(10);

/// The cache key of a token.
pub(crate) type TokenKey = [u8; 32];

pub(crate) fn key_of(token: &str) -> TokenKey {
    Sha256::digest(token.as_bytes()).into()
}

/// The first bytes of a token's hash, in hex: what logs may show of a token.
pub(crate) fn hash_prefix(key: &TokenKey) -> String {
    hex::encode(&key[..4])
}

/// One validation result: an identity or a rejection, and when it ends.
#[derive(Debug)]
pub(crate) struct CacheEntry {
    pub(crate) outcome: Result<Arc<Identity>, AuthError>,
    until: DateTime<Utc>,
    ttl: Duration,
}

impl CacheEntry {
    /// An identity, trusted for `cache_time` (`None`: no limit of its own)
    /// but never beyond the token's expiry.
    pub(crate) fn valid(
        identity: Identity,
        now: DateTime<Utc>,
        cache_time: Option<Duration>,
    ) -> Self {
        let until = match cache_time.and_then(|d| later(now, d)) {
            Some(t) => t.min(identity.expires),
            None => identity.expires,
        };
        Self::ending(Ok(Arc::new(identity)), now, until)
    }

    /// A rejection, remembered for [`NEGATIVE_CACHE_TIME`] at most.
    pub(crate) fn rejected(
        err: AuthError,
        now: DateTime<Utc>,
        cache_time: Option<Duration>,
    ) -> Self {
        let d = cache_time.map_or(NEGATIVE_CACHE_TIME, |d| d.min(NEGATIVE_CACHE_TIME));
        Self::ending(Err(err), now, later(now, d).unwrap_or(now))
    }

    fn ending(
        outcome: Result<Arc<Identity>, AuthError>,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Self {
        let ttl = (until - now).to_std().unwrap_or(Duration::ZERO);
        Self {
            outcome,
            until,
            ttl,
        }
    }

    /// Whether the entry still holds at `now`.
    pub(crate) fn fresh(&self, now: DateTime<Utc>) -> bool {
        now < self.until
    }
}

/// `now + d`, `None` when out of range.
fn later(now: DateTime<Utc>, d: Duration) -> Option<DateTime<Utc>> {
    chrono::TimeDelta::from_std(d)
        .ok()
        .and_then(|d| now.checked_add_signed(d))
}

/// Each entry expires (for moka) after its own time to live.
struct EntryExpiry;

impl Expiry<TokenKey, Arc<CacheEntry>> for EntryExpiry {
    fn expire_after_create(
        &self,
        _key: &TokenKey,
        value: &Arc<CacheEntry>,
        _created_at: Instant,
    ) -> Option<Duration> {
        Some(value.ttl)
    }
}

/// The bounded cache of validation results.
#[derive(Clone)]
pub(crate) struct TokenCache {
    entries: Cache<TokenKey, Arc<CacheEntry>>,
}

impl TokenCache {
    pub(crate) fn new(max_entries: u64) -> Self {
        Self {
            entries: Cache::builder()
                .max_capacity(max_entries)
                .eviction_policy(EvictionPolicy::lru())
                .expire_after(EntryExpiry)
                .build(),
        }
    }

    /// The entry for `key` if it still holds at `now`. An entry that ended
    /// is removed, unless another caller has already replaced it.
    pub(crate) async fn get(&self, key: &TokenKey, now: DateTime<Utc>) -> Option<Arc<CacheEntry>> {
        let entry = self.entries.get(key).await?;
        if entry.fresh(now) {
            return Some(entry);
        }
        // Conditional, so that a caller that saw the old entry late cannot
        // remove the fresh one another caller just stored.
        self.entries
            .entry(*key)
            .and_compute_with(|current| async move {
                match current {
                    Some(e) if !e.value().fresh(now) => Op::Remove,
                    _ => Op::Nop,
                }
            })
            .await;
        None
    }

    /// The entry for `key`, made by `validate` if there is none. Concurrent
    /// callers with the same key share one `validate`; an error (Keystone
    /// unavailable) is given to all of them and not cached.
    pub(crate) async fn get_or_validate<F>(
        &self,
        key: TokenKey,
        validate: F,
    ) -> Result<Arc<CacheEntry>, AuthError>
    where
        F: Future<Output = Result<CacheEntry, AuthError>>,
    {
        self.entries
            .try_get_with(key, async move { validate.await.map(Arc::new) })
            .await
            .map_err(|e| (*e).clone())
    }

    /// The number of entries (tests).
    #[cfg(test)]
    pub(crate) async fn len(&self) -> u64 {
        self.entries.run_pending_tasks().await;
        self.entries.entry_count()
    }

    /// Applies pending evictions (tests).
    #[cfg(test)]
    pub(crate) async fn settle(&self) {
        self.entries.run_pending_tasks().await;
    }

    #[cfg(test)]
    pub(crate) async fn contains(&self, key: &TokenKey) -> bool {
        self.entries.contains_key(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::AuthErrorKind;
    use crate::auth::testing::start_time;
    use magnum_domain::RequestContext;

    fn identity(user: &str, expires: DateTime<Utc>) -> Identity {
        Identity {
            context: RequestContext {
                user_id: user.into(),
                ..Default::default()
            },
            expires,
        }
    }

    async fn put(c: &TokenCache, token: &str, entry: CacheEntry) {
        let got = c.get_or_validate(key_of(token), async { Ok(entry) }).await;
        assert!(got.is_ok());
    }

    // Go: TestTokenCache/"the cache keeps the most recently used tokens".
    #[tokio::test]
    async fn keeps_the_most_recently_used_tokens() {
        let c = TokenCache::new(2);
        let now = start_time();
        let long = Duration::from_secs(60);
        for tok in ["a", "b"] {
            put(
                &c,
                tok,
                CacheEntry::valid(identity(tok, now + long), now, Some(long)),
            )
            .await;
            c.settle().await;
        }
        assert!(c.get(&key_of("a"), now).await.is_some(), "a missing");
        c.settle().await;
        put(
            &c,
            "c",
            CacheEntry::valid(identity("c", now + long), now, Some(long)),
        )
        .await;
        c.settle().await;
        assert!(
            !c.contains(&key_of("b")).await,
            "b, the least recently used, was not evicted"
        );
        for tok in ["a", "c"] {
            assert!(c.get(&key_of(tok), now).await.is_some(), "{tok} evicted");
        }
        assert_eq!(c.len().await, 2);
    }

    #[test]
    fn an_entry_ends_at_the_earlier_of_cache_time_and_expiry() {
        let now = start_time();
        let cache_time = Duration::from_secs(300);
        let hour = Duration::from_secs(3600);
        let e = CacheEntry::valid(identity("u", now + hour), now, Some(cache_time));
        assert_eq!(e.ttl, cache_time);
        assert!(e.fresh(now + Duration::from_secs(299)));
        assert!(!e.fresh(now + cache_time));
        let e = CacheEntry::valid(
            identity("u", now + Duration::from_secs(60)),
            now,
            Some(cache_time),
        );
        assert_eq!(e.ttl, Duration::from_secs(60));
        assert!(!e.fresh(now + Duration::from_secs(60)));
        // No cache time of its own (token_cache_time = 0): until the token
        // expires; an absurd cache time cannot overflow.
        let e = CacheEntry::valid(identity("u", now + hour), now, None);
        assert_eq!(e.ttl, hour);
        let e = CacheEntry::valid(identity("u", now + hour), now, Some(Duration::MAX));
        assert_eq!(e.ttl, hour);
        let err = AuthError::new(AuthErrorKind::InvalidToken, "", Arc::from("http://ks"));
        let e = CacheEntry::rejected(err.clone(), now, Some(cache_time));
        assert_eq!(e.ttl, NEGATIVE_CACHE_TIME);
        let e = CacheEntry::rejected(err.clone(), now, None);
        assert_eq!(e.ttl, NEGATIVE_CACHE_TIME);
        let e = CacheEntry::rejected(err, now, Some(Duration::from_secs(2)));
        assert_eq!(e.ttl, Duration::from_secs(2));
    }

    #[tokio::test]
    async fn an_ended_entry_is_removed_and_a_fresh_one_kept() {
        let c = TokenCache::new(10);
        let now = start_time();
        let ttl = Duration::from_secs(5);
        put(
            &c,
            "t",
            CacheEntry::valid(identity("old", now + ttl * 100), now, Some(ttl)),
        )
        .await;
        assert!(c.get(&key_of("t"), now + ttl).await.is_none());
        assert!(!c.contains(&key_of("t")).await);
        let later = now + ttl;
        put(
            &c,
            "t",
            CacheEntry::valid(identity("new", later + ttl * 100), later, Some(ttl)),
        )
        .await;
        // The new verdict holds from its own start.
        assert!(c.get(&key_of("t"), later).await.is_some());
    }

    #[test]
    fn keys_are_sha256_and_logs_see_a_prefix() {
        let k = key_of("gAAAAA-token");
        assert_eq!(k.len(), 32);
        assert_ne!(k, key_of("gAAAAA-token2"));
        assert_eq!(hash_prefix(&k).len(), 8);
        assert_eq!(
            hex::encode(key_of("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
