//! The AMQP side of the `messaging*` drivers: the task that drains the
//! notifier's queue into RabbitMQ with lapin.
//!
//! What goes on the wire is what oslo.messaging's rabbit driver does for a
//! notification (`Connection.notify_send` and
//! `_publish_and_creates_default_queue`): declare the topic exchange
//! (`durable` = `amqp_durable_queues` or quorum queues, `auto_delete` =
//! `amqp_auto_delete`), declare the queue named by the routing key with
//! the same flags and bind it with that key — so a notification nobody
//! consumes yet waits in `notifications.info` — then publish the JSON body
//! as kombu does (`application/json`, `utf-8`, persistent, priority 0).
//! Declarations are made once per connection.
//!
//! Beyond oslo: publisher confirms (`confirm.select`), so a message counts
//! as delivered only once the broker has it, and `mandatory`, so a message
//! the broker could not route (the queue deleted under us) comes back and
//! is retried on a new connection, which declares the queue again.
//!
//! Reconnection is ours rather than lapin's auto-recovery: a failed attempt
//! drops the connection, the next attempt opens one to the next broker of
//! the URL. Waits between attempts follow kombu's `ensure`: the retry
//! interval, growing by the backoff at every retry, capped at the maximum.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use lapin::options::{
    BasicPublishOptions, ConfirmSelectOptions, ExchangeDeclareOptions, QueueBindOptions,
    QueueDeclareOptions,
};
use lapin::protocol::{AMQPErrorKind, AMQPSoftError};
use lapin::tcp::{OwnedIdentity, OwnedTLSConfig};
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::uri::{AMQPAuthority, AMQPQueryString, AMQPScheme, AMQPUri, AMQPUserInfo};
use lapin::{
    BasicProperties, Channel, Confirmation, Connection, ConnectionProperties, ErrorKind,
    ExchangeKind,
};
use tokio::sync::mpsc;
use uuid::Uuid;

use super::transport::{Broker, TransportUrl};
use super::{Counters, NotifierError, RabbitSettings};

/// One message to publish.
pub(crate) struct Outgoing {
    /// The exchange (`control_exchange`).
    pub exchange: String,
    /// `<topic>.<priority>`, also the queue's name.
    pub routing_key: String,
    /// The JSON body.
    pub body: Vec<u8>,
    /// For the logs.
    pub event_type: String,
    /// For the logs.
    pub message_id: String,
}

/// Why an attempt failed. The text never holds a password or a payload.
#[derive(Debug)]
pub(crate) enum PublishError {
    /// lapin's error (connection, channel, declaration, publish).
    Amqp(lapin::Error),
    /// The attempt took longer than `attempt_timeout`.
    Timeout(Duration),
    /// The broker refused the message (`basic.nack`).
    Nacked,
    /// The broker returned the message as unroutable.
    Returned(u16, String),
}

impl fmt::Display for PublishError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PublishError::Amqp(e) => write!(f, "{e}"),
            PublishError::Timeout(d) => write!(f, "no answer from the broker within {d:?}"),
            PublishError::Nacked => f.write_str("the broker refused the message (nack)"),
            PublishError::Returned(code, text) => {
                write!(
                    f,
                    "the broker returned the message as unroutable ({code} {text})"
                )
            }
        }
    }
}

impl From<lapin::Error> for PublishError {
    fn from(e: lapin::Error) -> Self {
        PublishError::Amqp(e)
    }
}

/// Where messages go: the broker, or a test double.
pub(crate) trait Sink: Send + 'static {
    /// One attempt to publish `msg`; a failed attempt leaves the sink
    /// ready for the next (reconnecting as needed).
    fn publish(&mut self, msg: &Outgoing) -> impl Future<Output = Result<(), PublishError>> + Send;

    /// Where the sink publishes, for the logs (`host:port`).
    fn peer(&self) -> String;
}

/// The waits between attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Backoff {
    pub start: Duration,
    pub step: Duration,
    pub max: Duration,
}

impl Backoff {
    pub(crate) fn of(s: &RabbitSettings) -> Backoff {
        Backoff {
            start: s.retry_interval,
            step: s.retry_backoff,
            max: s.interval_max,
        }
    }

    /// The wait before retry `n` (1 for the first retry).
    pub(crate) fn delay(&self, n: u32) -> Duration {
        let grown = self
            .start
            .saturating_add(self.step.saturating_mul(n.saturating_sub(1)));
        grown.min(self.max)
    }
}

/// Drains `rx` into `sink` until every sender is gone: each message is
/// tried once, then retried up to `retry` times (-1: until it goes
/// through), waiting as `backoff` says.
pub(crate) async fn run<S: Sink>(
    mut sink: S,
    mut rx: mpsc::Receiver<Outgoing>,
    retry: i64,
    backoff: Backoff,
    stats: Arc<Counters>,
) {
    while let Some(msg) = rx.recv().await {
        let mut retries: u32 = 0;
        loop {
            match sink.publish(&msg).await {
                Ok(()) => {
                    stats.delivered();
                    break;
                }
                Err(e) => {
                    if retry >= 0 && i64::from(retries) >= retry {
                        tracing::error!(
                            event_type = %msg.event_type,
                            message_id = %msg.message_id,
                            routing_key = %msg.routing_key,
                            broker = %sink.peer(),
                            attempts = retries + 1,
                            error = %e,
                            "could not send notification"
                        );
                        stats.failed();
                        break;
                    }
                    retries = retries.saturating_add(1);
                    let wait = backoff.delay(retries);
                    tracing::warn!(
                        event_type = %msg.event_type,
                        message_id = %msg.message_id,
                        broker = %sink.peer(),
                        error = %e,
                        "notification not sent; retrying in {wait:?}"
                    );
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }
}

/// The broker side: the brokers of the transport URL, tried in turn.
pub(crate) struct RabbitSink {
    brokers: Vec<Broker>,
    next: usize,
    tls: Option<OwnedTLSConfig>,
    heartbeat: u16,
    durable: bool,
    auto_delete: bool,
    queue_arguments: FieldTable,
    attempt_timeout: Duration,
    live: Option<Live>,
}

/// An open connection with its confirming channel and what it declared.
struct Live {
    connection: Connection,
    channel: Channel,
    /// Exchanges declared, with the durability they got.
    exchanges: HashMap<String, bool>,
    /// `(exchange, queue)` pairs declared and bound.
    queues: HashSet<(String, String)>,
}

impl RabbitSink {
    /// The sink of `url`, starting at the broker `seed` picks (oslo
    /// shuffles the hosts; a fixed start per process spreads publishers
    /// alike).
    pub(crate) fn new(
        url: &TransportUrl,
        s: &RabbitSettings,
        seed: Uuid,
    ) -> Result<RabbitSink, NotifierError> {
        let brokers = url.brokers();
        let tls = if s.ssl { Some(tls_config(s)?) } else { None };
        let durable = s.durable_queues || s.quorum_queue;
        let next = usize::try_from(seed.as_u128() % brokers.len().max(1) as u128).unwrap_or(0);
        Ok(RabbitSink {
            brokers,
            next,
            tls,
            heartbeat: s.heartbeat_timeout_threshold,
            durable,
            auto_delete: s.auto_delete,
            queue_arguments: queue_arguments(s)?,
            attempt_timeout: s.attempt_timeout,
            live: None,
        })
    }

    fn broker(&self) -> Option<&Broker> {
        if self.brokers.is_empty() {
            return None;
        }
        self.brokers.get(self.next % self.brokers.len())
    }

    async fn connect(&mut self) -> Result<Live, PublishError> {
        let Some(b) = self.broker().cloned() else {
            return Err(PublishError::Amqp(
                ErrorKind::InvalidConnectionState(lapin::ConnectionState::Error).into(),
            ));
        };
        // The next attempt goes to the next broker, whatever happens here.
        self.next = self.next.wrapping_add(1);
        let uri = AMQPUri {
            scheme: if self.tls.is_some() {
                AMQPScheme::AMQPS
            } else {
                AMQPScheme::AMQP
            },
            authority: AMQPAuthority {
                userinfo: AMQPUserInfo {
                    username: b.username.clone(),
                    password: b.password.expose().to_owned(),
                },
                host: b.host.clone(),
                port: b.port,
            },
            vhost: b.vhost.clone(),
            query: AMQPQueryString {
                heartbeat: Some(self.heartbeat),
                connection_timeout: Some(
                    u64::try_from(self.attempt_timeout.as_millis()).unwrap_or(u64::MAX),
                ),
                ..AMQPQueryString::default()
            },
        };
        let props = ConnectionProperties::default().with_connection_name(
            format!("openkeel-magnum:{}:notifications", std::process::id()).into(),
        );
        let runtime = lapin::runtime::default_runtime()?;
        let connection = Connection::connect_uri_with_config(
            uri,
            props,
            self.tls.clone().unwrap_or_default(),
            runtime,
        )
        .await?;
        let channel = connection.create_channel().await?;
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await?;
        tracing::info!(broker = %b, "connected to the notification broker");
        Ok(Live {
            connection,
            channel,
            exchanges: HashMap::new(),
            queues: HashSet::new(),
        })
    }

    async fn attempt(&mut self, msg: &Outgoing) -> Result<(), PublishError> {
        let mut live = match self.live.take() {
            Some(l) => l,
            None => self.connect().await?,
        };
        self.declare(&mut live, msg).await?;
        let props = BasicProperties::default()
            .with_content_type("application/json".into())
            .with_content_encoding("utf-8".into())
            .with_delivery_mode(2)
            .with_priority(0)
            .with_headers(FieldTable::default());
        let confirm = live
            .channel
            .basic_publish(
                msg.exchange.as_str().into(),
                msg.routing_key.as_str().into(),
                BasicPublishOptions {
                    mandatory: true,
                    immediate: false,
                },
                &msg.body,
                props,
            )
            .await?
            .await?;
        match confirm {
            Confirmation::Ack(None) | Confirmation::NotRequested => {
                self.live = Some(live);
                Ok(())
            }
            // The connection is dropped: the next one declares again.
            Confirmation::Ack(Some(returned)) => Err(PublishError::Returned(
                returned.reply_code,
                returned.reply_text.to_string(),
            )),
            Confirmation::Nack(_) => Err(PublishError::Nacked),
        }
    }

    /// oslo's declarations: the exchange, then the queue of the routing
    /// key bound to it with that key.
    async fn declare(&self, live: &mut Live, msg: &Outgoing) -> Result<(), PublishError> {
        let durable = match live.exchanges.get(&msg.exchange) {
            Some(d) => *d,
            None => {
                let d = self.declare_exchange(live, &msg.exchange).await?;
                live.exchanges.insert(msg.exchange.clone(), d);
                d
            }
        };
        let key = (msg.exchange.clone(), msg.routing_key.clone());
        if live.queues.contains(&key) {
            return Ok(());
        }
        live.channel
            .queue_declare(
                msg.routing_key.as_str().into(),
                QueueDeclareOptions {
                    durable,
                    auto_delete: self.auto_delete,
                    ..QueueDeclareOptions::default()
                },
                self.queue_arguments.clone(),
            )
            .await?;
        live.channel
            .queue_bind(
                msg.routing_key.as_str().into(),
                msg.exchange.as_str().into(),
                msg.routing_key.as_str().into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await?;
        live.queues.insert(key);
        Ok(())
    }

    /// Declares `exchange`, durable as configured; when the broker already
    /// has it with the other durability, declares it non-durable on a new
    /// channel, as oslo does ("Force creating a non durable exchange").
    async fn declare_exchange(
        &self,
        live: &mut Live,
        exchange: &str,
    ) -> Result<bool, PublishError> {
        let opts = |durable| ExchangeDeclareOptions {
            durable,
            auto_delete: self.auto_delete,
            ..ExchangeDeclareOptions::default()
        };
        match live
            .channel
            .exchange_declare(
                exchange.into(),
                ExchangeKind::Topic,
                opts(self.durable),
                FieldTable::default(),
            )
            .await
        {
            Ok(()) => Ok(self.durable),
            Err(e) if self.durable && is_precondition_failed(&e) => {
                tracing::warn!(
                    exchange,
                    "exchange exists non-durable: declaring it non-durable"
                );
                let channel = live.connection.create_channel().await?;
                channel
                    .confirm_select(ConfirmSelectOptions::default())
                    .await?;
                channel
                    .exchange_declare(
                        exchange.into(),
                        ExchangeKind::Topic,
                        opts(false),
                        FieldTable::default(),
                    )
                    .await?;
                live.channel = channel;
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }
}

impl Sink for RabbitSink {
    async fn publish(&mut self, msg: &Outgoing) -> Result<(), PublishError> {
        let limit = self.attempt_timeout;
        match tokio::time::timeout(limit, self.attempt(msg)).await {
            Ok(Ok(())) => Ok(()),
            // A failed attempt has dropped its connection (`attempt` takes
            // it and puts it back only on success).
            Ok(Err(e)) => Err(e),
            Err(_) => {
                self.live = None;
                Err(PublishError::Timeout(limit))
            }
        }
    }

    fn peer(&self) -> String {
        // The broker of the last attempt.
        if self.brokers.is_empty() {
            return String::new();
        }
        let i = self.next.wrapping_add(self.brokers.len() - 1) % self.brokers.len();
        self.brokers[i].to_string()
    }
}

fn is_precondition_failed(e: &lapin::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::ProtocolError(p)
            if matches!(p.kind(), AMQPErrorKind::Soft(AMQPSoftError::PRECONDITIONFAILED))
    )
}

/// oslo's `_get_queue_arguments` for a notification queue (no TTL, no
/// stream).
fn queue_arguments(s: &RabbitSettings) -> Result<FieldTable, NotifierError> {
    if s.ha_queues && s.quorum_queue {
        return Err(NotifierError(
            "[oslo_messaging_rabbit]: rabbit_quorum_queue and rabbit_ha_queues both enabled, \
             queue type is quorum or HA (mirrored) not both"
                .into(),
        ));
    }
    let mut args = FieldTable::default();
    if s.ha_queues {
        args.insert(
            "x-ha-policy".into(),
            AMQPValue::LongString(LongString::from("all")),
        );
    }
    if s.quorum_queue {
        args.insert(
            "x-queue-type".into(),
            AMQPValue::LongString(LongString::from("quorum")),
        );
        for (name, v) in [
            ("x-delivery-limit", s.quorum_delivery_limit),
            ("x-max-in-memory-length", s.quorum_max_memory_length),
            ("x-max-in-memory-bytes", s.quorum_max_memory_bytes),
        ] {
            if v != 0 {
                // Python's amqp writes an int as a 32-bit value when it fits.
                let value = match i32::try_from(v) {
                    Ok(small) => AMQPValue::LongInt(small),
                    Err(_) => AMQPValue::LongLongInt(v),
                };
                args.insert(name.into(), value);
            }
        }
    }
    Ok(args)
}

/// The TLS configuration of `ssl_ca_file` and the client certificate.
fn tls_config(s: &RabbitSettings) -> Result<OwnedTLSConfig, NotifierError> {
    let read = |opt: &str, path: &str| {
        std::fs::read(path).map_err(|e| {
            NotifierError(format!(
                "[oslo_messaging_rabbit]/{opt}: cannot read {path}: {e}"
            ))
        })
    };
    let cert_chain = match &s.ssl_ca_file {
        Some(p) if !p.is_empty() => {
            Some(String::from_utf8(read("ssl_ca_file", p)?).map_err(|_| {
                NotifierError(format!(
                    "[oslo_messaging_rabbit]/ssl_ca_file: {p} is not PEM"
                ))
            })?)
        }
        _ => None,
    };
    let identity = match (&s.ssl_cert_file, &s.ssl_key_file) {
        (Some(c), Some(k)) if !c.is_empty() && !k.is_empty() => Some(OwnedIdentity::PKCS8 {
            pem: read("ssl_cert_file", c)?,
            key: read("ssl_key_file", k)?,
        }),
        (Some(c), _) if !c.is_empty() => {
            return Err(NotifierError(
                "[oslo_messaging_rabbit]/ssl_cert_file needs ssl_key_file".into(),
            ));
        }
        _ => None,
    };
    Ok(OwnedTLSConfig {
        identity,
        cert_chain,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_by_the_step_up_to_the_maximum() {
        let b = Backoff::of(&RabbitSettings::default());
        let secs: Vec<u64> = (1..=18).map(|n| b.delay(n).as_secs()).collect();
        assert_eq!(
            secs,
            [
                1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 30, 30, 30
            ]
        );
        assert_eq!(b.delay(u32::MAX), Duration::from_secs(30));
    }

    #[test]
    fn queue_arguments_follow_oslo() {
        let none = queue_arguments(&RabbitSettings::default()).unwrap();
        assert!(none.inner().is_empty());
        let ha = queue_arguments(&RabbitSettings {
            ha_queues: true,
            ..RabbitSettings::default()
        })
        .unwrap();
        assert_eq!(
            ha.inner().get("x-ha-policy"),
            Some(&AMQPValue::LongString("all".into()))
        );
        let q = queue_arguments(&RabbitSettings {
            quorum_queue: true,
            quorum_delivery_limit: 5,
            quorum_max_memory_bytes: 1 << 40,
            ..RabbitSettings::default()
        })
        .unwrap();
        let m = q.inner();
        assert_eq!(
            m.get("x-queue-type"),
            Some(&AMQPValue::LongString("quorum".into()))
        );
        assert_eq!(m.get("x-delivery-limit"), Some(&AMQPValue::LongInt(5)));
        assert_eq!(
            m.get("x-max-in-memory-bytes"),
            Some(&AMQPValue::LongLongInt(1 << 40))
        );
        assert_eq!(m.get("x-max-in-memory-length"), None);
        let both = queue_arguments(&RabbitSettings {
            quorum_queue: true,
            ha_queues: true,
            ..RabbitSettings::default()
        });
        assert!(both.is_err());
    }

    #[test]
    fn quorum_queues_make_the_exchange_durable() {
        let url = TransportUrl::parse("rabbit://h").unwrap();
        let s = RabbitSink::new(
            &url,
            &RabbitSettings {
                quorum_queue: true,
                ..RabbitSettings::default()
            },
            Uuid::nil(),
        )
        .unwrap();
        assert!(s.durable);
        let s = RabbitSink::new(&url, &RabbitSettings::default(), Uuid::nil()).unwrap();
        assert!(!s.durable);
    }

    #[test]
    fn brokers_are_tried_in_turn_from_the_seeded_start() {
        let url = TransportUrl::parse("rabbit://a,b,c").unwrap();
        let mut s = RabbitSink::new(&url, &RabbitSettings::default(), Uuid::from_u128(4)).unwrap();
        // 4 % 3 = 1: start at b.
        let mut seen = Vec::new();
        for _ in 0..4 {
            seen.push(s.broker().map(|b| b.host.clone()).unwrap_or_default());
            s.next = s.next.wrapping_add(1);
        }
        assert_eq!(seen, ["b", "c", "a", "b"]);
    }

    #[test]
    fn a_missing_tls_file_is_a_configuration_error() {
        let url = TransportUrl::parse("rabbit://h").unwrap();
        let e = RabbitSink::new(
            &url,
            &RabbitSettings {
                ssl: true,
                ssl_ca_file: Some("testdata/notify/no-such-ca.pem".into()),
                ..RabbitSettings::default()
            },
            Uuid::nil(),
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(e.contains("ssl_ca_file"), "{e}");
    }
}
