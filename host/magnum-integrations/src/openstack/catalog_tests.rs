use super::catalog::{EndpointCache, endpoint_url, next_url, parse_catalog, service_roots};

const V3_CATALOG: &str = r#"[
 {"type":"identity","name":"keystone","endpoints":[{"interface":"public","region":"RegionOne","region_id":"RegionOne","url":"http://ks/v3"}]},
 {"type":"image","name":"glance","endpoints":[
   {"interface":"admin","region":"RegionOne","region_id":"RegionOne","url":"http://glance-admin:9292"},
   {"interface":"public","region":"RegionTwo","region_id":"RegionTwo","url":"http://glance-two:9292"},
   {"interface":"public","region":"RegionOne","region_id":"RegionOne","url":"http://glance-one:9292"},
   {"interface":"internal","region":"RegionOne","region_id":"RegionOne","url":"http://glance-int:9292"}]}
]"#;

const V2_CATALOG: &str = r#"{"access":{"serviceCatalog":[
 {"type":"compute","name":"nova","endpoints":[
   {"region":"RegionOne","publicURL":"http://nova-pub:8774/v2.1","internalURL":"http://nova-int:8774/v2.1","adminURL":"http://nova-adm:8774/v2.1"}]}
]}}"#;

// Go: TestEndpointURL.
#[test]
fn endpoints_are_chosen_by_type_interface_and_region() {
    // One cache for every case, each resolved twice through it: the same
    // catalog asked for another service, interface or region must not get
    // a remembered answer.
    let cache = EndpointCache::default();
    let wrapped = format!(r#"{{"catalog":{V3_CATALOG}}}"#);
    let token = format!(r#"{{"token":{{"catalog":{V3_CATALOG}}}}}"#);
    struct Case<'a> {
        name: &'a str,
        raw: &'a str,
        service: &'a str,
        endpoint_type: &'a str,
        region: &'a str,
        want: Result<&'a str, &'a str>,
    }
    let cases = [
        Case {
            name: "first public endpoint",
            raw: V3_CATALOG,
            service: "image",
            endpoint_type: "",
            region: "",
            want: Ok("http://glance-two:9292"),
        },
        Case {
            name: "publicURL spelling",
            raw: V3_CATALOG,
            service: "image",
            endpoint_type: "publicURL",
            region: "RegionOne",
            want: Ok("http://glance-one:9292"),
        },
        Case {
            name: "internalURL",
            raw: V3_CATALOG,
            service: "image",
            endpoint_type: "internalURL",
            region: "",
            want: Ok("http://glance-int:9292"),
        },
        Case {
            name: "admin",
            raw: V3_CATALOG,
            service: "image",
            endpoint_type: "admin",
            region: "",
            want: Ok("http://glance-admin:9292"),
        },
        Case {
            name: "wrapped in catalog",
            raw: &wrapped,
            service: "image",
            endpoint_type: "",
            region: "RegionTwo",
            want: Ok("http://glance-two:9292"),
        },
        Case {
            name: "whole token body",
            raw: &token,
            service: "identity",
            endpoint_type: "",
            region: "",
            want: Ok("http://ks/v3"),
        },
        Case {
            name: "v2 catalog internal",
            raw: V2_CATALOG,
            service: "compute",
            endpoint_type: "internalURL",
            region: "",
            want: Ok("http://nova-int:8774/v2.1"),
        },
        Case {
            name: "v2 catalog default",
            raw: V2_CATALOG,
            service: "compute",
            endpoint_type: "",
            region: "",
            want: Ok("http://nova-pub:8774/v2.1"),
        },
        Case {
            name: "missing service",
            raw: V3_CATALOG,
            service: "network",
            endpoint_type: "publicURL",
            region: "",
            want: Err("publicURL endpoint for network service not found"),
        },
        Case {
            name: "missing region",
            raw: V3_CATALOG,
            service: "image",
            endpoint_type: "internalURL",
            region: "RegionTwo",
            want: Err("internalURL endpoint for image service in RegionTwo region not found"),
        },
        Case {
            name: "empty",
            raw: "",
            service: "image",
            endpoint_type: "",
            region: "",
            want: Err("The service catalog is empty."),
        },
        Case {
            name: "empty list",
            raw: "[]",
            service: "image",
            endpoint_type: "",
            region: "",
            want: Err("The service catalog is empty."),
        },
    ];
    for c in cases {
        let entries = match parse_catalog(c.raw.as_bytes()) {
            Ok(e) => e,
            Err(e) => panic!("{}: {e}", c.name),
        };
        let want = c.want.map(str::to_owned).map_err(str::to_owned);
        let got = endpoint_url(&entries, c.service, c.endpoint_type, c.region);
        assert_eq!(got, want, "{}", c.name);
        for pass in 1..=2 {
            let got = cache.resolve(c.raw.as_bytes(), c.service, c.endpoint_type, c.region);
            assert_eq!(got, want, "{}: cached resolve, pass {pass}", c.name);
        }
    }
    // Only the catalogs that resolved are remembered: the v3 array, its two
    // wrappings and the v2 catalog.
    assert_eq!(cache.catalogs(), 4);
}

#[test]
fn the_cache_starts_over_when_full() {
    let cache = EndpointCache::default();
    for i in 0..300 {
        let raw = format!(
            r#"[{{"type":"image","endpoints":[{{"interface":"public","url":"http://g{i}:9292"}}]}}]"#
        );
        assert_eq!(
            cache.resolve(raw.as_bytes(), "image", "", ""),
            Ok(format!("http://g{i}:9292"))
        );
        assert!(
            cache.catalogs() <= 256,
            "{} catalogs held",
            cache.catalogs()
        );
    }
}

// Go: TestParseCatalogRejectsGarbage.
#[test]
fn a_catalog_of_the_wrong_shape_is_refused() {
    assert!(parse_catalog(br#"{"catalog": 3}"#).is_err());
    assert!(parse_catalog(b"[1").is_err());
    assert!(matches!(parse_catalog(b" null "), Ok(e) if e.is_empty()));
}

// Go: TestServiceRoots.
#[test]
fn service_roots_from_endpoints() {
    for (raw, version, root, base) in [
        (
            "http://glance:9292",
            "v2",
            "http://glance:9292/",
            "http://glance:9292/v2/",
        ),
        (
            "http://glance:9292/",
            "v2",
            "http://glance:9292/",
            "http://glance:9292/v2/",
        ),
        (
            "https://cloud/image",
            "v2",
            "https://cloud/image/",
            "https://cloud/image/v2/",
        ),
        (
            "https://cloud/image/v2",
            "v2",
            "https://cloud/image/",
            "https://cloud/image/v2/",
        ),
        (
            "http://nova:8774/v2.1",
            "v2.1",
            "http://nova:8774/",
            "http://nova:8774/v2.1/",
        ),
        (
            "http://nova:8774/v2.1/3f1c0e",
            "v2.1",
            "http://nova:8774/",
            "http://nova:8774/v2.1/3f1c0e/",
        ),
        (
            "http://nova:8774",
            "v2.1",
            "http://nova:8774/",
            "http://nova:8774/v2.1/",
        ),
        (
            "http://neutron:9696",
            "v2.0",
            "http://neutron:9696/",
            "http://neutron:9696/v2.0/",
        ),
        (
            "http://cloud/network/v2.0/",
            "v2.0",
            "http://cloud/network/",
            "http://cloud/network/v2.0/",
        ),
    ] {
        assert_eq!(
            service_roots(raw, version),
            Ok((root.to_owned(), base.to_owned())),
            "{raw}"
        );
    }
    for bad in ["glance:9292", "ftp://x/", "http://", "://"] {
        assert!(service_roots(bad, "v2").is_err(), "{bad:?}: no error");
    }
}

#[test]
fn next_links_keep_only_their_query() {
    let c = "http://me/v2/images";
    assert_eq!(
        next_url(c, "/v2/images?marker=a&name=b"),
        Ok(format!("{c}?marker=a&name=b"))
    );
    assert_eq!(
        next_url(c, "http://unreachable:9292/v2/images?marker=a"),
        Ok(format!("{c}?marker=a"))
    );
    assert!(next_url(c, "/v2/images").is_err(), "a link without marker");
}
