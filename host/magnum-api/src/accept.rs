//! `Accept` negotiation as WebOb and pecan do it: which error body format a
//! client gets, and whether it accepts JSON at all.

use http::HeaderMap;
use http::header::ACCEPT;

/// One element of an `Accept` header.
#[derive(Clone, Debug, PartialEq)]
pub struct MediaRange {
    typ: String,
    sub: String,
    q: f64,
}

/// The parsed `Accept` header.
#[derive(Clone, Debug, PartialEq)]
pub enum Accept {
    /// No header.
    Absent,
    /// A header WebOb cannot parse: treated like an absent one.
    Invalid,
    /// The media ranges, in header order.
    Ranges(Vec<MediaRange>),
}

impl Accept {
    /// The `Accept` header(s) of a request, joined as WebOb joins them.
    pub fn of(headers: &HeaderMap) -> Accept {
        let mut values = headers.get_all(ACCEPT).iter().peekable();
        if values.peek().is_none() {
            return Accept::Absent;
        }
        let mut joined = String::new();
        for (i, v) in values.enumerate() {
            if i > 0 {
                joined.push(',');
            }
            match v.to_str() {
                Ok(s) => joined.push_str(s),
                Err(_) => return Accept::Invalid,
            }
        }
        Accept::parse(&joined)
    }

    /// Parses a header value.
    pub fn parse(value: &str) -> Accept {
        let mut ranges = Vec::new();
        for part in value.split(',') {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let mut params = part.split(';');
            let mt = params.next().unwrap_or("").trim().to_ascii_lowercase();
            let Some((typ, sub)) = mt.split_once('/') else {
                return Accept::Invalid;
            };
            if typ.is_empty() || sub.is_empty() || (typ == "*" && sub != "*") {
                return Accept::Invalid;
            }
            let mut q = 1.0;
            for p in params {
                let (k, val) = p.trim().split_once('=').unwrap_or((p.trim(), ""));
                if k.trim().eq_ignore_ascii_case("q") {
                    match val.trim().parse::<f64>() {
                        Ok(f) if (0.0..=1.0).contains(&f) => q = f,
                        _ => return Accept::Invalid,
                    }
                }
            }
            ranges.push(MediaRange {
                typ: typ.to_string(),
                sub: sub.to_string(),
                q,
            });
        }
        Accept::Ranges(ranges)
    }

    /// The quality of `offer` under the most specific matching range, or
    /// `None` when no range matches.
    fn quality(&self, offer: &str) -> Option<f64> {
        let Accept::Ranges(ranges) = self else {
            return None;
        };
        let (typ, sub) = offer.split_once('/').unwrap_or((offer, ""));
        let mut best: Option<(u8, f64)> = None;
        for r in ranges {
            let specificity = if r.typ == typ && r.sub == sub {
                3
            } else if r.typ == typ && r.sub == "*" {
                2
            } else if r.typ == "*" && r.sub == "*" {
                1
            } else {
                continue;
            };
            if best.is_none_or(|(s, _)| specificity > s) {
                best = Some((specificity, r.q));
            }
        }
        best.map(|(_, q)| q)
    }

    fn positive(&self, offer: &str) -> Option<f64> {
        self.quality(offer).filter(|q| *q > 0.0)
    }

    /// WebOb's choice of an error body format: offers `text/html` then
    /// `application/json`, the first acceptable offer of highest quality wins
    /// (ties go to HTML). JSON only when it strictly outranks HTML.
    pub fn prefers_json(&self) -> bool {
        match (
            self.positive("text/html"),
            self.positive("application/json"),
        ) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(h), Some(j)) => j > h,
        }
    }

    /// Whether pecan renders JSON for this header: absent, unparsable or
    /// empty always; otherwise `application/json` must be acceptable.
    pub fn accepts_json(&self) -> bool {
        match self {
            Accept::Absent | Accept::Invalid => true,
            Accept::Ranges(r) if r.is_empty() => true,
            Accept::Ranges(_) => self.positive("application/json").is_some(),
        }
    }

    /// Whether the health check answers JSON: its offers are `text/plain`,
    /// `text/html`, `application/json` in that order.
    pub fn health_json(&self) -> bool {
        let Some(j) = self.positive("application/json") else {
            return false;
        };
        let other = |o: &str| self.quality(o).unwrap_or(-1.0);
        j > other("text/plain") && j > other("text/html")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webob_error_format_choice() {
        for (header, json) in [
            ("application/json", true),
            ("text/html", false),
            ("*/*", false),
            ("application/json, text/html", false),
            ("text/html;q=0.5, application/json", true),
            ("application/*", true),
            ("application/json;q=0", false),
            ("bogus", false),
        ] {
            assert_eq!(Accept::parse(header).prefers_json(), json, "{header}");
        }
        assert!(!Accept::Absent.prefers_json());
    }

    #[test]
    fn pecan_accepts_json_unless_excluded() {
        assert!(Accept::Absent.accepts_json());
        assert!(Accept::parse("").accepts_json());
        assert!(Accept::parse("*/*").accepts_json());
        assert!(
            Accept::parse("a").accepts_json(),
            "invalid header is ignored"
        );
        assert!(!Accept::parse("application/xml").accepts_json());
        assert!(!Accept::parse("*/*;q=0").accepts_json());
        assert!(!Accept::parse("*/*;q=2").prefers_json());
    }

    #[test]
    fn health_check_offers() {
        assert!(Accept::parse("application/json").health_json());
        assert!(!Accept::parse("*/*").health_json());
        assert!(!Accept::parse("text/plain, application/json").health_json());
        assert!(!Accept::Absent.health_json());
    }
}
