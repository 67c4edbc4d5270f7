//! The one place an error body is written: Magnum's `{"errors":[…]}`
//! envelope in its four shapes (errors.md: WSME faults, WebOb routing errors,
//! the microversion-range 406, and the unexpected 500).

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use magnum_domain::MagnumError;
use magnum_domain::microversion::{self, Version};
use serde::Serialize;

use super::accept::Accept;
use super::version_headers;
use python_semantics::pyjson as json;

/// `MagnumException`'s default message, used for every unexpected error so
/// that no internal text reaches the client.
///
/// Deviation: Magnum returns `str(exception)` of unexpected exceptions (SQL
/// errors, Python attribute errors); we never leak internals.
pub const UNKNOWN_MESSAGE: &str = "An unknown exception occurred.";

/// An error answered by the API.
#[derive(Debug)]
pub enum ApiError {
    /// A Magnum exception rendered by WSME (producer A of errors.md).
    Magnum(MagnumError),
    /// A pecan/WebOb error (producer B): routing 404/405, 406s. Its title
    /// and detail are shown only to clients preferring JSON; the version
    /// headers are removed.
    WebOb {
        status: StatusCode,
        detail: String,
        allow: Option<&'static str>,
    },
    /// A well-formed version outside the supported range (producer C); the
    /// version headers stay.
    VersionRange { description: String },
    /// Anything unexpected: logged once with the request id, answered with
    /// Magnum's generic 500.
    Internal(anyhow::Error),
}

impl From<MagnumError> for ApiError {
    fn from(e: MagnumError) -> Self {
        ApiError::Magnum(e)
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> Self {
        ApiError::Internal(e)
    }
}

/// A use case's client error is answered as it is; any other failure is
/// the generic 500 (logged once by the dispatcher).
impl From<crate::conductor::Error> for ApiError {
    fn from(e: crate::conductor::Error) -> Self {
        match e.into_answer() {
            Ok(e) => ApiError::Magnum(e),
            Err(e) => ApiError::Internal(e),
        }
    }
}

impl ApiError {
    /// A WebOb error without detail.
    pub fn webob(status: StatusCode) -> ApiError {
        ApiError::WebOb {
            status,
            detail: String::new(),
            allow: None,
        }
    }

    /// Routing's 404.
    pub fn not_found() -> ApiError {
        ApiError::webob(StatusCode::NOT_FOUND)
    }

    /// The HTTP status of the answer.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Magnum(e) => StatusCode::from_u16(e.status)
                .ok()
                .filter(|s| s.is_client_error() || s.is_server_error())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            ApiError::WebOb { status, .. } => *status,
            ApiError::VersionRange { .. } => StatusCode::NOT_ACCEPTABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The answer for a request whose `Accept` header is `accept`. The
    /// caller logs `Internal` errors (it knows the request id).
    pub fn render(&self, accept: &Accept) -> Response {
        let status = self.status();
        match self {
            ApiError::Magnum(e) => fault(status, &e.message),
            ApiError::Internal(_) => fault(status, UNKNOWN_MESSAGE),
            ApiError::WebOb { detail, allow, .. } => {
                let (title, detail) = if accept.prefers_json() {
                    (status.canonical_reason().unwrap_or(""), detail.as_str())
                } else {
                    ("", "")
                };
                let item = Item {
                    request_id: "",
                    code: "",
                    status: status.as_u16(),
                    title,
                    detail,
                    links: &[],
                };
                let mut resp = json_response(status, &Envelope { errors: [item] });
                if let Some(allow) = allow {
                    // An empty Allow is sent as such (the actions controller).
                    if let Ok(v) = HeaderValue::from_str(allow) {
                        resp.headers_mut().insert(header::ALLOW, v);
                    }
                }
                resp.extensions_mut().insert(version_headers::Drop);
                resp
            }
            ApiError::VersionRange { description } => {
                #[derive(Serialize)]
                struct Link {
                    href: &'static str,
                    rel: &'static str,
                }
                #[derive(Serialize)]
                struct RangeItem<'a> {
                    code: &'static str,
                    links: [Link; 1],
                    max_version: String,
                    min_version: String,
                    title: &'static str,
                    #[serde(skip_serializing_if = "Option::is_none")]
                    description: Option<&'a str>,
                }
                let item = RangeItem {
                    code: microversion::UNSUPPORTED_CODE,
                    links: [Link {
                        href: microversion::UNSUPPORTED_HELP_HREF,
                        rel: "help",
                    }],
                    max_version: Version::MAX.to_string(),
                    min_version: Version::MIN.to_string(),
                    title: microversion::UNSUPPORTED_TITLE,
                    description: accept.prefers_json().then_some(description.as_str()),
                };
                json_response(status, &Envelope { errors: [item] })
            }
        }
    }
}

#[derive(Serialize)]
struct Envelope<T: Serialize> {
    errors: [T; 1],
}

/// One element of the envelope (Magnum's `ParsableErrorMiddleware`).
#[derive(Serialize)]
struct Item<'a> {
    request_id: &'a str,
    code: &'a str,
    status: u16,
    title: &'a str,
    detail: &'a str,
    links: &'a [&'a str],
}

/// The title Magnum derives from a message: the text before the first
/// period (parsable_error.py).
pub fn title(message: &str) -> &str {
    message.split_once('.').map_or(message, |(t, _)| t)
}

fn fault(status: StatusCode, message: &str) -> Response {
    let code = if status.is_server_error() {
        "server"
    } else {
        "client"
    };
    let item = Item {
        request_id: "",
        code,
        status: status.as_u16(),
        title: title(message),
        detail: message,
        links: &[],
    };
    json_response(status, &Envelope { errors: [item] })
}

/// `value` as a JSON answer, written as Python's `json.dumps` writes it, with
/// its `Content-Length`.
pub fn json_response<T: Serialize + ?Sized>(status: StatusCode, value: &T) -> Response {
    let (status, body) = json_body(status, value);
    json_bytes_response(status, body)
}

/// The status and JSON body of `value`. Serialising our own types cannot
/// fail; should it, the answer is still an envelope, with a 500.
pub fn json_body<T: Serialize + ?Sized>(status: StatusCode, value: &T) -> (StatusCode, Bytes) {
    match json::to_vec(value) {
        Ok(b) => (status, Bytes::from(b)),
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Bytes::from_static(br#"{"errors": []}"#),
        ),
    }
}

/// A JSON answer whose body is already rendered.
pub fn json_bytes_response(status: StatusCode, body: Bytes) -> Response {
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// The empty answer of a deletion.
pub fn no_content() -> Response {
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = StatusCode::NO_CONTENT;
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    async fn body(r: Response) -> String {
        String::from_utf8(r.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap()
    }

    #[tokio::test]
    async fn a_magnum_fault_has_a_title_cut_at_the_first_period() {
        let e = ApiError::Magnum(MagnumError::new(
            409,
            "Conflict",
            "Cluster x is busy. Try later.",
        ));
        let r = e.render(&Accept::Absent);
        assert_eq!(r.status(), 409);
        assert_eq!(
            body(r).await,
            r#"{"errors": [{"request_id": "", "code": "client", "status": 409, "title": "Cluster x is busy", "detail": "Cluster x is busy. Try later.", "links": []}]}"#
        );
    }

    #[tokio::test]
    async fn internal_errors_never_show_their_text() {
        let r = ApiError::Internal(anyhow::anyhow!("password=hunter2")).render(&Accept::Absent);
        assert_eq!(r.status(), 500);
        let b = body(r).await;
        assert!(
            !b.contains("hunter2")
                && b.contains(r#""code": "server""#)
                && b.contains(UNKNOWN_MESSAGE),
            "{b}"
        );
    }

    #[tokio::test]
    async fn webob_errors_show_title_and_detail_only_to_json_clients() {
        let e = ApiError::WebOb {
            status: StatusCode::NOT_ACCEPTABLE,
            detail: "Invalid value".into(),
            allow: None,
        };
        assert!(
            body(e.render(&Accept::Absent))
                .await
                .contains(r#""title": "", "detail": """#)
        );
        let e = ApiError::WebOb {
            status: StatusCode::NOT_ACCEPTABLE,
            detail: "Invalid value".into(),
            allow: None,
        };
        assert!(
            body(e.render(&Accept::parse("application/json")))
                .await
                .contains(r#""title": "Not Acceptable", "detail": "Invalid value""#)
        );
    }

    #[test]
    fn out_of_range_statuses_become_500() {
        assert_eq!(
            ApiError::Magnum(MagnumError::new(200, "X", "x")).status(),
            500
        );
    }
}
