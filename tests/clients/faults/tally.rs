//! What the load of one fault saw, and the check every answer must pass.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use serde_json::Value;

/// The requests of one fault and what became of them.
#[derive(Default)]
pub struct Tally {
    /// Requests sent, by kind (`create`, `list`, `resize`, `delete`, …).
    pub sent: BTreeMap<String, usize>,
    /// Answers by status; `0` counts a request that got no answer.
    pub answers: BTreeMap<u16, usize>,
    /// Clusters whose create was accepted (202).
    pub accepted: Vec<String>,
    /// Clusters found stored after a fault, whether or not their create was
    /// answered (see [`super::Deployment::fault`]).
    pub stored: Vec<String>,
    /// The accepted clusters' states at the end (`404` once deleted).
    pub finals: BTreeMap<String, usize>,
    /// From the end of the fault until requests were served as before
    /// (`None` when no request failed on the service's side).
    pub recovery: Option<Duration>,
    /// From the end of the load until every accepted cluster was in a final
    /// state.
    pub settled: Option<Duration>,
    /// The refusals' titles, as `<status> <title>`, counted.
    pub titles: BTreeMap<String, usize>,
    /// The longest wait for an answer, and for which request.
    pub slowest: Duration,
    pub slowest_request: String,
    /// Per cluster, the requests accepted to change it, by action
    /// (`create`, `delete`, `update`), and the resizes refused for its
    /// status (Magnum notifies their failure).
    pub changes: BTreeMap<(String, String), usize>,
    /// What broke a promise; the step fails with these.
    pub broken: Vec<String>,
}

impl Tally {
    /// Counts one request of `kind` answered `status` (0: no answer).
    pub fn record(&mut self, kind: &str, status: u16) {
        *self.sent.entry(kind.to_owned()).or_default() += 1;
        *self.answers.entry(status).or_default() += 1;
    }

    /// Adds what another tally of the same fault saw.
    pub fn merge(&mut self, other: Tally) {
        for (k, n) in other.sent {
            *self.sent.entry(k).or_default() += n;
        }
        for (k, n) in other.answers {
            *self.answers.entry(k).or_default() += n;
        }
        self.accepted.extend(other.accepted);
        self.stored.extend(other.stored);
        for (k, n) in other.finals {
            *self.finals.entry(k).or_default() += n;
        }
        self.recovery = self.recovery.max(other.recovery);
        self.settled = self.settled.max(other.settled);
        for (k, n) in other.titles {
            *self.titles.entry(k).or_default() += n;
        }
        if other.slowest > self.slowest {
            self.slowest = other.slowest;
            self.slowest_request = other.slowest_request;
        }
        for (k, n) in other.changes {
            *self.changes.entry(k).or_default() += n;
        }
        self.broken.extend(other.broken);
    }

    /// Counts the title of a refusal.
    pub fn refused(&mut self, status: u16, body: &[u8]) {
        let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let title = v["errors"][0]["title"]
            .as_str()
            .or(v["title"].as_str())
            .unwrap_or("(no title)");
        *self.titles.entry(format!("{status} {title}")).or_default() += 1;
    }

    /// The fault's figures, one line: requests sent, answers by status,
    /// clusters accepted and their final states, the time to recover.
    pub fn line(&self, fault: &str) -> String {
        let sent: usize = self.sent.values().sum();
        let join = |m: &mut String, items: Vec<String>| {
            let _ = write!(m, "{}", items.join(" "));
        };
        let mut s = format!("fault {fault}: {sent} requests (");
        join(
            &mut s,
            self.sent.iter().map(|(k, n)| format!("{k} {n}")).collect(),
        );
        s.push_str("); answers ");
        join(
            &mut s,
            self.answers
                .iter()
                .map(|(k, n)| match k {
                    0 => format!("none:{n}"),
                    k => format!("{k}:{n}"),
                })
                .collect(),
        );
        let _ = write!(s, "; {} creates accepted", self.accepted.len());
        if !self.finals.is_empty() {
            s.push_str(", finally ");
            join(
                &mut s,
                self.finals
                    .iter()
                    .map(|(k, n)| format!("{k}:{n}"))
                    .collect(),
            );
        }
        if !self.titles.is_empty() {
            s.push_str("; refusals: ");
            let titles: Vec<String> = self
                .titles
                .iter()
                .map(|(k, n)| format!("{n}x {k:?}"))
                .collect();
            s.push_str(&titles.join(", "));
        }
        let _ = write!(s, "; slowest answer {:.2} s", self.slowest.as_secs_f64());
        if !self.slowest_request.is_empty() {
            let _ = write!(s, " ({})", self.slowest_request);
        }
        match self.recovery {
            Some(d) => {
                let _ = write!(
                    s,
                    "; served as before {:.1} s after the fault",
                    d.as_secs_f64()
                );
            }
            None => s.push_str("; no request failed"),
        }
        if let Some(d) = self.settled {
            let _ = write!(
                s,
                "; every cluster final {:.1} s after the load",
                d.as_secs_f64()
            );
        }
        s
    }
}

/// Whether a refused request's answer is Magnum's error body: JSON with
/// one error whose `code`, `status` and `title` say what happened (the
/// status the same as the answer's), or keystonemiddleware's body for its
/// own 401 and 503 (`message`, `code`, `title`). Returns what is wrong.
pub fn magnum_error(status: u16, body: &[u8]) -> Result<(), String> {
    let shown = || String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| format!("{status}: not JSON ({e}): {}", shown()))?;
    if let Some(errors) = v["errors"].as_array() {
        let [e] = errors.as_slice() else {
            return Err(format!("{status}: {} errors: {}", errors.len(), shown()));
        };
        let title = e["title"].as_str().unwrap_or_default();
        if e["status"].as_u64() != Some(u64::from(status)) || title.is_empty() {
            return Err(format!(
                "{status}: an error without its status or title: {}",
                shown()
            ));
        }
        return Ok(());
    }
    // keystonemiddleware (WebOb): {"message", "code": "503 Service Unavailable", "title"}.
    let code = v["code"].as_str().unwrap_or_default();
    if (status == 401 || status == 503)
        && code.starts_with(&status.to_string())
        && !v["title"].as_str().unwrap_or_default().is_empty()
    {
        return Ok(());
    }
    Err(format!("{status}: not Magnum's error body: {}", shown()))
}
