//! The spec directory for tests: `$OKM_SPEC_DIR` (a relative path is taken
//! from the repository root) or `../shared/spec` beside the repository.

use std::collections::{HashMap, HashSet};

pub(crate) use test_support::spec_dir;

/// Every error detail of the exchange corpus with the statuses it was
/// answered with; `None` (after saying why) when the corpus is not there,
/// which fails under `CI=true`.
pub(crate) fn corpus_errors() -> Option<HashMap<String, HashSet<u16>>> {
    let path = spec_dir().join("exchanges").join("exchanges.json");
    let data = match std::fs::read(&path) {
        Ok(d) => d,
        Err(e) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "exchange corpus {}: {e}",
                path.display()
            );
            eprintln!("skipping: exchange corpus not available ({e}); set OKM_SPEC_DIR");
            return None;
        }
    };
    let records: Vec<serde_json::Value> =
        serde_json::from_slice(&data).expect("the exchange corpus is a JSON list");
    let mut out: HashMap<String, HashSet<u16>> = HashMap::new();
    for r in &records {
        let response = &r["response"];
        let Some(status) = response["status"].as_u64() else {
            continue;
        };
        let status = u16::try_from(status).expect("an HTTP status");
        let body = &response["body"];
        let mut add = |d: &serde_json::Value| {
            if let Some(d) = d.as_str().filter(|d| !d.is_empty()) {
                out.entry(d.to_string()).or_default().insert(status);
            }
        };
        if let Some(errors) = body["errors"].as_array() {
            for e in errors {
                add(&e["detail"]);
            }
        }
        add(&body["faultstring"]);
    }
    Some(out)
}
