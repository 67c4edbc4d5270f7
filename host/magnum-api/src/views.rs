//! What every resource view shares.

use std::collections::BTreeMap;

use chrono::NaiveDateTime;
use magnum_domain::models::StringMap;

/// Which representation of a resource a route answers with: the summary
/// of a plain list (`GET /v1/clusters`, `GET …/nodegroups`) or the detail
/// of `…/detail` lists, single GETs and creates. Resources without a
/// summary form (templates) always answer the detail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Summary,
    Detail,
}

/// A time as Magnum renders it (Python `isoformat` of an aware UTC
/// datetime): `2006-01-02T15:04:05[.ffffff]+00:00`.
pub fn isoformat(t: NaiveDateTime) -> String {
    let us = t.and_utc().timestamp_subsec_micros();
    if us == 0 {
        format!("{}+00:00", t.format("%Y-%m-%dT%H:%M:%S"))
    } else {
        format!("{}.{us:06}+00:00", t.format("%Y-%m-%dT%H:%M:%S"))
    }
}

/// Labels as `api_utils.get_labels_diff` compares them with the labels
/// they were derived from (a cluster's against its template's, a
/// nodegroup's against its cluster's): overridden (with the parent's
/// value), added (with the child's), skipped (the parent's labels the child
/// lacks).
pub type LabelsDiff<'a> = (
    BTreeMap<&'a str, &'a str>,
    BTreeMap<&'a str, &'a str>,
    BTreeMap<&'a str, &'a str>,
);

/// See [`LabelsDiff`].
pub fn labels_diff<'a>(parent: &'a StringMap, labels: &'a StringMap) -> LabelsDiff<'a> {
    let skipped = parent
        .iter()
        .filter(|(k, _)| !labels.contains_key(*k))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let (mut overridden, mut added) = (BTreeMap::new(), BTreeMap::new());
    for (k, v) in labels {
        match parent.get(k) {
            None => {
                added.insert(k.as_str(), v.as_str());
            }
            Some(pv) if pv != v => {
                overridden.insert(k.as_str(), pv.as_str());
            }
            Some(_) => {}
        }
    }
    (overridden, added, skipped)
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;

    #[test]
    fn microseconds_only_when_present() {
        let t = NaiveDate::from_ymd_opt(2026, 11, 30)
            .unwrap()
            .and_hms_opt(11, 0, 0)
            .unwrap();
        assert_eq!(super::isoformat(t), "2026-11-30T11:00:00+00:00");
        let t = NaiveDate::from_ymd_opt(2026, 11, 30)
            .unwrap()
            .and_hms_micro_opt(11, 0, 0, 42)
            .unwrap();
        assert_eq!(super::isoformat(t), "2026-11-30T11:00:00.000042+00:00");
    }
}
