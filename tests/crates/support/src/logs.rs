//! What the code under test logs, captured on the test's own thread.
//!
//! One subscriber serves the whole test binary. Its filter asks, at every
//! event, whether the thread has a capture open, and tells tracing that a
//! callsite's interest is "sometimes": it is never cached as "off" because
//! the first event of a callsite came from a test that runs with no capture
//! (which a per-test `set_default` subscriber, or a plain `filter_fn`, whose
//! answer tracing caches per callsite, cannot promise when tests run in
//! parallel).

use std::cell::RefCell;
use std::sync::{Arc, Mutex, Once};

use tracing::Level;
use tracing::subscriber::Interest;
use tracing_subscriber::filter::DynFilterFn;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::{Layer, Registry};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Text,
    Json,
}

struct Open {
    format: Format,
    level: Level,
    buf: Arc<Mutex<Vec<u8>>>,
}

thread_local! {
    static OPEN: RefCell<Option<Open>> = const { RefCell::new(None) };
}

/// The log lines written on this thread while it is alive.
pub struct Capture {
    buf: Arc<Mutex<Vec<u8>>>,
}

impl Capture {
    /// What was logged so far.
    pub fn text(&self) -> String {
        let buf = self.buf.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&buf).into_owned()
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        OPEN.with(|o| o.borrow_mut().take());
    }
}

/// Captures the events of `level` and above logged on this thread, as the
/// text the service writes. A test on a current-thread runtime sees all of
/// its tasks' events.
pub fn capture(level: Level) -> Capture {
    open(Format::Text, level)
}

/// [`capture`] in the JSON form (`log_format = json`).
pub fn capture_json(level: Level) -> Capture {
    open(Format::Json, level)
}

fn open(format: Format, level: Level) -> Capture {
    install();
    let buf = Arc::new(Mutex::new(Vec::new()));
    OPEN.with(|o| {
        *o.borrow_mut() = Some(Open {
            format,
            level,
            buf: buf.clone(),
        })
    });
    Capture { buf }
}

fn wants(format: Format, level: &Level) -> bool {
    OPEN.with(|o| {
        o.borrow()
            .as_ref()
            .is_some_and(|o| o.format == format && *level <= o.level)
    })
}

fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let text = tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(ThreadWriter)
            .with_filter(per_event(Format::Text));
        let json = tracing_subscriber::fmt::layer()
            .json()
            .with_writer(ThreadWriter)
            .with_filter(per_event(Format::Json));
        let subscriber = Registry::default().with(text).with(json);
        tracing::subscriber::set_global_default(subscriber)
            .expect("no other global subscriber in a test binary that captures logs");
    });
}

/// The filter of one format's layer: asked at every event, never cached.
fn per_event<S>(
    format: Format,
) -> DynFilterFn<
    S,
    impl Fn(&tracing::Metadata<'_>, &tracing_subscriber::layer::Context<'_, S>) -> bool,
    impl Fn(&'static tracing::Metadata<'static>) -> Interest,
> {
    DynFilterFn::new(move |m: &tracing::Metadata<'_>, _: &_| wants(format, m.level()))
        .with_callsite_filter(|_| Interest::sometimes())
}

/// Writes to the buffer of the thread's open capture.
struct ThreadWriter;

impl std::io::Write for ThreadWriter {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        OPEN.with(|o| {
            if let Some(o) = o.borrow().as_ref() {
                o.buf
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend_from_slice(b);
            }
        });
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for ThreadWriter {
    type Writer = ThreadWriter;

    fn make_writer(&'a self) -> Self::Writer {
        ThreadWriter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_sees_its_thread_and_level_only() {
        let c = capture(Level::INFO);
        tracing::info!("seen here");
        tracing::debug!("below the level");
        std::thread::spawn(|| tracing::info!("another thread"))
            .join()
            .unwrap();
        let text = c.text();
        assert!(text.contains("seen here"), "{text}");
        assert!(!text.contains("below the level"), "{text}");
        assert!(!text.contains("another thread"), "{text}");
        drop(c);
        let j = capture_json(Level::DEBUG);
        tracing::debug!(field = 1, "as json");
        assert!(j.text().starts_with('{'), "{}", j.text());
    }

    fn log() {
        tracing::error!("one callsite, seen first by a thread without a capture");
    }

    /// A callsite whose first event came from a thread without a capture is
    /// still captured on a thread with one (tracing caches a callsite's
    /// interest at its first event).
    #[test]
    fn a_callsite_first_seen_without_a_capture_is_captured_later() {
        let capture = capture(Level::TRACE);
        std::thread::spawn(log)
            .join()
            .unwrap_or_else(|_| panic!("the logging thread panicked"));
        assert_eq!(capture.text(), "", "another thread's event was captured");
        log();
        assert!(
            capture
                .text()
                .contains("seen first by a thread without a capture"),
            "{}",
            capture.text()
        );
    }
}
