//! The use cases: every read the API serves and every state change, in
//! what Magnum's conductor did. The API calls this module, never the
//! database.

mod services;

pub use services::Heartbeat;

use std::sync::Arc;

use chrono::NaiveDateTime;

use crate::db::Db;

/// The clock of the use cases (naive UTC, as the rows store it).
pub type Clock = Arc<dyn Fn() -> NaiveDateTime + Send + Sync>;

/// The conductor: the database and the clock. Cheap to clone.
#[derive(Clone)]
pub struct Conductor {
    db: Db,
    clock: Clock,
}

impl Conductor {
    /// The conductor over `db`, on the wall clock.
    pub fn new(db: Db) -> Conductor {
        Conductor {
            db,
            clock: Arc::new(|| chrono::Utc::now().naive_utc()),
        }
    }

    /// The conductor with `clock` (tests).
    pub fn with_clock(db: Db, clock: Clock) -> Conductor {
        Conductor { db, clock }
    }

    /// The current time of the clock.
    pub fn now(&self) -> NaiveDateTime {
        (self.clock)()
    }
}
