//! Stopping a running service of the machine and starting it again exactly
//! as it was started: the command line, environment, working directory and
//! user are read from `/proc` before it is stopped. This is how the suite
//! restarts MariaDB, PostgreSQL and Keystone, which the CI scripts started
//! and which other suites share.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A process as it was started.
pub struct Started {
    pid: u32,
    argv: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    cwd: PathBuf,
    /// The account it runs as, when it is not ours.
    user: Option<String>,
}

/// The NUL-separated strings of a `/proc/<pid>/` file.
fn proc_strings(pid: u32, file: &str) -> Vec<OsString> {
    std::fs::read(format!("/proc/{pid}/{file}"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| OsString::from_vec(s.to_vec()))
        .collect()
}

/// A field of `/proc/<pid>/status` (`Uid`, `PPid`…), its first value.
fn status_field(pid: u32, field: &str) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Whether `pid` exists and is not a zombie (state `Z` in
/// `/proc/<pid>/stat`, after the command's closing parenthesis).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().to_owned())
        })
        .is_some_and(|rest| !rest.starts_with('Z'))
}

/// The command line of `pid` as strings.
fn command_line(pid: u32) -> Vec<String> {
    proc_strings(pid, "cmdline")
        .into_iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect()
}

/// The process whose command line satisfies `matches` and whose parent's
/// does not (the master of a pre-forking server, not one of its workers).
pub fn find(matches: impl Fn(&[String]) -> bool) -> Option<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if matches(&command_line(pid)) {
            found.push(pid);
        }
    }
    found
        .iter()
        .copied()
        .find(|pid| status_field(*pid, "PPid").is_none_or(|parent| !found.contains(&parent)))
}

/// The name of the account with `uid` (from /etc/passwd).
fn user_name(uid: u32) -> Option<String> {
    std::fs::read_to_string("/etc/passwd")
        .ok()?
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.get(2)? == &uid.to_string().as_str()).then(|| f[0].to_owned())
        })
}

/// Sends `signal` (`-INT`, `-STOP`…) to `pid`.
pub fn signal(pid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args([signal, &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

impl Started {
    /// What `pid` was started with.
    pub fn of(pid: u32) -> Started {
        let env = proc_strings(pid, "environ")
            .into_iter()
            .filter_map(|kv| {
                let kv = kv.into_vec();
                let eq = kv.iter().position(|b| *b == b'=')?;
                Some((
                    OsString::from_vec(kv[..eq].to_vec()),
                    OsString::from_vec(kv[eq + 1..].to_vec()),
                ))
            })
            .collect();
        let ours = status_field(std::process::id(), "Uid");
        let theirs = status_field(pid, "Uid");
        Started {
            pid,
            argv: proc_strings(pid, "cmdline"),
            env,
            cwd: std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap_or_else(|_| "/".into()),
            user: theirs.filter(|u| Some(*u) != ours).and_then(user_name),
        }
    }

    /// Stops it with `sig` and waits until it is gone (or a zombie nobody
    /// reaps yet): at most 60 s, then SIGKILL and 10 s more.
    pub fn stop(&self, sig: &str) {
        signal(self.pid, sig);
        let started = Instant::now();
        let mut killed = false;
        while running(self.pid) {
            let waited = started.elapsed();
            if waited > Duration::from_secs(60) && !killed {
                signal(self.pid, "-KILL");
                killed = true;
            }
            assert!(
                waited < Duration::from_secs(70),
                "{:?} (pid {}) did not stop",
                self.argv,
                self.pid
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Starts it again, detached in a session of its own; returns its new
    /// process id once it runs.
    pub fn start(&self) -> u32 {
        let mut cmd = Command::new("setsid");
        cmd.arg("-f");
        if let Some(user) = &self.user {
            cmd.args(["runuser", "-u", user, "--"]);
        }
        cmd.args(&self.argv)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let status = cmd
            .status()
            .unwrap_or_else(|e| panic!("start {:?} again: {e}", self.argv));
        assert!(status.success(), "start {:?} again: {status}", self.argv);
        let argv: Vec<String> = self
            .argv
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(pid) = find(|c| c == argv.as_slice()) {
                return pid;
            }
            assert!(Instant::now() < deadline, "{argv:?} did not start again");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A service stopped by [`Started::stop_for_now`]: started again by
/// [`Stopped::start`], or when dropped (however the fault ends).
pub struct Stopped(Option<Started>);

impl Started {
    /// Stops it with `sig` (see [`Started::stop`]) until the answer is
    /// started again or dropped.
    pub fn stop_for_now(self, sig: &str) -> Stopped {
        self.stop(sig);
        Stopped(Some(self))
    }
}

impl Stopped {
    /// Starts it again; its new process id.
    pub fn start(mut self) -> u32 {
        self.0.take().map(|s| s.start()).unwrap_or(0)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.start()));
            if started.is_err() {
                eprintln!("{:?} could not be started again", s.argv);
            }
        }
    }
}
