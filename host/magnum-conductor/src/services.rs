//! The `magnum_service` rows: listing them, and this process's heartbeat.

use std::time::Duration;

use magnum_domain::models::MagnumService;

use super::Conductor;
use crate::db;

impl Conductor {
    /// Every `magnum_service` row by id, except the cluster lock row (the
    /// reconciler's lease).
    // Deviation: Magnum has no such row; it is left out so that clients
    // see only the `magnum-conductor` services.
    pub async fn list_services(&self) -> super::Result<Vec<MagnumService>> {
        let mut rows = self.db().q().list_magnum_services().await?;
        rows.retain(|r| !super::is_lock_row(r));
        Ok(rows)
    }
}

/// Keeps this process's `magnum_service` row fresh, as Magnum's conductor
/// does (`magnum/servicegroup/magnum_service_periodic.py`): the row of
/// (host, binary) is created on the first report, then `report_count` is
/// incremented and `last_seen_up` set on every report. `GET /v1/mservices`
/// shows the service up while `last_seen_up` is within `service_down_time`.
#[derive(Clone)]
pub struct Heartbeat {
    pub conductor: Conductor,
    pub host: String,
    pub binary: String,
    pub interval: Duration,
}

impl Heartbeat {
    /// Writes one heartbeat.
    pub async fn report(&self) -> super::Result<()> {
        let now = self.conductor.now();
        let mut q = self.conductor.db().q();
        let written = match q.get_magnum_service(&self.host, &self.binary).await {
            Ok(mut s) => {
                s.report_count = s.report_count.saturating_add(1);
                s.last_seen_up = Some(now);
                q.update_magnum_service(&mut s, &["report_count", "last_seen_up"])
                    .await
            }
            Err(db::Error::NotFound(_)) => {
                let mut s = MagnumService {
                    host: self.host.clone(),
                    binary: self.binary.clone(),
                    disabled: Some(false),
                    forced_down: Some(false),
                    report_count: 1,
                    last_seen_up: Some(now),
                    ..MagnumService::default()
                };
                q.create_magnum_service(&mut s).await
            }
            Err(e) => Err(e),
        };
        Ok(written?)
    }

    /// [`Heartbeat::report`], with a failure logged: a database hiccup must
    /// not stop the process, the next tick retries.
    pub async fn beat(&self) {
        if let Err(e) = self.report().await {
            tracing::warn!(host = %self.host, binary = %self.binary, error = %e, "service heartbeat failed");
        }
    }

    /// Reports now and then every interval until `stop` resolves (failures
    /// as [`Heartbeat::beat`]).
    pub async fn run(self, stop: impl std::future::Future<Output = ()>) {
        let mut tick = tokio::time::interval(self.interval.max(Duration::from_secs(1)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(stop);
        loop {
            tokio::select! {
                () = &mut stop => return,
                _ = tick.tick() => self.beat().await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{START, TestConductor};

    #[tokio::test]
    async fn the_first_report_registers_the_service_and_later_ones_count() {
        let t = TestConductor::new().await;
        let hb = Heartbeat {
            conductor: t.conductor.clone(),
            host: "node-1".into(),
            binary: "magnum-conductor".into(),
            interval: Duration::from_secs(60),
        };
        hb.report().await.unwrap();
        t.advance(60);
        hb.report().await.unwrap();
        let rows = t.conductor.list_services().await.unwrap();
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(
            (r.host.as_str(), r.binary.as_str(), r.report_count),
            ("node-1", "magnum-conductor", 2)
        );
        assert_eq!(
            r.last_seen_up,
            chrono::DateTime::from_timestamp(START + 60, 0).map(|t| t.naive_utc())
        );
        assert_eq!((r.disabled, r.forced_down), (Some(false), Some(false)));
    }
}
