//! The record model of spec/exchanges, shared by the replays of the corpus:
//! the in-process one of the openkeel-magnum library and the black-box one of
//! tests/e2e. It reads the corpus ([`load`], [`Record`]), compares an answer
//! with the recorded one as spec/exchanges/README.md ("How to compare")
//! describes ([`compare`]), writes the recorded rows as Magnum stored them
//! ([`seed`]), lists the records no replay passes ([`known`]), keeps the
//! count of a replay ([`Tally`]) and reports the figures of every suite
//! ([`figures`]).

pub mod figures;
pub mod known;
mod record;
pub mod seed;
mod tally;

pub use record::{
    Mock, Record, RecordedContext, RecordedRequest, RecordedResponse, Response, compare, load,
};
pub use tally::{RecordFilter, Tally};

use std::path::PathBuf;

/// The corpus: `$OKM_EXCHANGES`, else
/// `${OKM_SPEC_DIR:-../shared/spec}/exchanges/exchanges.json`, a relative
/// spec directory being taken from `repo_root` (the repository's root).
pub fn corpus_path(repo_root: &std::path::Path) -> PathBuf {
    if let Ok(p) = std::env::var("OKM_EXCHANGES")
        && !p.is_empty()
    {
        return PathBuf::from(p);
    }
    let spec = std::env::var("OKM_SPEC_DIR")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "../shared/spec".to_string());
    let spec = PathBuf::from(spec);
    let spec = if spec.is_absolute() {
        spec
    } else {
        repo_root.join(spec)
    };
    spec.join("exchanges").join("exchanges.json")
}

/// Whether the corpus is the published one, for which [`known::KNOWN`] is
/// kept.
pub fn uses_default_corpus() -> bool {
    std::env::var("OKM_EXCHANGES").map_or(true, |p| p.is_empty())
}
