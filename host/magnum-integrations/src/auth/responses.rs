//! The answers of a failed authentication, byte for byte as Magnum serves
//! them: keystonemiddleware's 401 and the 503 WebOb renders for
//! `HTTPServiceUnavailable`. Neither is wrapped in Magnum's `errors`
//! envelope, because the auth filter runs outside the pecan application.

use axum::body::Body;
use axum::response::Response;
use http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, StatusCode};

/// keystonemiddleware's 401 body, byte for byte (Python's `json.dumps`
/// separators and key order).
// keystonemiddleware: auth_token/__init__.py (process_request).
pub(crate) const UNAUTHORIZED_BODY: &str = r#"{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}"#;

// The three renderings of keystonemiddleware's
// webob.exc.HTTPServiceUnavailable('The Keystone service is temporarily
// unavailable.'), as WebOb 1.8.11 produces them.
pub(crate) const UNAVAILABLE_JSON: &str = "{\"message\": \"The server is currently unavailable. Please try again at a later time.<br /><br />\\nThe Keystone service is temporarily unavailable.\\n\\n\", \"code\": \"503 Service Unavailable\", \"title\": \"Service Unavailable\"}";
pub(crate) const UNAVAILABLE_HTML: &str = "<html>\n <head>\n  <title>503 Service Unavailable</title>\n </head>\n <body>\n  <h1>503 Service Unavailable</h1>\n  The server is currently unavailable. Please try again at a later time.<br /><br />\nThe Keystone service is temporarily unavailable.\n\n\n </body>\n</html>";
pub(crate) const UNAVAILABLE_PLAIN: &str = "503 Service Unavailable\n\nThe server is currently unavailable. Please try again at a later time.\n\n The Keystone service is temporarily unavailable.  ";

/// keystonemiddleware's 401: `Content-Type: application/json` (no charset:
/// WebOb adds none to JSON), `WWW-Authenticate: Keystone
/// uri="<www_authenticate_uri>"` and the `{"error": {...}}` body. A HEAD
/// request keeps the `Content-Length` and loses the body (hyper drops it),
/// as WebOb does.
pub fn unauthorized(www_authenticate_uri: &str) -> Response {
    let mut resp = fixed(
        StatusCode::UNAUTHORIZED,
        "application/json",
        UNAUTHORIZED_BODY,
    );
    // The URI was checked when the authenticator was built; a value that
    // cannot be a header here only loses the header, never the 401.
    if let Ok(v) = HeaderValue::from_str(&format!("Keystone uri=\"{www_authenticate_uri}\"")) {
        resp.headers_mut().insert(WWW_AUTHENTICATE, v);
    }
    resp
}

/// The 503 keystonemiddleware answers when it cannot validate a token
/// (Keystone unreachable, or rejecting the service user). WebOb picks the body
/// from the request's `Accept` between text/html and application/json and
/// falls back to text/plain.
pub fn service_unavailable(request_headers: &HeaderMap) -> Response {
    let (content_type, body) = match negotiate_error_type(request_headers) {
        ErrorType::Json => ("application/json", UNAVAILABLE_JSON),
        ErrorType::Html => ("text/html; charset=UTF-8", UNAVAILABLE_HTML),
        ErrorType::Plain => ("text/plain; charset=UTF-8", UNAVAILABLE_PLAIN),
    };
    fixed(StatusCode::SERVICE_UNAVAILABLE, content_type, body)
}

fn fixed(status: StatusCode, content_type: &'static str, body: &'static str) -> Response {
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(CONTENT_LENGTH, HeaderValue::from(body.len()));
    resp
}

/// The body type WebOb chooses for an error page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorType {
    Html,
    Json,
    Plain,
}

/// Reproduces WebOb's `Accept.acceptable_offers(['text/html',
/// 'application/json'])` followed by "first offer wins": each offer takes the
/// q of the most specific media range that matches it; the highest q wins,
/// text/html on a tie; q=0 excludes. No (or an empty) `Accept` gives plain
/// text, as in WebOb, which reads a missing header as an empty, valid one.
pub(crate) fn negotiate_error_type(headers: &HeaderMap) -> ErrorType {
    struct Range {
        typ: String,
        sub: String,
        q: f64,
    }
    let mut ranges = Vec::new();
    for value in headers.get_all(ACCEPT) {
        let value = String::from_utf8_lossy(value.as_bytes());
        for part in value.split(',') {
            let mut fields = part.split(';');
            let media = fields.next().unwrap_or("").trim().to_ascii_lowercase();
            let Some((typ, sub)) = media.split_once('/') else {
                continue;
            };
            if typ.is_empty() || sub.is_empty() {
                continue;
            }
            let mut q = 1.0;
            for param in fields {
                let (k, v) = param.trim().split_once('=').unwrap_or((param.trim(), ""));
                if k.trim().eq_ignore_ascii_case("q") {
                    q = match v.trim().parse::<f64>() {
                        Ok(f) if (0.0..=1.0).contains(&f) || f.is_nan() => f,
                        _ => 0.0,
                    };
                }
            }
            ranges.push(Range {
                typ: typ.to_owned(),
                sub: sub.to_owned(),
                q,
            });
        }
    }
    let quality_of = |typ: &str, sub: &str| {
        let mut best = -1;
        let mut q = 0.0;
        for r in &ranges {
            let spec = if r.typ == typ && r.sub == sub {
                2
            } else if r.typ == typ && r.sub == "*" {
                1
            } else if r.typ == "*" && r.sub == "*" {
                0
            } else {
                -1
            };
            if spec > best {
                best = spec;
                q = r.q;
            }
        }
        if best < 0 { 0.0 } else { q }
    };
    let html = quality_of("text", "html");
    let json = quality_of("application", "json");
    if html == 0.0 && json == 0.0 {
        ErrorType::Plain
    } else if json > html {
        ErrorType::Json
    } else {
        ErrorType::Html
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::testing::body_of;

    fn headers_of(resp: &Response) -> Vec<(String, String)> {
        let mut v: Vec<_> = resp
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        v.sort();
        v
    }

    // Go: TestWriteUnauthorized.
    #[tokio::test]
    async fn unauthorized_is_keystonemiddlewares_401() {
        let resp = unauthorized("http://127.0.0.1:5000/v3");
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            headers_of(&resp),
            vec![
                ("content-length".to_owned(), "114".to_owned()),
                ("content-type".to_owned(), "application/json".to_owned()),
                (
                    "www-authenticate".to_owned(),
                    r#"Keystone uri="http://127.0.0.1:5000/v3""#.to_owned()
                ),
            ]
        );
        // keystonemiddleware 13.0.1, as served by Magnum 23.0.0 (errors.md §2.3).
        assert_eq!(
            body_of(resp).await,
            r#"{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}"#
        );
    }

    // Go: TestWriteServiceUnavailable (lengths and types as WebOb 1.8.11
    // serves HTTPServiceUnavailable('The Keystone service is temporarily
    // unavailable.')).
    #[tokio::test]
    async fn service_unavailable_follows_accept() {
        let cases: &[(Option<&str>, &str, usize, &str)] = &[
            (None, "text/plain; charset=UTF-8", 148, UNAVAILABLE_PLAIN),
            (
                Some(""),
                "text/plain; charset=UTF-8",
                148,
                UNAVAILABLE_PLAIN,
            ),
            (
                Some("application/json"),
                "application/json",
                218,
                UNAVAILABLE_JSON,
            ),
            (
                Some("*/*"),
                "text/html; charset=UTF-8",
                260,
                UNAVAILABLE_HTML,
            ),
            (
                Some("text/plain"),
                "text/plain; charset=UTF-8",
                148,
                UNAVAILABLE_PLAIN,
            ),
            (
                Some("text/html"),
                "text/html; charset=UTF-8",
                260,
                UNAVAILABLE_HTML,
            ),
        ];
        for &(accept, content_type, length, want) in cases {
            let mut h = HeaderMap::new();
            if let Some(a) = accept {
                h.insert(ACCEPT, HeaderValue::from_static(a));
            }
            let resp = service_unavailable(&h);
            assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE, "{accept:?}");
            assert_eq!(resp.headers()[CONTENT_TYPE], content_type, "{accept:?}");
            assert_eq!(
                resp.headers()[CONTENT_LENGTH],
                length.to_string().as_str(),
                "{accept:?}"
            );
            assert!(resp.headers().get(WWW_AUTHENTICATE).is_none(), "{accept:?}");
            let body = body_of(resp).await;
            assert_eq!(body.len(), length, "{accept:?}");
            assert_eq!(body, want, "{accept:?}");
        }
    }

    // Go: TestNegotiateErrorType (expected values checked with WebOb 1.8.11
    // acceptable_offers).
    #[test]
    fn negotiation_matches_webob() {
        let cases = [
            ("", ErrorType::Plain),
            ("application/json", ErrorType::Json),
            ("application/json, */*", ErrorType::Html),
            ("application/json;q=0.5, text/html;q=0.5", ErrorType::Html),
            ("text/*", ErrorType::Html),
            ("application/*", ErrorType::Json),
            ("application/json;q=0, */*", ErrorType::Html),
            ("image/png", ErrorType::Plain),
            ("text/html;q=0.1, application/json;q=0.2", ErrorType::Json),
            ("*/*;q=0.5, application/json;q=0.5", ErrorType::Html),
            ("text/plain", ErrorType::Plain),
        ];
        for (accept, want) in cases {
            let mut h = HeaderMap::new();
            h.insert(ACCEPT, HeaderValue::from_static(accept));
            assert_eq!(negotiate_error_type(&h), want, "Accept {accept:?}");
        }
        assert_eq!(negotiate_error_type(&HeaderMap::new()), ErrorType::Plain);
        // Several Accept headers are one list.
        let mut h = HeaderMap::new();
        h.append(ACCEPT, HeaderValue::from_static("text/html;q=0.1"));
        h.append(ACCEPT, HeaderValue::from_static("application/json"));
        assert_eq!(negotiate_error_type(&h), ErrorType::Json);
    }
}
