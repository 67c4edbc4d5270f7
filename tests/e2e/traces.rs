//! `[tracing]`: the binary's spans posted to an OTLP/HTTP collector, here a
//! receiver on 127.0.0.1 that decodes them with the OTLP protobuf types
//! (opentelemetry-proto).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use prost::Message;
use serde_json::json;

use crate::harness::{ProjectApi, Server, error_chain, request};

const PROJECT: &str = "traces-project";
const TOKEN: &str = "gAAAAAtraces-secret-token";

/// One span as received: its name, ids and attributes (values as text).
#[derive(Clone, Debug)]
struct Received {
    name: String,
    span_id: Vec<u8>,
    parent: Vec<u8>,
    attributes: HashMap<String, String>,
}

impl Received {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

/// An OTLP/HTTP receiver: every post's path, content type and spans.
struct Collector {
    url: String,
    posts: Arc<Mutex<Vec<(String, String)>>>,
    spans: Arc<Mutex<Vec<Received>>>,
}

impl Collector {
    fn start() -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let (posts, spans) = (Arc::default(), Arc::default());
        let (p, s): (Arc<Mutex<Vec<_>>>, Arc<Mutex<Vec<_>>>) =
            (Arc::clone(&posts), Arc::clone(&spans));
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (p, s) = (p.clone(), s.clone());
                std::thread::spawn(move || serve(conn, &p, &s));
            }
        });
        Collector { url, posts, spans }
    }

    fn spans(&self) -> Vec<Received> {
        self.spans.lock().unwrap().clone()
    }

    /// Waits (at most 30 s) until `done` holds for the spans received.
    fn wait(&self, what: &str, done: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: not received within 30 s; spans: {spans:#?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Answers the posts of one connection (HTTP/1.1, kept alive).
fn serve(conn: TcpStream, posts: &Mutex<Vec<(String, String)>>, spans: &Mutex<Vec<Received>>) {
    let mut w = conn.try_clone().expect("clone");
    let mut r = BufReader::new(conn);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        let (mut len, mut ctype) = (0usize, String::new());
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                match k.trim().to_ascii_lowercase().as_str() {
                    "content-length" => len = v.trim().parse().unwrap_or(0),
                    "content-type" => ctype = v.trim().to_owned(),
                    _ => {}
                }
            }
        }
        let mut body = vec![0; len];
        if r.read_exact(&mut body).is_err() {
            return;
        }
        posts.lock().unwrap().push((path, ctype));
        let req = ExportTraceServiceRequest::decode(&body[..]).expect("an OTLP trace export");
        let mut got = spans.lock().unwrap();
        for rs in req.resource_spans {
            for ss in rs.scope_spans {
                for s in ss.spans {
                    let attributes = s
                        .attributes
                        .iter()
                        .map(|kv| {
                            let v = match kv.value.as_ref().and_then(|v| v.value.clone()) {
                                Some(Any::StringValue(s)) => s,
                                Some(Any::IntValue(i)) => i.to_string(),
                                other => format!("{other:?}"),
                            };
                            (kv.key.clone(), v)
                        })
                        .collect();
                    got.push(Received {
                        name: s.name,
                        span_id: s.span_id,
                        parent: s.parent_span_id,
                        attributes,
                    });
                }
            }
        }
        drop(got);
        // An empty ExportTraceServiceResponse: all spans taken.
        let answer =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if w.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

#[test]
fn traces_of_requests_and_driver_calls_carry_the_request_id_and_are_off_by_default() {
    let collector = Collector::start();
    let on = Server::start(
        &format!("[tracing]\notlp_endpoint = {}/\n", collector.url),
        &["all-in-one"],
    );
    // Unset (the default), at the same time: no span of its requests.
    let off = Server::start("", &["all-in-one"]);

    let api = ProjectApi {
        url: &on.url,
        project: PROJECT,
    };
    let template = api.template("traces-tpl", "fake");
    let created = api.create("traces-c1", &template, json!({}));
    assert_eq!(
        created.status,
        202,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    let create_id = created.header("x-openstack-request-id").to_owned();
    assert!(create_id.starts_with("req-"), "{create_id}");
    let uuid = created.json()["uuid"].as_str().expect("uuid").to_string();
    api.wait(&uuid, Duration::from_secs(60), |st| st == "CREATE_COMPLETE");
    let missing = format!("/v1/clusters/{}", uuid::Uuid::new_v4());
    let not_found = api.call("GET", &missing, None);
    assert_eq!(not_found.status, 404);
    let not_found_id = not_found.header("x-openstack-request-id").to_owned();
    let headers = [
        ("X-Auth-Token", TOKEN),
        ("X-Project-Id", PROJECT),
        ("X-User-Id", "traces-user"),
        ("X-Roles", "member,reader"),
    ];
    let listed = request("GET", &format!("{}/v1/clusters", on.url), &headers, None)
        .unwrap_or_else(|e| panic!("list: {}", error_chain(&e)));
    assert_eq!(listed.status, 200);
    let list_id = listed.header("x-openstack-request-id").to_owned();

    let off_answer = request("GET", &format!("{}/v1/clusters", off.url), &headers, None)
        .unwrap_or_else(|e| panic!("list: {}", error_chain(&e)));
    let off_id = off_answer.header("x-openstack-request-id").to_owned();
    assert!(off_id.starts_with("req-"), "{off_id}");

    let has_request = |spans: &[Received], id: &str| {
        spans
            .iter()
            .any(|s| s.attr("request_id") == Some(id) && s.attr("http.route").is_some())
    };
    let spans = collector.wait("the request spans and the create's driver calls", |spans| {
        [&create_id, &not_found_id, &list_id]
            .iter()
            .all(|id| has_request(spans, id))
            && spans.iter().any(|s| {
                s.attr("function") == Some("create-cluster")
                    && s.attr("request_id") == Some(&create_id)
            })
    });

    // The request spans: route pattern, method, status, request id.
    let server = |id: &str| {
        spans
            .iter()
            .find(|s| s.attr("request_id") == Some(id) && s.attr("http.route").is_some())
            .expect("request span")
            .clone()
    };
    let create = server(&create_id);
    assert_eq!(create.name, "POST /v1/clusters");
    assert_eq!(create.attr("http.route"), Some("/v1/clusters"));
    assert_eq!(create.attr("http.request.method"), Some("POST"));
    assert_eq!(create.attr("http.response.status_code"), Some("202"));
    let nf = server(&not_found_id);
    assert_eq!(nf.attr("http.route"), Some("/v1/clusters/{cluster_ident}"));
    assert_eq!(nf.attr("http.request.method"), Some("GET"));
    assert_eq!(nf.attr("http.response.status_code"), Some("404"));
    let list = server(&list_id);
    assert_eq!(list.name, "GET /v1/clusters");
    assert_eq!(list.attr("http.response.status_code"), Some("200"));

    // The driver calls of the create carry its request id: those made
    // while it was answered are children of its span; the create job's
    // create-cluster runs after the answer, with the same request id.
    let calls: Vec<&Received> = spans
        .iter()
        .filter(|s| s.attr("driver").is_some() && s.attr("request_id") == Some(&create_id))
        .collect();
    assert!(
        calls.iter().all(|s| s.attr("driver") == Some("fake")),
        "{calls:#?}"
    );
    assert!(
        calls
            .iter()
            .any(|s| s.parent == create.span_id && s.name.starts_with("driver ")),
        "no driver call under the create's span: {calls:#?}"
    );
    // Every driver call has a request id or a status-loop pass id.
    for s in spans.iter().filter(|s| s.attr("driver").is_some()) {
        assert!(
            s.attr("request_id").is_some() || s.attr("pass_id").is_some(),
            "{s:#?}"
        );
    }

    // No attribute carries a header's value, a token or a body.
    for s in &spans {
        for (k, v) in &s.attributes {
            for secret in [TOKEN, "traces-user", "traces-c1", PROJECT, uuid.as_str()] {
                assert!(!v.contains(secret), "{k} = {v} carries {secret}");
            }
        }
        assert!(s.attr("request_id") != Some(&off_id), "{s:#?}");
    }
    for (path, ctype) in collector.posts.lock().unwrap().iter() {
        assert_eq!(path, "/v1/traces");
        assert_eq!(ctype, "application/x-protobuf");
    }
    assert!(
        !off.output().contains("exporting traces"),
        "{}",
        off.output()
    );
}

#[test]
fn an_unreachable_collector_neither_delays_nor_fails_requests() {
    // A collector that accepts connections and never answers.
    let blackhole = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = blackhole.local_addr().expect("addr");
    let held = Arc::new(Mutex::new(Vec::new()));
    let h = held.clone();
    std::thread::spawn(move || {
        for c in blackhole.incoming().flatten() {
            h.lock().unwrap().push(c);
        }
    });
    let s = Server::start(
        &format!("[tracing]\notlp_endpoint = http://{addr}\nexport_timeout = 3\n"),
        &["all-in-one"],
    );
    let api = ProjectApi {
        url: &s.url,
        project: PROJECT,
    };
    assert_eq!(api.call("GET", "/v1/clusters", None).status, 200);
    // Long enough for the batch processor (every 5 s) to try the
    // collector twice while requests are answered: a request that waited
    // for a post would take up to its 3 s timeout.
    let until = Instant::now() + Duration::from_secs(9);
    let mut slowest = Duration::ZERO;
    let mut n = 0;
    while Instant::now() < until {
        let t = Instant::now();
        assert_eq!(api.call("GET", "/v1/clusters", None).status, 200);
        slowest = slowest.max(t.elapsed());
        n += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        slowest < Duration::from_secs(1),
        "slowest of {n} requests: {slowest:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while !s.output().contains("the collector did not take spans") {
        assert!(
            Instant::now() < deadline,
            "no export failure logged:\n{}",
            s.output()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        !held.lock().unwrap().is_empty(),
        "the collector was never tried"
    );
    let failures = s
        .output()
        .matches("the collector did not take spans")
        .count();
    assert_eq!(
        failures,
        1,
        "logged more than once a minute:\n{}",
        s.output()
    );
}
