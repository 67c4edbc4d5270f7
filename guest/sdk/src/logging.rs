//! Logging into the host's log (tagged there with the driver, the cluster
//! and the request): [`write`] directly, or the `log` crate's macros and
//! `tracing`'s events, both bridged to it when their features are on. The
//! host's most verbose level is asked once per call, so that a disabled
//! record costs no formatting. A panic is logged through the same import
//! before the instance traps.

use std::sync::Once;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::bindings::openkeel::magnum_driver::log as wlog;
#[cfg(target_family = "wasm")]
use crate::bindings::openkeel::magnum_driver::log as import;
#[cfg(not(target_family = "wasm"))]
use crate::native::log as import;

/// A log level, least verbose last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

impl From<Level> for wlog::Level {
    fn from(l: Level) -> wlog::Level {
        match l {
            Level::Trace => wlog::Level::Trace,
            Level::Debug => wlog::Level::Debug,
            Level::Info => wlog::Level::Info,
            Level::Warn => wlog::Level::Warn,
            Level::Error => wlog::Level::Error,
        }
    }
}

impl From<wlog::Level> for Level {
    fn from(l: wlog::Level) -> Level {
        match l {
            wlog::Level::Trace => Level::Trace,
            wlog::Level::Debug => Level::Debug,
            wlog::Level::Info => Level::Info,
            wlog::Level::Warn => Level::Warn,
            wlog::Level::Error => Level::Error,
        }
    }
}

/// Writes one record with structured fields. The host cuts long messages
/// and many fields. Never log a secret.
pub fn write(level: Level, message: &str, fields: &[(&str, &str)]) {
    let fields: Vec<(String, String)> = fields
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    import::write(level.into(), message, &fields);
}

/// Not asked yet.
const UNKNOWN: u8 = u8::MAX;
static MAX_LEVEL: AtomicU8 = AtomicU8::new(UNKNOWN);

/// The most verbose level the host records (asked once per call).
pub fn max_level() -> Level {
    let cached = MAX_LEVEL.load(Ordering::Relaxed);
    if cached != UNKNOWN {
        return level_of(cached);
    }
    let l = Level::from(import::max_level());
    MAX_LEVEL.store(l as u8, Ordering::Relaxed);
    l
}

fn level_of(n: u8) -> Level {
    match n {
        0 => Level::Trace,
        1 => Level::Debug,
        2 => Level::Info,
        3 => Level::Warn,
        _ => Level::Error,
    }
}

/// Whether a record at `level` would be kept.
pub fn enabled(level: Level) -> bool {
    level >= max_level()
}

/// Installs the panic hook and the bridges once per instance (every call
/// runs in a fresh one). Called by the code [`register_driver!`]
/// generates before the driver's own.
///
/// [`register_driver!`]: crate::register_driver
pub fn init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let payload = info
                .payload_as_str()
                .unwrap_or("Box<dyn Any>")
                .replace('\n', " ");
            let msg = match info.location() {
                Some(l) => format!(
                    "panicked at {}:{}:{}: {payload}",
                    l.file(),
                    l.line(),
                    l.column()
                ),
                None => format!("panicked: {payload}"),
            };
            write(Level::Error, &msg, &[]);
            // The host puts the first lines of stderr in the fault's text.
            eprintln!("{msg}");
        }));
        #[cfg(feature = "log")]
        log_bridge::install();
        #[cfg(feature = "tracing")]
        tracing_bridge::install();
    });
}

#[cfg(feature = "log")]
mod log_bridge {
    use super::{Level, enabled, write};

    struct HostLogger;

    fn level(l: log::Level) -> Level {
        match l {
            log::Level::Trace => Level::Trace,
            log::Level::Debug => Level::Debug,
            log::Level::Info => Level::Info,
            log::Level::Warn => Level::Warn,
            log::Level::Error => Level::Error,
        }
    }

    impl log::Log for HostLogger {
        fn enabled(&self, m: &log::Metadata<'_>) -> bool {
            enabled(level(m.level()))
        }

        fn log(&self, r: &log::Record<'_>) {
            let l = level(r.level());
            if !enabled(l) {
                return;
            }
            let message = match r.args().as_str() {
                Some(s) => s.to_string(),
                None => r.args().to_string(),
            };
            write(l, &message, &[("target", r.target())]);
        }

        fn flush(&self) {}
    }

    static LOGGER: HostLogger = HostLogger;

    pub(super) fn install() {
        if log::set_logger(&LOGGER).is_ok() {
            log::set_max_level(log::LevelFilter::Trace);
        }
    }
}

#[cfg(feature = "tracing")]
mod tracing_bridge {
    use std::collections::BTreeMap;
    use std::fmt::Write as _;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU64, Ordering};

    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    use super::{Level, enabled, write};

    /// The fields of a span, kept until it closes.
    struct Span {
        name: &'static str,
        fields: Vec<(String, String)>,
        refs: usize,
    }

    /// Forwards events to the host's log, with the fields of the spans
    /// they happen in.
    #[derive(Default)]
    struct HostSubscriber {
        next: AtomicU64,
        spans: Mutex<BTreeMap<u64, Span>>,
        stack: Mutex<Vec<u64>>,
    }

    fn level(l: &tracing::Level) -> Level {
        match *l {
            tracing::Level::TRACE => Level::Trace,
            tracing::Level::DEBUG => Level::Debug,
            tracing::Level::INFO => Level::Info,
            tracing::Level::WARN => Level::Warn,
            _ => Level::Error,
        }
    }

    #[derive(Default)]
    struct Fields {
        message: Option<String>,
        fields: Vec<(String, String)>,
    }

    impl Visit for Fields {
        fn record_str(&mut self, f: &Field, v: &str) {
            if f.name() == "message" {
                self.message = Some(v.to_string());
            } else {
                self.fields.push((f.name().to_string(), v.to_string()));
            }
        }

        fn record_debug(&mut self, f: &Field, v: &dyn std::fmt::Debug) {
            let mut s = String::new();
            let _ = write!(s, "{v:?}");
            if f.name() == "message" {
                self.message = Some(s);
            } else {
                self.fields.push((f.name().to_string(), s));
            }
        }
    }

    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    impl Subscriber for HostSubscriber {
        fn enabled(&self, m: &Metadata<'_>) -> bool {
            enabled(level(m.level()))
        }

        fn new_span(&self, a: &Attributes<'_>) -> Id {
            let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
            let mut f = Fields::default();
            a.record(&mut f);
            lock(&self.spans).insert(
                id,
                Span {
                    name: a.metadata().name(),
                    fields: f.fields,
                    refs: 1,
                },
            );
            Id::from_u64(id)
        }

        fn record(&self, id: &Id, values: &Record<'_>) {
            let mut f = Fields::default();
            values.record(&mut f);
            if let Some(s) = lock(&self.spans).get_mut(&id.into_u64()) {
                s.fields.extend(f.fields);
            }
        }

        fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

        fn event(&self, e: &Event<'_>) {
            let l = level(e.metadata().level());
            if !enabled(l) {
                return;
            }
            let mut f = Fields::default();
            e.record(&mut f);
            let mut fields: Vec<(String, String)> =
                vec![("target".to_string(), e.metadata().target().to_string())];
            let stack = lock(&self.stack).clone();
            if !stack.is_empty() {
                let spans = lock(&self.spans);
                let mut names = Vec::new();
                for id in &stack {
                    if let Some(s) = spans.get(id) {
                        names.push(s.name);
                        fields.extend(s.fields.iter().cloned());
                    }
                }
                fields.push(("span".to_string(), names.join(":")));
            }
            fields.extend(f.fields);
            let borrowed: Vec<(&str, &str)> = fields
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            write(l, f.message.as_deref().unwrap_or(""), &borrowed);
        }

        fn enter(&self, id: &Id) {
            lock(&self.stack).push(id.into_u64());
        }

        fn exit(&self, id: &Id) {
            let mut stack = lock(&self.stack);
            if let Some(pos) = stack.iter().rposition(|x| *x == id.into_u64()) {
                stack.remove(pos);
            }
        }

        fn clone_span(&self, id: &Id) -> Id {
            if let Some(s) = lock(&self.spans).get_mut(&id.into_u64()) {
                s.refs += 1;
            }
            id.clone()
        }

        fn try_close(&self, id: Id) -> bool {
            let mut spans = lock(&self.spans);
            let key = id.into_u64();
            let closed = match spans.get_mut(&key) {
                Some(s) => {
                    s.refs = s.refs.saturating_sub(1);
                    s.refs == 0
                }
                None => false,
            };
            if closed {
                spans.remove(&key);
            }
            closed
        }
    }

    pub(super) fn install() {
        let _ = tracing::subscriber::set_global_default(HostSubscriber::default());
    }
}
