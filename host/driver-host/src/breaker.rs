//! The per-driver fault counter and breaker: after `threshold` faults
//! within `window`, calls of the driver are refused for `cooldown`; then
//! exactly one call is let through (the probe). A probe that succeeds
//! closes the breaker; one that faults opens it again for twice as long as
//! the time before, up to [`MAX_BACKOFF`] cooldowns.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

/// The longest an open breaker stays open, in cooldowns.
pub(crate) const MAX_BACKOFF: u32 = 16;

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
    /// How long the breaker stays open this time, in seconds (0 when
    /// closed).
    pub open_for_seconds: u64,
    /// How many times in a row it opened without a call succeeding since.
    pub opened_in_a_row: u32,
    /// The last fault, in one line.
    pub last_fault: Option<String>,
}

impl Health {
    /// "ok", "degraded (2 recent faults)" or "open for 60 s (opened 2 times
    /// in a row, 5 recent faults): <last fault>".
    pub fn summary(&self) -> String {
        if self.open {
            format!(
                "open for {} s (opened {} times in a row, {} recent faults): {}",
                self.open_for_seconds,
                self.opened_in_a_row,
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

/// What a call may do, from [`Breaker::admit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Admission {
    /// The breaker is closed.
    Call,
    /// The breaker is half open: this call is the one probe.
    Probe,
}

/// What a fault did to the breaker, from [`Breaker::fault`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Opened {
    /// It stays as it was.
    No,
    /// It opened (or opened again after a probe) for this long.
    For(Duration),
}

#[derive(Default)]
struct State {
    faults: VecDeque<Duration>,
    open_until: Option<Duration>,
    /// How long the current opening lasts.
    open_for: Duration,
    /// Openings since the last success.
    opens: u32,
    /// When the probe in flight was let through.
    probe_since: Option<Duration>,
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

    /// Whether a call may be made now; `Err` with the time to wait while
    /// the breaker is open or its probe is in flight. A probe that never
    /// reported back is given up after a cooldown.
    pub(crate) fn admit(&self, now: Duration) -> Result<Admission, Duration> {
        let mut s = self.lock();
        let Some(until) = s.open_until else {
            return Ok(Admission::Call);
        };
        if now < until {
            return Err(until - now);
        }
        if let Some(since) = s.probe_since {
            let given_up = since + self.settings.cooldown;
            if now < given_up {
                return Err(given_up - now);
            }
        }
        s.probe_since = Some(now);
        Ok(Admission::Probe)
    }

    /// Counts a fault of a call admitted as `admission`.
    pub(crate) fn fault(&self, now: Duration, admission: Admission, message: &str) -> Opened {
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
        let open = match admission {
            Admission::Probe => true,
            Admission::Call => {
                s.open_until.is_none() && s.faults.len() >= self.settings.threshold as usize
            }
        };
        if !open {
            return Opened::No;
        }
        s.probe_since = None;
        s.opens = s.opens.saturating_add(1);
        let factor = 1u32 << s.opens.saturating_sub(1).min(MAX_BACKOFF.ilog2());
        s.open_for = self.settings.cooldown * factor.min(MAX_BACKOFF);
        s.open_until = Some(now + s.open_for);
        Opened::For(s.open_for)
    }

    /// A call admitted as `admission` succeeded: a probe closes the
    /// breaker.
    pub(crate) fn success(&self, admission: Admission) {
        if admission == Admission::Probe {
            let mut s = self.lock();
            s.open_until = None;
            s.probe_since = None;
            s.opens = 0;
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
        let open = s.open_until.is_some_and(|until| now < until);
        Health {
            faults_total: s.total,
            recent_faults: u32::try_from(recent).unwrap_or(u32::MAX),
            open,
            open_for_seconds: if open { s.open_for.as_secs() } else { 0 },
            opened_in_a_row: s.opens,
            last_fault: s.last.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    fn breaker(threshold: u32) -> Breaker {
        Breaker::new(BreakerSettings {
            threshold,
            window: 10 * S,
            cooldown: 5 * S,
        })
    }

    #[test]
    fn the_breaker_opens_cools_down_and_closes() {
        let b = breaker(3);
        assert_eq!(b.fault(S, Admission::Call, "a"), Opened::No);
        assert_eq!(b.fault(2 * S, Admission::Call, "b"), Opened::No);
        assert_eq!(b.admit(2 * S), Ok(Admission::Call));
        assert_eq!(b.health(2 * S).summary(), "degraded (2 recent faults)");
        assert_eq!(b.fault(3 * S, Admission::Call, "c"), Opened::For(5 * S));
        assert_eq!(b.admit(4 * S), Err(4 * S));
        assert!(b.health(4 * S).open);
        assert_eq!(
            b.health(4 * S).summary(),
            "open for 5 s (opened 1 times in a row, 3 recent faults): c"
        );
        // Half open after the cooldown: one call goes through, the others
        // wait for it.
        assert_eq!(b.admit(8 * S), Ok(Admission::Probe));
        assert_eq!(b.admit(8 * S), Err(5 * S));
        b.success(Admission::Probe);
        assert_eq!(b.admit(8 * S), Ok(Admission::Call));
        assert_eq!(b.health(8 * S).recent_faults, 0);
        assert_eq!(b.health(8 * S).faults_total, 3);
        assert_eq!(b.health(8 * S).summary(), "ok");
    }

    #[test]
    fn a_failed_probe_opens_it_again_for_twice_as_long_up_to_a_bound() {
        let b = breaker(1);
        assert_eq!(
            b.fault(Duration::ZERO, Admission::Call, "a"),
            Opened::For(5 * S)
        );
        let mut now = 5 * S;
        let mut want = 5 * S;
        for _ in 0..8 {
            assert_eq!(b.admit(now), Ok(Admission::Probe));
            want = (want * 2).min(5 * S * MAX_BACKOFF);
            assert_eq!(b.fault(now, Admission::Probe, "again"), Opened::For(want));
            assert_eq!(b.admit(now + want - S), Err(S));
            now += want;
        }
        assert_eq!(want, 80 * S);
        assert_eq!(b.health(now - S).opened_in_a_row, 9);
        // A success of the probe ends it all.
        assert_eq!(b.admit(now), Ok(Admission::Probe));
        b.success(Admission::Probe);
        assert_eq!(b.health(now).opened_in_a_row, 0);
        assert_eq!(b.fault(now, Admission::Call, "b"), Opened::For(5 * S));
    }

    #[test]
    fn a_lost_probe_is_given_up_after_a_cooldown() {
        let b = breaker(1);
        b.fault(Duration::ZERO, Admission::Call, "a");
        assert_eq!(b.admit(5 * S), Ok(Admission::Probe));
        assert_eq!(b.admit(9 * S), Err(S));
        assert_eq!(b.admit(10 * S), Ok(Admission::Probe));
    }

    #[test]
    fn old_faults_leave_the_window() {
        let b = breaker(2);
        b.fault(S, Admission::Call, "a");
        b.fault(20 * S, Admission::Call, "b");
        assert_eq!(b.admit(20 * S), Ok(Admission::Call));
        assert_eq!(b.health(40 * S).recent_faults, 0);
    }
}
