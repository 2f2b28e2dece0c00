//! Canonicalization throughput for a ~1 KB and a ~1 MB document.
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gaos_json::{Value, canonical_fnv1a32, canonical_json, parse};
use std::hint::black_box;

/// A document shaped like a game view: nested objects, arrays, strings with
/// escapes and non-ASCII text, integers and fractions.
fn document(target_bytes: usize) -> Value {
    let mut items = Vec::new();
    let mut i = 0u32;
    loop {
        let item = format!(
            r#"{{"id":"unit-{i}","pos":{{"x":{},"y":{}}},"hp":{},"tags":["héro","line\nbreak","q\"uote"],"speed":{},"alive":true,"note":null}}"#,
            i % 97,
            i % 89,
            100 - i % 50,
            f64::from(i) * 0.125 + 0.1
        );
        items.push(parse(&item).expect("valid item"));
        i += 1;
        let doc = Value::Array(items.clone());
        if canonical_json(&doc).len() >= target_bytes {
            return doc;
        }
        if i > 20 && i.is_power_of_two() {
            // grow faster for large targets
            let extra: Vec<Value> = items.clone();
            items.extend(extra);
        }
    }
}

fn bench(c: &mut Criterion) {
    for (name, size) in [("1KB", 1024usize), ("1MB", 1024 * 1024)] {
        let doc = document(size);
        let bytes = canonical_json(&doc).len() as u64;
        let mut group = c.benchmark_group(format!("canonical_json/{name}"));
        group.throughput(Throughput::Bytes(bytes));
        group.bench_function("to_string", |b| b.iter(|| canonical_json(black_box(&doc))));
        group.bench_function("fnv1a_streaming", |b| b.iter(|| canonical_fnv1a32(black_box(&doc))));
        let text = canonical_json(&doc);
        group.bench_function("parse", |b| b.iter(|| parse(black_box(&text)).expect("parses")));
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
