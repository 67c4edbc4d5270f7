//! The host's clocks: the wall clock drivers read (WASI's), and the
//! monotonic clock of the breakers. Injectable, so that tests decide what
//! time it is.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A source of time.
pub trait Clock: Send + Sync {
    /// The wall clock (UTC) a driver reads.
    fn now(&self) -> SystemTime;
    /// A monotonic reading since an arbitrary origin.
    fn monotonic(&self) -> Duration;
}

/// The system's clocks.
pub struct SystemClock {
    origin: Instant,
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }

    fn monotonic(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// A clock that moves only when told, for tests.
pub struct ManualClock {
    inner: Mutex<(SystemTime, Duration)>,
}

impl ManualClock {
    /// A clock at `start`.
    pub fn new(start: SystemTime) -> Arc<ManualClock> {
        Arc::new(ManualClock {
            inner: Mutex::new((start, Duration::ZERO)),
        })
    }

    /// Moves both clocks forward.
    pub fn advance(&self, by: Duration) {
        let mut g = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        g.0 += by;
        g.1 += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .0
    }

    fn monotonic(&self) -> Duration {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .1
    }
}

/// The host's wall clock as WASI's.
pub(crate) struct WallClock(pub(crate) Arc<dyn Clock>);

impl wasmtime_wasi::HostWallClock for WallClock {
    fn resolution(&self) -> Duration {
        Duration::from_micros(1)
    }

    fn now(&self) -> Duration {
        self.0.now().duration_since(UNIX_EPOCH).unwrap_or_default()
    }
}
