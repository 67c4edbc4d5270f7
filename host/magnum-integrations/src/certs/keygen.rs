//! The threads that generate keys. RSA key generation is the one CPU-bound
//! step of a cluster create (about a quarter of a second of CPU for the
//! four keys); on threads whose scheduling priority is lowered it uses the
//! cores requests leave idle instead of taking turns with them.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;

use magnum_x509::{ClusterCertificates, GenerateError, X509Options};
use tokio::sync::oneshot;

/// How much less a key thread weighs with the kernel's scheduler than the
/// rest of the process (nice +10: about a tenth of a busy API thread's share
/// when both want the same core).
pub const LOW_PRIORITY_NICE: i32 = 10;

type Job = Box<dyn FnOnce() + Send>;

/// A test hook: called on the key thread with the number of the ask (1,
/// 2, …) before a job asks whether its caller stopped waiting; it may
/// block, holding the job between two steps.
#[cfg(any(test, feature = "testing"))]
pub type AskHook = Arc<dyn Fn(usize) + Send + Sync>;

/// Dedicated, low-priority threads that run key generation for async
/// callers. A caller that stops waiting (its future is dropped: a timeout, a
/// shutdown) cancels its job: a queued job is skipped, a running one stops
/// before its next key.
pub struct KeyGenerator {
    queue: Option<mpsc::Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
    #[cfg(any(test, feature = "testing"))]
    ask_hook: Option<AskHook>,
}

/// Why a key generation job gave no certificates.
#[derive(Debug, thiserror::Error)]
pub enum KeyGenError {
    /// The generator's threads are gone.
    #[error("the key generator has stopped")]
    Stopped,
    /// The job ended without an answer (it panicked).
    #[error("the key generation job ended without a result")]
    Lost,
    #[error(transparent)]
    Generate(#[from] GenerateError),
}

impl KeyGenerator {
    /// Starts `threads` dedicated threads (at least one), each with its
    /// priority lowered by [`LOW_PRIORITY_NICE`] where the system allows it
    /// (elsewhere they run at the normal priority).
    pub fn start(threads: usize) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let mut workers = Vec::with_capacity(threads.max(1));
        for i in 0..threads.max(1) {
            let rx = Arc::clone(&rx);
            workers.push(
                std::thread::Builder::new()
                    .name(format!("okm-keygen-{i}"))
                    .spawn(move || worker(&rx))?,
            );
        }
        Ok(KeyGenerator {
            queue: Some(tx),
            workers,
            #[cfg(any(test, feature = "testing"))]
            ask_hook: None,
        })
    }

    /// [`KeyGenerator::start`] with `hook` run before every ask of every
    /// job.
    #[cfg(any(test, feature = "testing"))]
    pub fn start_with_ask_hook(threads: usize, hook: AskHook) -> std::io::Result<Self> {
        let mut g = KeyGenerator::start(threads)?;
        g.ask_hook = Some(hook);
        Ok(g)
    }

    /// Generates a cluster's three CAs and admin client certificate
    /// (Magnum's order) on a key thread.
    pub async fn cluster_certificates(
        &self,
        issuer: String,
        opts: X509Options,
    ) -> Result<ClusterCertificates, KeyGenError> {
        self.run(move |cancelled| {
            magnum_x509::generate_cluster_certificates_until(&issuer, &opts, cancelled)
        })
        .await?
        .map_err(KeyGenError::Generate)
    }

    /// Runs `job` on a key thread and waits for its result. The job is
    /// given a function that answers whether the caller stopped waiting; it
    /// asks between steps.
    pub async fn run<T, F>(&self, job: F) -> Result<T, KeyGenError>
    where
        T: Send + 'static,
        F: FnOnce(&dyn Fn() -> bool) -> T + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        #[cfg(any(test, feature = "testing"))]
        let hook = self.ask_hook.clone();
        let job: Job = Box::new(move || {
            if tx.is_closed() {
                return; // the caller left while the job was queued
            }
            #[cfg(any(test, feature = "testing"))]
            let asks = std::sync::atomic::AtomicUsize::new(0);
            let cancelled = || {
                #[cfg(any(test, feature = "testing"))]
                if let Some(h) = &hook {
                    h(asks.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1);
                }
                tx.is_closed()
            };
            let out = job(&cancelled);
            let _ = tx.send(out);
        });
        self.queue
            .as_ref()
            .ok_or(KeyGenError::Stopped)?
            .send(job)
            .map_err(|_| KeyGenError::Stopped)?;
        rx.await.map_err(|_| KeyGenError::Lost)
    }

    /// Stops taking jobs, lets the threads finish the queued ones and waits
    /// for them.
    pub fn shutdown(mut self) {
        self.queue = None;
        for w in std::mem::take(&mut self.workers) {
            let _ = w.join();
        }
    }
}

impl Drop for KeyGenerator {
    /// Closes the queue; the threads end after the jobs already queued
    /// (without being waited for).
    fn drop(&mut self) {
        self.queue = None;
    }
}

fn worker(rx: &Mutex<mpsc::Receiver<Job>>) {
    if let Err(e) = lower_thread_priority() {
        tracing::debug!(error = %e, "key generation keeps the normal thread priority");
    }
    loop {
        // The lock is held only while waiting for the next job.
        let next = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(job) = next else { return };
        // A panicking job drops its answer channel (its caller gets Lost);
        // the thread keeps serving.
        let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
    }
}

/// Lowers the calling thread's priority by [`LOW_PRIORITY_NICE`] (at most to
/// nice 19). On Linux a priority is per thread, so nothing else of the
/// process is affected.
#[cfg(target_os = "linux")]
fn lower_thread_priority() -> std::io::Result<()> {
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    let who = libc::id_t::try_from(tid).map_err(|_| std::io::Error::other("negative thread id"))?;
    // getpriority answers -1 both as a nice value and as an error; errno
    // tells them apart.
    // SAFETY: __errno_location returns this thread's errno; getpriority
    // has no preconditions.
    let current = unsafe {
        *libc::__errno_location() = 0;
        libc::getpriority(libc::PRIO_PROCESS, who)
    };
    if current == -1
        && let Some(code) = std::io::Error::last_os_error().raw_os_error()
        && code != 0
    {
        return Err(std::io::Error::from_raw_os_error(code));
    }
    let nice = (current + LOW_PRIORITY_NICE).min(19);
    // SAFETY: setpriority has no preconditions.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, who, nice) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn lower_thread_priority() -> std::io::Result<()> {
    Err(std::io::Error::other(
        "per-thread priorities are only lowered on Linux",
    ))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    /// The nice value of thread `tid` of this process.
    #[cfg(target_os = "linux")]
    fn thread_nice(tid: i32) -> i32 {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
        // Fields after the command, which ends with the last ')': state is
        // field 3 and nice field 19 of the whole line.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        rest.split_whitespace().nth(16).unwrap().parse().unwrap()
    }

    /// Ports TestLowPriorityThread: jobs run on a thread niced by
    /// LOW_PRIORITY_NICE, and the caller's thread keeps its priority.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn jobs_run_on_a_lowered_thread() {
        // SAFETY: gettid has no preconditions.
        let caller = unsafe { libc::gettid() };
        let before = thread_nice(caller);
        let keygen = KeyGenerator::start(1).unwrap();
        let (tid, nice) = keygen
            .run(|_| {
                // SAFETY: as above.
                let tid = unsafe { libc::gettid() };
                (tid, thread_nice(tid))
            })
            .await
            .unwrap();
        assert_ne!(tid, caller, "the job ran on the caller's thread");
        assert_eq!(nice, (before + LOW_PRIORITY_NICE).min(19));
        assert_eq!(
            thread_nice(caller),
            before,
            "the caller's thread nice changed"
        );
        keygen.shutdown();
    }

    #[tokio::test]
    async fn cluster_certificates_come_back() {
        let keygen = KeyGenerator::start(2).unwrap();
        let opts = X509Options {
            rsa_key_size: 1024,
            ..X509Options::default()
        };
        let cc = keygen
            .cluster_certificates("c1".into(), opts.clone())
            .await
            .unwrap();
        assert!(cc.client.key().is_ok());
        let err = keygen
            .cluster_certificates("x".repeat(65), opts)
            .await
            .unwrap_err();
        assert!(
            matches!(err, KeyGenError::Generate(GenerateError::NameLength(65))),
            "{err}"
        );
    }

    /// A caller that stops waiting cancels its running job before the next
    /// step, and a queued job of a caller that left is skipped.
    #[tokio::test]
    async fn dropping_the_future_cancels_the_job() {
        let keygen = KeyGenerator::start(1).unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let (report_tx, report_rx) = mpsc::channel();
        let mut running = Box::pin(keygen.run(move |cancelled| {
            let before = cancelled();
            started_tx.send(()).unwrap();
            release_rx.recv().unwrap();
            report_tx.send((before, cancelled())).unwrap();
        }));
        assert!(futures::poll!(&mut running).is_pending());
        started_rx.recv().unwrap();
        // Queued behind the running job, then abandoned.
        let queued_ran = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&queued_ran);
        let mut queued = Box::pin(keygen.run(move |_| flag.store(true, Ordering::SeqCst)));
        assert!(futures::poll!(&mut queued).is_pending());
        drop(queued);
        drop(running);
        release_tx.send(()).unwrap();
        assert_eq!(report_rx.recv().unwrap(), (false, true));
        // The thread serves jobs in order: once this one answers, the
        // abandoned one has been passed over.
        assert_eq!(keygen.run(|_| 7).await.unwrap(), 7);
        assert!(!queued_ran.load(Ordering::SeqCst), "an abandoned job ran");
    }

    #[tokio::test]
    async fn a_panicking_job_is_lost_and_the_thread_serves_on() {
        let keygen = KeyGenerator::start(1).unwrap();
        let got = keygen.run(|_| -> u8 { panic!("job failure") }).await;
        assert!(matches!(got, Err(KeyGenError::Lost)));
        assert!(!keygen.run(|c| c()).await.unwrap());
        keygen.shutdown();
    }
}
