//! The bookkeeping of a replay: which records passed, which failed and
//! whether their failure is listed, the report file and the summary line.

use std::collections::{BTreeMap, BTreeSet};

use crate::Record;

/// The outcome of a replay, record by record, in corpus order.
#[derive(Default)]
pub struct Tally {
    passed: usize,
    failed: usize,
    listed: usize,
    skipped: usize,
    /// Module name → (passed, failed).
    per_module: BTreeMap<String, (usize, usize)>,
    /// What fails the test: unexpected failures, listed records that pass.
    errors: Vec<String>,
    seen: BTreeSet<String>,
    report: String,
}

impl Tally {
    /// A record the replay does not serve (the WSME test application's).
    pub fn skip(&mut self) {
        self.skipped += 1;
    }

    /// The answer to `rec`: `diffs` against the recorded one (empty: it
    /// passed) and the reason it is listed as a failure, if it is. A listed
    /// record that passes is an error when `strict` (the published corpus,
    /// for which the lists are kept).
    pub fn record(&mut self, rec: &Record, diffs: &[String], listed: Option<&str>, strict: bool) {
        self.seen.insert(rec.id.clone());
        let m = self.per_module.entry(rec.module().to_string()).or_default();
        if diffs.is_empty() {
            self.passed += 1;
            m.0 += 1;
            if strict && let Some(reason) = listed {
                self.errors.push(format!(
                    "{} passes but is a known failure ({reason}): remove it",
                    rec.id
                ));
            }
            return;
        }
        self.failed += 1;
        m.1 += 1;
        let tag = if listed.is_some() {
            self.listed += 1;
            "KNOWN"
        } else {
            "FAIL"
        };
        let q = &rec.request;
        self.report.push_str(&format!(
            "{tag} {} {} {}?{}\n",
            rec.id, q.method, q.path, q.query
        ));
        if let Some(r) = listed {
            self.report.push_str(&format!("    reason: {r}\n"));
        }
        for d in diffs {
            self.report.push_str(&format!("    {d}\n"));
        }
        if listed.is_none() {
            self.errors.push(format!(
                "record {} ({} {}):\n  {}",
                rec.id,
                q.method,
                q.path,
                diffs.join("\n  ")
            ));
        }
    }

    /// Records that passed.
    pub fn passed(&self) -> usize {
        self.passed
    }

    /// An error for every listed id (`lists`) that the replay did not see:
    /// a list that names a record no longer in the corpus.
    pub fn check_listed_ids<'a>(&mut self, lists: impl IntoIterator<Item = &'a str>) {
        for id in lists {
            if !self.seen.contains(id) {
                self.errors
                    .push(format!("{id} is listed as a failure but not in the corpus"));
            }
        }
    }

    /// `N passed, M failed (K <listed>, U unexpected; S wsme-test-app
    /// records skipped)`.
    pub fn summary(&self, listed: &str) -> String {
        format!(
            "{} passed, {} failed ({} {listed}, {} unexpected; {} wsme-test-app records skipped)",
            self.passed,
            self.failed,
            self.listed,
            self.failed - self.listed,
            self.skipped
        )
    }

    /// The report: every failure with its differences, the counts per
    /// module and the summary line.
    pub fn report(&self, listed: &str) -> String {
        let mut out = self.report.clone();
        for (m, (p, f)) in &self.per_module {
            out.push_str(&format!("{m}: {p} passed, {f} failed\n"));
        }
        out.push_str(&self.summary(listed));
        out.push('\n');
        out
    }

    /// Writes the report to `$OKM_CONFORMANCE_REPORT` when set, prints the
    /// summary line, and fails (panics) with every error.
    pub fn finish(self, listed: &str) {
        let summary = self.summary(listed);
        if let Ok(f) = std::env::var("OKM_CONFORMANCE_REPORT")
            && !f.is_empty()
        {
            std::fs::write(&f, self.report(listed))
                .unwrap_or_else(|e| panic!("write the report {f}: {e}"));
        }
        println!("{summary}");
        assert!(
            self.errors.is_empty(),
            "{}\n{summary}",
            self.errors.join("\n")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: &str) -> Record {
        Record {
            id: id.to_string(),
            test_id: format!("magnum.tests.test_{id}.TestCase.test_it"),
            ..Default::default()
        }
    }

    fn fails(t: Tally) -> Option<String> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| t.finish("listed")))
            .err()
            .map(|e| e.downcast_ref::<String>().cloned().unwrap_or_default())
    }

    #[test]
    fn listed_failures_pass_and_unlisted_ones_fail() {
        let mut t = Tally::default();
        t.skip();
        t.record(&rec("a"), &[], None, true);
        t.record(
            &rec("b"),
            &["status 200 != 400".to_string()],
            Some("why"),
            true,
        );
        assert_eq!(
            t.summary("listed"),
            "1 passed, 1 failed (1 listed, 0 unexpected; 1 wsme-test-app records skipped)"
        );
        assert!(
            t.report("listed").contains("KNOWN b"),
            "{}",
            t.report("listed")
        );
        assert!(t.report("listed").contains("test_b: 0 passed, 1 failed"));
        assert_eq!(fails(t), None);

        let mut t = Tally::default();
        t.record(&rec("c"), &["body differs".to_string()], None, true);
        let e = fails(t).expect("an unlisted failure fails the replay");
        assert!(e.contains("record c") && e.contains("body differs"), "{e}");
    }

    #[test]
    fn a_listed_record_that_passes_or_is_missing_is_an_error() {
        let mut t = Tally::default();
        t.record(&rec("a"), &[], Some("was broken"), true);
        let e = fails(t).expect("a listed record that passes");
        assert!(e.contains("a passes but is a known failure"), "{e}");

        // Another corpus than the published one: the lists do not apply.
        let mut t = Tally::default();
        t.record(&rec("a"), &[], Some("was broken"), false);
        assert_eq!(fails(t), None);

        let mut t = Tally::default();
        t.record(&rec("a"), &[], None, true);
        t.check_listed_ids(["a", "gone"]);
        let e = fails(t).expect("a listed id not in the corpus");
        assert!(
            e.contains("gone is listed") && !e.contains("a is listed"),
            "{e}"
        );
    }
}
