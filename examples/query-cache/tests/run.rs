//! A tiny database (a few MB) in a temporary directory, 2,000 queries through a fixed and an
//! adaptive cache, without memd (an adaptive cache that no one tells S grows without bound):
//! the run's JSON has the keys the bench script reads, and the caches hit.

use std::path::PathBuf;

use antsched_query_cache::run::{run, CacheMode, RunConfig};
use antsched_query_cache::schema::populate;

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("query-cache-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_tiny_database_runs_with_fixed_and_adaptive_caches() {
    let dir = temp_dir("tiny");
    let db = dir.join("atis.db");
    let bytes = populate(&db, 3.0, 1).unwrap();
    assert!(bytes > 2 << 20, "{bytes} bytes");
    // A second populate refuses to overwrite.
    assert!(populate(&db, 3.0, 1).is_err());
    for (mode, name) in [
        (CacheMode::Fixed(4 << 20), "fixed"),
        (CacheMode::Adaptive, "adaptive"),
    ] {
        let json = dir.join(format!("{name}.json"));
        let timeline = dir.join(format!("{name}.csv"));
        let cfg = RunConfig {
            db: db.clone(),
            queries: 2000,
            mode,
            socket: None,
            domain: None,
            seed: 3,
            alpha: 0.8,
            time_limit: None,
            hog: None,
            warm: true,
            round_bytes: 4 << 20,
            paging_disk_ms: None,
            senpai: Default::default(),
            json: Some(json.clone()),
            timeline: Some(timeline.clone()),
        };
        let r = run(&cfg).unwrap();
        assert!(r.completed, "{name}");
        assert!(r.hit_rate > 0.0, "{name}: hit rate {}", r.hit_rate);
        assert_eq!(r.hits + r.evaluated, 2000);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        for key in [
            "policy",
            "queries",
            "completed_queries",
            "completed",
            "runtime_s",
            "hit_rate",
            "peak_rss_mb",
            "peak_anon_mb",
            "peak_cache_mb",
            "mean_cache_mb",
            "reaction",
            "notifications",
            "types",
        ] {
            assert!(v.get(key).is_some(), "{name}: no {key} in {v}");
        }
        assert_eq!(v["types"], 43);
        let csv = std::fs::read_to_string(&timeline).unwrap();
        assert!(csv.starts_with("time_s,event,severity_s,cache_mb,free_mb"));
        if mode == CacheMode::Fixed(4 << 20) {
            assert!(r.peak_cache_mb <= 4.0 + 1e-9, "{}", r.peak_cache_mb);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_inputs_are_errors_that_name_them() {
    let e = CacheMode::parse("lru:5M").unwrap_err().to_string();
    assert!(e.contains("lru:5M"), "{e}");
    assert!(CacheMode::parse("fixed").is_err());
    assert_eq!(CacheMode::parse("fixed:0").unwrap(), CacheMode::Fixed(0));
    assert_eq!(CacheMode::parse("psi").unwrap(), CacheMode::Psi(300 << 20));
    let dir = temp_dir("bad").join("missing.db");
    let cfg = RunConfig {
        db: dir.clone(),
        queries: 1,
        mode: CacheMode::Adaptive,
        socket: None,
        domain: None,
        seed: 1,
        alpha: 0.8,
        time_limit: None,
        hog: None,
        warm: false,
        round_bytes: 1 << 20,
        paging_disk_ms: None,
        senpai: Default::default(),
        json: None,
        timeline: None,
    };
    let e = format!("{:#}", run(&cfg).err().unwrap());
    assert!(e.contains("missing.db"), "{e}");
    // senpai: its size like psi's; a run outside a memory group is refused before anything
    // runs, naming what it needs.
    assert_eq!(
        CacheMode::parse("senpai").unwrap(),
        CacheMode::Senpai(300 << 20)
    );
    assert_eq!(
        CacheMode::parse("senpai:100M").unwrap(),
        CacheMode::Senpai(100 << 20)
    );
    let e = CacheMode::parse("senpai:lots").unwrap_err().to_string();
    assert!(e.contains("senpai:lots"), "{e}");
    let db = dir.parent().unwrap().join("tiny.db");
    populate(&db, 1.0, 1).unwrap();
    let not_a_group = dir.parent().unwrap().to_path_buf();
    let cfg = RunConfig {
        db,
        mode: CacheMode::Senpai(1 << 20),
        domain: Some(not_a_group),
        ..cfg
    };
    let e = format!("{:#}", run(&cfg).err().unwrap());
    assert!(
        e.contains("senpai") && e.contains("antsched mem run"),
        "{e}"
    );
    assert!(antsched_query_cache::senpai::params(0.01).is_err());
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}
