//! `OpenStack-API-Version` negotiation, the work every `/v1` request does
//! (Go: `BenchmarkParse`, `BenchmarkParseLatest`).

use criterion::{Criterion, criterion_group, criterion_main};
use magnum_domain::microversion::{self, Version};
use std::hint::black_box;

fn negotiation(c: &mut Criterion) {
    let explicit: &[u8] = b"container-infra 1.14";
    c.bench_function("negotiate container-infra 1.14", |b| {
        b.iter(|| {
            let v = microversion::negotiate([black_box(explicit)]);
            assert_eq!(v, Ok(Version::MAX));
        })
    });
    let latest: &[u8] = b"container-infra latest";
    c.bench_function("parse container-infra latest", |b| {
        b.iter(|| microversion::parse([black_box(latest)]).is_ok())
    });
    c.bench_function("negotiate without header", |b| {
        b.iter(|| microversion::negotiate(black_box(std::iter::empty::<&[u8]>())).is_ok())
    });
    c.bench_function("header value 1.14", |b| {
        b.iter(|| black_box(Version::MAX).header_value().len())
    });
}

criterion_group!(benches, negotiation);
criterion_main!(benches);
