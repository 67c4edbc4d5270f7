//! The bookkeeping of a replay: which records passed, which failed and
//! whether their failure is listed, the report file and the summary line.

use std::collections::{BTreeMap, BTreeSet};

use crate::Record;

/// The application of Magnum's WSME tests, a toy API no replay serves.
const WSME_TEST_APP: &str = "wsme-test-app";

/// The records a replay serves: `$OKM_CONFORMANCE_ONLY`, `|`-separated
/// parts of record ids; unset or empty, the whole corpus.
pub struct RecordFilter(String);

impl RecordFilter {
    pub fn from_env() -> RecordFilter {
        RecordFilter(std::env::var("OKM_CONFORMANCE_ONLY").unwrap_or_default())
    }

    /// Whether every record is served.
    pub fn whole(&self) -> bool {
        self.0.is_empty()
    }

    pub fn admits(&self, rec: &Record) -> bool {
        self.whole() || self.0.split('|').any(|part| rec.id.contains(part))
    }

    /// Whether a replay serves `rec`: admitted, and not a record of the
    /// WSME test application.
    pub fn serves(&self, rec: &Record) -> bool {
        rec.app != WSME_TEST_APP && self.admits(rec)
    }
}

/// The outcome of a replay, record by record, in corpus order.
#[derive(Default)]
pub struct Tally {
    /// Whether the lists of failures apply (the published corpus).
    strict: bool,
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
    /// A tally whose lists of failures apply when `strict` (the published
    /// corpus, for which they are kept).
    pub fn new(strict: bool) -> Tally {
        Tally {
            strict,
            ..Tally::default()
        }
    }

    /// Whether the replay serves `rec` ([`RecordFilter::serves`]); a record
    /// of the WSME test application is counted as skipped.
    pub fn takes(&mut self, rec: &Record, filter: &RecordFilter) -> bool {
        if rec.app == WSME_TEST_APP {
            self.skipped += 1;
            return false;
        }
        filter.admits(rec)
    }

    /// The answer to `rec`: `diffs` against the recorded one (empty: it
    /// passed) and the reason it is listed as a failure, if it is. A listed
    /// record that passes is an error when the tally is strict.
    pub fn record(&mut self, rec: &Record, diffs: &[String], listed: Option<&str>) {
        self.seen.insert(rec.id.clone());
        let m = self.per_module.entry(rec.module().to_string()).or_default();
        if diffs.is_empty() {
            self.passed += 1;
            m.0 += 1;
            if self.strict
                && let Some(reason) = listed
            {
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

    /// The checks of a replay of the whole corpus: some record passed (else
    /// the file is not the corpus), and, when strict, every listed id
    /// (`lists`) is in the corpus.
    pub fn check_whole_corpus<'a>(&mut self, lists: impl IntoIterator<Item = &'a str>) {
        assert!(self.passed > 0, "no record passed: wrong exchanges file?");
        if !self.strict {
            return;
        }
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

    /// Writes the report to `$OKM_CONFORMANCE_REPORT` when set, reports the
    /// summary line as the figure of the `replay` named, and fails (panics)
    /// with every error.
    pub fn finish(self, replay: &str, listed: &str) {
        let summary = self.summary(listed);
        if let Ok(f) = std::env::var("OKM_CONFORMANCE_REPORT")
            && !f.is_empty()
        {
            std::fs::write(&f, self.report(listed))
                .unwrap_or_else(|e| panic!("write the report {f}: {e}"));
        }
        crate::figures::report(&format!("conformance replay, {replay}: {summary}"));
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
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| t.finish("test", "listed")))
            .err()
            .map(|e| e.downcast_ref::<String>().cloned().unwrap_or_default())
    }

    #[test]
    fn a_whole_corpus_where_nothing_passed_is_the_wrong_file() {
        let mut t = Tally::new(true);
        t.record(&rec("a"), &["status 200 != 400".to_string()], Some("why"));
        let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| t.check_whole_corpus([])));
        assert!(e.is_err(), "no record passed must fail the replay");
    }

    #[test]
    fn the_selection_admits_records_by_parts_of_their_ids() {
        let only = |s: &str| RecordFilter(s.to_string());
        assert!(only("").whole() && only("").admits(&rec("any")));
        assert!(only("bb|c").admits(&rec("xbbx")) && only("bb|c").admits(&rec("c")));
        assert!(!only("bb|c").whole() && !only("bb|c").admits(&rec("b")));
    }

    #[test]
    fn listed_failures_pass_and_unlisted_ones_fail() {
        let mut t = Tally::new(true);
        let wsme = Record {
            app: WSME_TEST_APP.to_string(),
            ..rec("w")
        };
        let whole = RecordFilter(String::new());
        assert!(!t.takes(&wsme, &whole) && !whole.serves(&wsme));
        assert!(t.takes(&rec("a"), &whole) && whole.serves(&rec("a")));
        t.record(&rec("a"), &[], None);
        t.record(&rec("b"), &["status 200 != 400".to_string()], Some("why"));
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

        let mut t = Tally::new(true);
        t.record(&rec("c"), &["body differs".to_string()], None);
        let e = fails(t).expect("an unlisted failure fails the replay");
        assert!(e.contains("record c") && e.contains("body differs"), "{e}");
    }

    #[test]
    fn a_listed_record_that_passes_or_is_missing_is_an_error() {
        let mut t = Tally::new(true);
        t.record(&rec("a"), &[], Some("was broken"));
        let e = fails(t).expect("a listed record that passes");
        assert!(e.contains("a passes but is a known failure"), "{e}");

        // Another corpus than the published one: the lists do not apply.
        let mut t = Tally::new(false);
        t.record(&rec("a"), &[], Some("was broken"));
        t.check_whole_corpus(["gone"]);
        assert_eq!(fails(t), None);

        let mut t = Tally::new(true);
        t.record(&rec("a"), &[], None);
        t.check_whole_corpus(["a", "gone"]);
        let e = fails(t).expect("a listed id not in the corpus");
        assert!(
            e.contains("gone is listed") && !e.contains("a is listed"),
            "{e}"
        );
    }
}
