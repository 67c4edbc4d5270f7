//! Magnum's list machinery, for every collection (clusters, templates,
//! nodegroups, quotas, federations): the `marker`, `limit`, `sort_key` and
//! `sort_dir` query parameters checked in Magnum's order with its errors
//! (magnum/api/utils.py:39 `validate_limit`, `validate_sort_dir`), mapped
//! onto [`ListOptions`], the `next` link of a full page
//! (collection.py `get_next`), and the `{"<key>": [...], "next": ...}` body.
//!
//! A list handler reads:
//!
//! ```ignore
//! let page = Page::from_query(&call.query, conductor.settings().max_limit)?;
//! let rows = conductor.list_things(&ctx, &page.list_options()).await?;
//! let next = page.next(&call.base_url, "things", rows.len(), || last_uuid(&rows));
//! Ok(json_response(StatusCode::OK, &Collection::new("things", views, next)))
//! ```
//!
//! The marker's own checks (a visible row, 404 otherwise) and the sort key
//! (a column of the table, 400 otherwise) belong to the conductor, which
//! maps them to Magnum's errors in the use cases.

use magnum_domain::MagnumError;
use magnum_domain::validation::{validate_limit, validate_sort_dir};
use serde::Serialize;
use serde::ser::SerializeMap;

use super::params::Query;
use super::versions::next_link;
use magnum_domain::query::ListOptions;

/// The sort key when none is given.
pub const DEFAULT_SORT_KEY: &str = "id";
/// The sort direction when none is given.
pub const DEFAULT_SORT_DIR: &str = "asc";

/// The pagination of one list request, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    /// The last row of the previous page: a uuid, or a quota's decimal id.
    pub marker: Option<String>,
    /// The page size: the client's limit capped at `[api]/max_limit`, or
    /// `max_limit` itself.
    pub limit: i64,
    pub sort_key: String,
    pub sort_dir: String,
}

impl Page {
    /// The page of a request whose declared query parameters `query` holds
    /// (converted by the pipeline: `limit` an int, `marker` a uuid or, for
    /// quotas, an int). Checked in Magnum's order: a `limit` ≤ 0 is 400
    /// `Limit must be positive`, then a `sort_dir` other than `asc`/`desc`
    /// is 400. A limit above `max_limit` is capped silently.
    pub fn from_query(query: &Query, max_limit: i64) -> Result<Page, MagnumError> {
        let limit = validate_limit(query.int("limit"), max_limit)?;
        let sort_key = query
            .text("sort_key")
            .unwrap_or(DEFAULT_SORT_KEY)
            .to_string();
        let sort_dir = query
            .text("sort_dir")
            .unwrap_or(DEFAULT_SORT_DIR)
            .to_string();
        validate_sort_dir(&sort_dir)?;
        let marker = match query.text("marker") {
            Some(m) => Some(m.to_string()),
            None => query.int("marker").map(|n| n.to_string()),
        };
        Ok(Page {
            marker,
            limit,
            sort_key,
            sort_dir,
        })
    }

    /// The options of the database read.
    pub fn list_options(&self) -> ListOptions {
        ListOptions {
            marker: self.marker.clone(),
            limit: u64::try_from(self.limit).ok(),
            sort_key: Some(self.sort_key.clone()),
            sort_dir: Some(self.sort_dir.clone()),
        }
    }

    /// The `next` link of a page of `count` rows: present only when the
    /// page is full (so a full last page links to an empty one), as
    /// `<base>/v1/<resource>?sort_key=<k>&sort_dir=<d>&limit=<n>&marker=<m>`
    /// with `m` = `last()`, the marker of the last row (its uuid; a quota's
    /// id). Values are not URL-encoded, as in Magnum.
    pub fn next(
        &self,
        base: &str,
        resource: &str,
        count: usize,
        last: impl FnOnce() -> String,
    ) -> Option<String> {
        self.next_with(base, resource, &[], count, last)
    }

    /// [`Page::next`] with more query arguments after the sort arguments.
    pub fn next_with(
        &self,
        base: &str,
        resource: &str,
        extra: &[(&str, &str)],
        count: usize,
        last: impl FnOnce() -> String,
    ) -> Option<String> {
        let full = count > 0 && i64::try_from(count).is_ok_and(|n| n == self.limit);
        if !full {
            return None;
        }
        let mut args = vec![
            ("sort_key", self.sort_key.as_str()),
            ("sort_dir", self.sort_dir.as_str()),
        ];
        args.extend_from_slice(extra);
        Some(next_link(base, resource, &args, self.limit, &last()))
    }
}

/// A collection body: `{"<key>": [items], "next": "<url>"}`, `next` only
/// when there is one.
#[derive(Clone, Debug)]
pub struct Collection<'a, T> {
    pub key: &'a str,
    pub items: Vec<T>,
    pub next: Option<String>,
}

impl<'a, T> Collection<'a, T> {
    /// The collection of `items` under `key`.
    pub fn new(key: &'a str, items: Vec<T>, next: Option<String>) -> Self {
        Collection { key, items, next }
    }
}

impl<T: Serialize> Serialize for Collection<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1 + usize::from(self.next.is_some())))?;
        m.serialize_entry(self.key, &self.items)?;
        if let Some(next) = &self.next {
            m.serialize_entry("next", next)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::super::params::QueryValue;
    use super::*;

    fn query(pairs: &[(&'static str, QueryValue)]) -> Query {
        Query(pairs.iter().cloned().collect())
    }

    fn text(s: &str) -> QueryValue {
        QueryValue::Text(s.to_string())
    }

    #[test]
    fn defaults_and_caps() {
        let p = Page::from_query(&Query::default(), 1000).unwrap();
        assert_eq!(
            p,
            Page {
                marker: None,
                limit: 1000,
                sort_key: "id".into(),
                sort_dir: "asc".into()
            }
        );
        let p = Page::from_query(&query(&[("limit", QueryValue::Int(5000))]), 1000).unwrap();
        assert_eq!(p.limit, 1000, "capped silently");
        let p = Page::from_query(&query(&[("marker", QueryValue::Int(7))]), 10).unwrap();
        assert_eq!(p.marker.as_deref(), Some("7"), "a quota marker");
        assert_eq!(
            p.list_options(),
            ListOptions {
                marker: Some("7".into()),
                limit: Some(10),
                sort_key: Some("id".into()),
                sort_dir: Some("asc".into()),
            }
        );
    }

    #[test]
    fn limit_is_checked_before_the_sort_direction() {
        let e = Page::from_query(
            &query(&[("limit", QueryValue::Int(0)), ("sort_dir", text("up"))]),
            1000,
        )
        .unwrap_err();
        assert_eq!(
            (e.status, e.message.as_str()),
            (400, "Limit must be positive")
        );
        let e = Page::from_query(&query(&[("limit", QueryValue::Int(-1))]), 1000).unwrap_err();
        assert_eq!(e.message, "Limit must be positive");
        let e = Page::from_query(&query(&[("sort_dir", text("ASC"))]), 1000).unwrap_err();
        assert_eq!(
            e.message,
            "Invalid sort direction: ASC. Acceptable values are 'asc' or 'desc'"
        );
    }

    #[test]
    fn next_only_on_a_full_page() {
        let p = Page::from_query(
            &query(&[
                ("limit", QueryValue::Int(2)),
                ("sort_key", text("name")),
                ("sort_dir", text("desc")),
            ]),
            1000,
        )
        .unwrap();
        assert_eq!(
            p.next("http://localhost", "clustertemplates", 2, || "m1".into())
                .as_deref(),
            Some(
                "http://localhost/v1/clustertemplates?sort_key=name&sort_dir=desc&limit=2&marker=m1"
            )
        );
        assert_eq!(
            p.next("http://localhost", "clustertemplates", 1, || "m1".into()),
            None
        );
        assert_eq!(
            p.next_with(
                "http://h",
                "clusters/c1/nodegroups",
                &[("role", "worker")],
                2,
                || "n2".into()
            )
            .as_deref(),
            Some(
                "http://h/v1/clusters/c1/nodegroups?sort_key=name&sort_dir=desc&role=worker&limit=2&marker=n2"
            )
        );
        let empty = Page {
            limit: 0,
            ..p.clone()
        };
        assert_eq!(empty.next("http://h", "x", 0, || "m".into()), None);
    }

    #[test]
    fn collections_carry_next_only_when_set() {
        let c = Collection::new("clustertemplates", vec![1, 2], None);
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"clustertemplates":[1,2]}"#
        );
        let c = Collection::new("quotas", Vec::<i32>::new(), Some("http://h/n".into()));
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"quotas":[],"next":"http://h/n"}"#
        );
    }
}
