//! The per-driver fault counter and breaker: after `threshold` faults
//! within `window`, calls of the driver are refused for `cooldown`; then
//! one call is let through, and a success closes the breaker again.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

/// The breaker's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BreakerSettings {
    pub threshold: u32,
    pub window: Duration,
    pub cooldown: Duration,
}

impl Default for BreakerSettings {
    fn default() -> Self {
        BreakerSettings {
            threshold: 5,
            window: Duration::from_secs(60),
            cooldown: Duration::from_secs(30),
        }
    }
}

/// A driver's health, for `driver list` and metrics.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Health {
    /// Faults since the host started.
    pub faults_total: u64,
    /// Faults within the current window.
    pub recent_faults: u32,
    /// Whether calls are being refused.
    pub open: bool,
    /// The last fault, in one line.
    pub last_fault: Option<String>,
}

impl Health {
    /// "ok", "degraded (2 faults)" or "open (5 faults): <last fault>".
    pub fn summary(&self) -> String {
        if self.open {
            format!(
                "open ({} faults): {}",
                self.recent_faults,
                self.last_fault.as_deref().unwrap_or("")
            )
        } else if self.recent_faults > 0 {
            format!("degraded ({} recent faults)", self.recent_faults)
        } else {
            "ok".to_string()
        }
    }
}

#[derive(Default)]
struct State {
    faults: VecDeque<Duration>,
    open_until: Option<Duration>,
    total: u64,
    last: Option<String>,
}

pub(crate) struct Breaker {
    settings: BreakerSettings,
    state: Mutex<State>,
}

impl Breaker {
    pub(crate) fn new(settings: BreakerSettings) -> Self {
        Breaker {
            settings,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `Err` with the time left while the breaker is open.
    pub(crate) fn admit(&self, now: Duration) -> Result<(), Duration> {
        match self.lock().open_until {
            Some(until) if now < until => Err(until - now),
            _ => Ok(()),
        }
    }

    pub(crate) fn fault(&self, now: Duration, message: &str) {
        let mut s = self.lock();
        s.total += 1;
        s.last = Some(message.to_string());
        s.faults.push_back(now);
        while s
            .faults
            .front()
            .is_some_and(|t| now.saturating_sub(*t) > self.settings.window)
        {
            s.faults.pop_front();
        }
        if s.faults.len() >= self.settings.threshold as usize {
            s.open_until = Some(now + self.settings.cooldown);
        }
    }

    pub(crate) fn success(&self, now: Duration) {
        let mut s = self.lock();
        if s.open_until.is_some_and(|until| now >= until) {
            s.open_until = None;
            s.faults.clear();
        }
    }

    pub(crate) fn health(&self, now: Duration) -> Health {
        let s = self.lock();
        let recent = s
            .faults
            .iter()
            .filter(|t| now.saturating_sub(**t) <= self.settings.window)
            .count();
        Health {
            faults_total: s.total,
            recent_faults: u32::try_from(recent).unwrap_or(u32::MAX),
            open: s.open_until.is_some_and(|until| now < until),
            last_fault: s.last.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn the_breaker_opens_cools_down_and_closes() {
        let b = Breaker::new(BreakerSettings {
            threshold: 3,
            window: 10 * S,
            cooldown: 5 * S,
        });
        b.fault(S, "a");
        b.fault(2 * S, "b");
        assert_eq!(b.admit(2 * S), Ok(()));
        assert_eq!(b.health(2 * S).summary(), "degraded (2 recent faults)");
        b.fault(3 * S, "c");
        assert_eq!(b.admit(4 * S), Err(4 * S));
        assert!(b.health(4 * S).open);
        assert_eq!(b.health(4 * S).summary(), "open (3 faults): c");
        // Half-open after the cooldown: one call goes through.
        assert_eq!(b.admit(8 * S), Ok(()));
        b.success(8 * S);
        assert_eq!(b.health(8 * S).recent_faults, 0);
        assert_eq!(b.health(8 * S).faults_total, 3);
        assert_eq!(b.health(8 * S).summary(), "ok");
    }

    #[test]
    fn old_faults_leave_the_window() {
        let b = Breaker::new(BreakerSettings {
            threshold: 2,
            window: 10 * S,
            cooldown: 5 * S,
        });
        b.fault(S, "a");
        b.fault(20 * S, "b");
        assert_eq!(b.admit(20 * S), Ok(()));
        assert_eq!(b.health(40 * S).recent_faults, 0);
    }
}
