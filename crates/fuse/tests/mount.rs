//! The mount end to end: real `cat`, `dd`, `fio` and `sha256sum` on a real FUSE mount in a
//! temporary directory. They need root and `/dev/fuse` (and fio): elsewhere they skip with a
//! printed reason, and under `ANTSCHED_REQUIRE_FUSE=1` (CI) they fail instead.
//!
//! Where timing is not the point they use a fast disk (`nvme-ssd`) and `noop`, so each runs
//! in about a second; the one that looks at the scheduler uses the paper's disk briefly.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use antsched_fuse::{CacheMode, ContextKind, MountError};
use common::*;

/// A backing tree with files of awkward sizes, nested, plus links that point out of it.
fn populate(b: &Path) {
    std::fs::create_dir_all(b.join("src/deep")).unwrap();
    std::fs::create_dir_all(b.join("etc")).unwrap();
    std::fs::write(b.join("empty"), b"").unwrap();
    std::fs::write(b.join("one"), b"x").unwrap();
    std::fs::write(b.join("odd.bin"), bytes(1, 4097)).unwrap();
    std::fs::write(b.join("src/a.c"), bytes(2, 100_003)).unwrap();
    std::fs::write(b.join("src/deep/big.bin"), bytes(3, 3 << 20)).unwrap();
    std::fs::write(b.join("etc/passwd"), b"the backing tree's own passwd\n").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", b.join("abs-out")).unwrap();
    std::os::unix::fs::symlink("../../../../../../../etc/passwd", b.join("src/rel-out")).unwrap();
    std::os::unix::fs::symlink("deep/big.bin", b.join("src/inside")).unwrap();
}

fn regular_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let t = e.file_type().unwrap();
        if t.is_dir() {
            regular_files(&e.path(), out);
        } else if t.is_file() {
            out.push(e.path());
        }
    }
}

#[test]
fn every_file_read_through_the_mount_has_the_backing_files_sha256() {
    if !fuse_or_skip(
        "every_file_read_through_the_mount_has_the_backing_files_sha256",
        &[],
    ) {
        return;
    }
    let t = TempDir::new("sha");
    let (b, m) = t.backing_and_mountpoint();
    populate(&b);
    for cache in [
        CacheMode::PageCache {
            readahead_kib: Some(64),
        },
        CacheMode::DirectIo,
    ] {
        let mut cfg = fast_config(&b, &m);
        cfg.cache = cache;
        let s = serve(&cfg);
        let mut files = Vec::new();
        regular_files(&b, &mut files);
        assert_eq!(files.len(), 6);
        for f in &files {
            let rel = f.strip_prefix(&b).unwrap();
            let through = m.join(rel);
            // cat, and dd with small odd blocks, both through the mount.
            let by_cat = sh_ok(&format!("cat '{}' | sha256sum", through.display()));
            let by_dd = sh_ok(&format!(
                "dd if='{}' bs=3000 status=none | sha256sum",
                through.display()
            ));
            let want = sha256(f);
            assert!(by_cat.starts_with(&want), "cat {rel:?} ({cache:?})");
            assert!(by_dd.starts_with(&want), "dd {rel:?} ({cache:?})");
        }
        // O_DIRECT reads too (fio's direct=1 path).
        let by_direct = sh_ok(&format!(
            "dd if='{}' bs=64k iflag=direct status=none | sha256sum",
            m.join("src/deep/big.bin").display()
        ));
        assert!(by_direct.starts_with(&sha256(&b.join("src/deep/big.bin"))));
        let report = s.unmount();
        assert!(
            report.bytes >= 3 << 20,
            "the reads went through the runtime: {} bytes",
            report.bytes
        );
        assert!(!is_mounted(&m));
    }
}

#[test]
fn files_written_through_the_mount_read_back_identical_after_unmount() {
    if !fuse_or_skip(
        "files_written_through_the_mount_read_back_identical_after_unmount",
        &[],
    ) {
        return;
    }
    let t = TempDir::new("write");
    let (b, m) = t.backing_and_mountpoint();
    std::fs::write(b.join("existing"), bytes(9, 10_000)).unwrap();
    let src = t.join("src.bin");
    std::fs::write(&src, bytes(7, (5 << 20) + 123)).unwrap();
    let s = serve(&fast_config(&b, &m));
    // dd in odd blocks with an fsync at the end, cp, an append, an overwrite in the middle,
    // a truncation, a rename and a new directory.
    sh_ok(&format!(
        "dd if='{}' of='{}' bs=7777 conv=fsync status=none",
        src.display(),
        m.join("dd.bin").display()
    ));
    std::fs::create_dir(m.join("dir")).unwrap();
    sh_ok(&format!(
        "cp '{}' '{}'",
        src.display(),
        m.join("dir/cp.bin").display()
    ));
    sh_ok(&format!(
        "printf 'appended' >> '{}'",
        m.join("existing").display()
    ));
    sh_ok(&format!(
        "printf 'MIDDLE' | dd of='{}' bs=1 seek=5000 conv=notrunc status=none",
        m.join("existing").display()
    ));
    sh_ok(&format!(
        "truncate -s 100000 '{}'",
        m.join("dir/cp.bin").display()
    ));
    sh_ok(&format!(
        "mv '{}' '{}'",
        m.join("dd.bin").display(),
        m.join("dir/renamed.bin").display()
    ));
    // Written and then read back through the mount while mounted.
    assert_eq!(sha256(&m.join("dir/renamed.bin")), sha256(&src));
    let report = s.unmount();
    assert!(!is_mounted(&m));

    assert_eq!(sha256(&b.join("dir/renamed.bin")), sha256(&src));
    let mut want = bytes(9, 10_000);
    want[5000..5006].copy_from_slice(b"MIDDLE");
    want.extend_from_slice(b"appended");
    assert_eq!(std::fs::read(b.join("existing")).unwrap(), want);
    assert_eq!(
        std::fs::read(b.join("dir/cp.bin")).unwrap(),
        bytes(7, (5 << 20) + 123)[..100_000]
    );
    assert!(
        report.bytes >= 2 * (5 << 20),
        "the writes went through the runtime: {} bytes",
        report.bytes
    );
}

#[test]
fn fio_runs_on_the_mount_and_each_process_is_a_context_that_exits() {
    if !fuse_or_skip(
        "fio_runs_on_the_mount_and_each_process_is_a_context_that_exits",
        &["fio"],
    ) {
        return;
    }
    let t = TempDir::new("fio");
    let (b, m) = t.backing_and_mountpoint();
    let s = serve(&fast_config(&b, &m));
    // Two processes write their files with verification data, then read them back and
    // check every block (fio's own integrity check, through the mount).
    let job = t.join("job.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=psync\ndirect=1\nbs=64k\nsize=4m\nverify=crc32c\ndo_verify=1\n\
         [w1]\nrw=write\nfilename=f1\n[w2]\nrw=write\nfilename=f2\n",
    )
    .unwrap();
    sh_ok(&format!(
        "cd '{}' && fio --output=/dev/null '{}'",
        m.display(),
        job.display()
    ));
    let r = (s.reporter)();
    let fio: Vec<_> = r
        .contexts
        .iter()
        .filter(|c| c.report.name == "fio" && c.report.bytes >= 8 << 20)
        .collect();
    assert_eq!(
        fio.len(),
        2,
        "two fio processes wrote and read 4 MiB each: {:?}",
        r.contexts
    );
    // fio's workers have exited: the pidfd watcher saw it and told the scheduler.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let r = (s.reporter)();
        let exited = r
            .contexts
            .iter()
            .filter(|c| c.report.name == "fio" && c.exited)
            .count();
        if exited >= 2 {
            assert!(r.exits >= 2);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "fio's exits were not seen: {:?}",
            r.contexts
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The live statistics file is the same JSON, as `antsched sim --json` writes it.
    let text = std::fs::read_to_string(m.join(".antsched/stats.json")).unwrap();
    let all: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(all["runs"].as_array().map(Vec::len), Some(1), "{text}");
    let v = &all["runs"][0];
    for key in [
        "scheduler",
        "disk",
        "throughput_mb_s",
        "utilization",
        "contexts",
        "anticipation",
    ] {
        assert!(v.get(key).is_some(), "stats.json has {key}: {text}");
    }
    let c = &v["contexts"][0];
    for key in [
        "name",
        "class",
        "bytes",
        "throughput_mb_s",
        "share",
        "latency_ms",
    ] {
        assert!(c.get(key).is_some(), "a context has {key}: {text}");
    }
    for key in ["p50", "p99", "max"] {
        assert!(c["latency_ms"].get(key).is_some());
    }
    for key in ["waits", "hits", "timeouts"] {
        assert!(v["anticipation"].get(key).is_some());
    }
    s.unmount();
}

#[test]
fn the_scheduler_and_the_paper_disk_apply_to_real_readers() {
    if !fuse_or_skip(
        "the_scheduler_and_the_paper_disk_apply_to_real_readers",
        &[],
    ) {
        return;
    }
    // Two dd processes reading two files with O_DIRECT under as-aged-sptf on the 34GXP:
    // the scheduler waits for them (anticipation) and every read pays the disk's time.
    let t = TempDir::new("sched");
    let (b, m) = t.backing_and_mountpoint();
    std::fs::write(b.join("a"), bytes(1, 4 << 20)).unwrap();
    std::fs::write(b.join("b"), bytes(2, 4 << 20)).unwrap();
    // The defaults: the paper's disk and as-aged-sptf.
    let mut cfg = antsched_fuse::MountConfig::new(&b, &m);
    cfg.cache = CacheMode::DirectIo;
    let s = serve(&cfg);
    sh_ok(&format!(
        "cd '{}' && (dd if=a of=/dev/null bs=64k status=none & dd if=b of=/dev/null bs=64k status=none; wait)",
        m.display()
    ));
    let r = s.unmount();
    assert_eq!(r.scheduler, "as-aged-sptf");
    assert_eq!(r.disk, "deskstar-34gxp");
    assert!(r.anticipation.waits > 0, "{:?}", r.anticipation);
    let dd: Vec<_> = r
        .contexts
        .iter()
        .filter(|c| c.report.name == "dd")
        .collect();
    assert_eq!(dd.len(), 2);
    // 8 MiB cannot come off this disk faster than its outer zone's media rate, 21.4 MB/s
    // (a lower bound on emulated time: a loaded machine only makes it longer).
    assert!(
        r.duration_s >= 8.0 * 1.048_576 / 21.4 * 0.95,
        "{}",
        r.duration_s
    );
    assert!(r.utilization > 0.0 && r.utilization <= 1.0);
}

#[test]
fn nothing_outside_the_backing_directory_is_reachable() {
    if !fuse_or_skip("nothing_outside_the_backing_directory_is_reachable", &[]) {
        return;
    }
    let t = TempDir::new("confine");
    let (b, m) = t.backing_and_mountpoint();
    populate(&b);
    std::fs::write(t.join("secret"), b"outside\n").unwrap();
    let s = serve(&fast_config(&b, &m));
    let own = "the backing tree's own passwd\n";
    // An absolute link and a link that climbs far up both land inside the tree.
    assert_eq!(std::fs::read_to_string(m.join("abs-out")).unwrap(), own);
    assert_eq!(std::fs::read_to_string(m.join("src/rel-out")).unwrap(), own);
    assert_eq!(
        std::fs::read_link(m.join("abs-out")).unwrap(),
        Path::new("etc/passwd")
    );
    // A link into the tree still works.
    assert_eq!(
        sha256(&m.join("src/inside")),
        sha256(&b.join("src/deep/big.bin"))
    );
    // Links made through the mount to places outside are confined too.
    let secret = t.join("secret");
    std::os::unix::fs::symlink(&secret, m.join("to-secret")).unwrap();
    std::os::unix::fs::symlink("../secret", m.join("up-secret")).unwrap();
    for l in ["to-secret", "up-secret"] {
        let e = std::fs::read_to_string(m.join(l)).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{l}: {e}");
    }
    // A directory link that climbs out lists the mount's root, not the host's.
    std::os::unix::fs::symlink("../../../../../..", m.join("src/deep/up")).unwrap();
    let names: Vec<String> = std::fs::read_dir(m.join("src/deep/up"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.contains(&"odd.bin".to_string()), "{names:?}");
    assert!(!names.contains(&"secret".to_string()));
    // The stored target is what the user wrote; only what the kernel is told is confined.
    assert_eq!(
        std::fs::read_link(b.join("up-secret")).unwrap(),
        Path::new("../secret")
    );
    // The statistics directory is read-only and not in the backing tree.
    assert!(std::fs::write(m.join(".antsched/stats.json"), b"x").is_err());
    assert!(std::fs::write(m.join(".antsched/new"), b"x").is_err());
    assert!(!b.join(".antsched").exists());
    s.unmount();
}

#[test]
fn permissions_are_the_backing_files_and_other_users_stay_out_without_allow_other() {
    if !fuse_or_skip(
        "permissions_are_the_backing_files_and_other_users_stay_out",
        &["setpriv"],
    ) {
        return;
    }
    let t = TempDir::new("perm");
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (b, m) = t.backing_and_mountpoint();
    std::fs::write(b.join("public"), b"everyone\n").unwrap();
    std::fs::write(b.join("private"), b"root only\n").unwrap();
    std::fs::set_permissions(b.join("public"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(b.join("private"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let nobody = |what: &str| {
        sh(&format!(
            "setpriv --reuid=65534 --regid=65534 --clear-groups {what}"
        ))
    };
    // Without --allow-other the kernel refuses every other user, even for a public file.
    let s = serve(&fast_config(&b, &m));
    let o = nobody(&format!("cat '{}'", m.join("public").display()));
    assert!(!o.status.success(), "nobody got in without --allow-other");
    s.unmount();
    // With it, the backing files' modes decide (default_permissions).
    let mut cfg = fast_config(&b, &m);
    cfg.allow_other = true;
    let s = serve(&cfg);
    let o = nobody(&format!("cat '{}'", m.join("public").display()));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "everyone\n");
    let o = nobody(&format!("cat '{}'", m.join("private").display()));
    assert!(!o.status.success(), "nobody read a 0600 file of root's");
    let o = nobody(&format!("touch '{}'", m.join("new").display()));
    assert!(!o.status.success(), "nobody wrote in root's 0755 directory");
    // A file a user creates is theirs.
    std::fs::set_permissions(&b, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = nobody(&format!("touch '{}'", m.join("mine").display()));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(b.join("mine")).unwrap().uid(), 65534);
    s.unmount();
}

#[test]
fn bad_paths_and_an_existing_mount_are_refused_with_nothing_mounted() {
    if !fuse_or_skip("bad_paths_and_an_existing_mount_are_refused", &[]) {
        return;
    }
    let t = TempDir::new("errors");
    let (b, m) = t.backing_and_mountpoint();
    let err = |b: &Path, m: &Path| {
        antsched_fuse::mount(&fast_config(b, m))
            .err()
            .expect("the mount must be refused")
    };
    assert!(matches!(
        err(&t.join("nope"), &m),
        MountError::BackingMissing { .. }
    ));
    std::fs::write(t.join("file"), b"x").unwrap();
    assert!(matches!(
        err(&t.join("file"), &m),
        MountError::BackingNotDir { .. }
    ));
    assert!(matches!(
        err(&b, &t.join("nope")),
        MountError::MountpointMissing { .. }
    ));
    let full = t.join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("x"), b"x").unwrap();
    let e = err(&b, &full);
    assert!(
        matches!(e, MountError::MountpointNotEmpty { entries: 1, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("not empty"));
    std::fs::create_dir(b.join("inner")).unwrap();
    assert!(matches!(
        err(&b, &b.join("inner")),
        MountError::MountpointInsideBacking { .. }
    ));
    let mut bad = fast_config(&b, &m);
    bad.scheduler = "no-such-scheduler".into();
    assert!(matches!(
        antsched_fuse::mount(&bad).err().unwrap(),
        MountError::Scheduler(_)
    ));
    bad = fast_config(&b, &m);
    bad.disk = "no-such-disk".into();
    assert!(matches!(
        antsched_fuse::mount(&bad).err().unwrap(),
        MountError::Disk(_)
    ));
    assert!(!is_mounted(&m), "no refused mount left anything behind");
    // A mount already there.
    let s = serve(&fast_config(&b, &m));
    let e = err(&b, &m);
    assert!(matches!(e, MountError::AlreadyMounted { .. }), "{e}");
    assert!(e.to_string().contains("umount"));
    s.unmount();
    assert!(!is_mounted(&m));
}

#[test]
fn unmounting_is_clean_and_a_busy_mount_can_be_detached() {
    if !fuse_or_skip("unmounting_is_clean_and_a_busy_mount_can_be_detached", &[]) {
        return;
    }
    let t = TempDir::new("umount");
    let (b, m) = t.backing_and_mountpoint();
    std::fs::write(b.join("f"), b"data").unwrap();
    let mut cfg = fast_config(&b, &m);
    cfg.context = ContextKind::Pid;
    let s = serve(&cfg);
    // A process with its working directory in the mount keeps it busy.
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .current_dir(&m)
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    let e = s.unmounter.unmount().unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EBUSY));
    assert!(is_mounted(&m));
    s.unmounter.detach().unwrap();
    assert!(!is_mounted(&m), "detached from the tree at once");
    child.kill().unwrap();
    child.wait().unwrap();
    // With its last user gone the file system ends and serving returns.
    let r = s.unmount();
    assert_eq!(r.context_kind, "pid");
    assert_eq!(std::fs::read(b.join("f")).unwrap(), b"data");
    // The mount point is an ordinary empty directory again: it can be mounted on anew.
    let s = serve(&fast_config(&b, &m));
    assert_eq!(std::fs::read(m.join("f")).unwrap(), b"data");
    s.unmount();
}

#[test]
fn readahead_sets_the_kernels_window_and_direct_io_passes_reads_as_they_are() {
    if !fuse_or_skip("readahead_sets_the_kernels_window", &[]) {
        return;
    }
    let t = TempDir::new("readahead");
    let (b, m) = t.backing_and_mountpoint();
    std::fs::write(b.join("f"), bytes(5, 2 << 20)).unwrap();
    let mut ios = Vec::new();
    for cache in [
        CacheMode::PageCache {
            readahead_kib: Some(16),
        },
        CacheMode::PageCache {
            readahead_kib: Some(512),
        },
        CacheMode::DirectIo,
    ] {
        let mut cfg = fast_config(&b, &m);
        cfg.cache = cache;
        let s = serve(&cfg);
        // 4 KiB reads: the page cache turns them into read-ahead windows; direct I/O
        // passes each one through.
        sh_ok(&format!(
            "dd if='{}' of=/dev/null bs=4k status=none",
            m.join("f").display()
        ));
        let r = s.unmount();
        ios.push(r.contexts.iter().map(|c| c.report.ios).sum::<u64>());
    }
    let (small, large, direct) = (ios[0], ios[1], ios[2]);
    assert!(small >= 128, "2 MiB in windows of 16 KiB: {small} requests");
    assert!(
        large * 4 <= small,
        "512 KiB windows: {large} requests vs {small}"
    );
    assert_eq!(direct, 512, "2 MiB in 4 KiB reads with direct I/O");
}

/// `--async-dio`: fio's libaio at iodepth 8 with O_DIRECT writes a file with verification data
/// and reads it back, checking every block. Without asynchronous direct I/O the kernel sends
/// the mount one of the process's requests at a time; with it, several at once (the blkparse
/// recording's issue and completion times overlap), and every byte is still right, through
/// fio's check and against the backing file.
#[test]
fn async_dio_passes_a_callers_requests_on_at_once_and_every_byte_is_right() {
    if !fuse_or_skip(
        "async_dio_passes_a_callers_requests_on_at_once_and_every_byte_is_right",
        &["fio"],
    ) {
        return;
    }
    let t = TempDir::new("async-dio");
    let (b, m) = t.backing_and_mountpoint();
    let job = t.join("job.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=libaio\niodepth=8\ndirect=1\nbs=64k\nsize=4m\nverify=crc32c\n\
         do_verify=1\n[w]\nrw=randwrite\nfilename=f\n",
    )
    .unwrap();
    let mut most = Vec::new();
    for async_dio in [false, true] {
        let rec = t.join(format!("rec-{async_dio}.blk"));
        let mut cfg = fast_config(&b, &m);
        // A request takes milliseconds on the paper's disk, so those sent at once overlap.
        cfg.disk = "deskstar-34gxp".into();
        cfg.async_dio = async_dio;
        cfg.record = Some(rec.clone());
        cfg.record_format = antsched_fuse::record::RecordFormat::Blkparse;
        // The file exists at its size, so fio writes it only with O_DIRECT (no layout pass
        // through the page cache).
        std::fs::write(b.join("f"), bytes(7, 4 << 20)).unwrap();
        let s = serve(&cfg);
        sh_ok(&format!(
            "cd '{}' && fio --output=/dev/null '{}'",
            m.display(),
            job.display()
        ));
        let through = sh_ok(&format!("sha256sum '{}'", m.join("f").display()));
        let r = s.unmount();
        assert_eq!(r.async_dio, async_dio);
        assert!(
            through.starts_with(&sha256(&b.join("f"))),
            "async_dio {async_dio}"
        );
        // The most requests the mount had at once from fio's process (the one with the most
        // requests; sha256sum's read-ahead is another context): `Q` lines name the context,
        // each `C` line follows its `Q`.
        let text = std::fs::read_to_string(&rec).unwrap();
        let mut per: std::collections::HashMap<String, Vec<(f64, i32)>> = Default::default();
        let mut ctx = String::new();
        for l in text.lines() {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (Some(t), Some(a), Some(c)) = (f.get(3), f.get(5), f.last()) else {
                continue;
            };
            let Ok(t) = t.parse::<f64>() else { continue };
            match *a {
                "Q" => {
                    ctx = c.to_string();
                    per.entry(ctx.clone()).or_default().push((t, 1));
                }
                "C" => per.entry(ctx.clone()).or_default().push((t, -1)),
                _ => {}
            }
        }
        let mut ev = per.into_values().max_by_key(Vec::len).unwrap_or_default();
        assert!(
            ev.len() >= 2 * 128,
            "4 MiB written and read in 64 KiB: {}",
            ev.len()
        );
        ev.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let (mut n, mut max) = (0, 0);
        for (_, d) in ev {
            n += d;
            max = max.max(n);
        }
        most.push(max);
    }
    assert_eq!(most[0], 1, "without async_dio, one request at a time");
    assert!(most[1] >= 4, "with async_dio, up to 8 at once: {}", most[1]);
}

/// 64 processes at once on one mount, for `ANTSCHED_CONCURRENCY_SECONDS` (5 by default): 32
/// readers each compare, round after round, a whole backing file read through the mount with
/// its expected bytes (`cmp`, every byte); 32 writers each overwrite their own 64 KiB slot of
/// one shared file (`dd conv=notrunc`) and rewrite their own file (`cp`), round after round.
/// Afterwards every byte of the shared file and of each writer's file is compared, through
/// the mount and in BACKING after unmounting: no request lost, doubled or misplaced.
#[test]
fn sixty_four_processes_read_and_write_at_once_and_every_byte_is_right() {
    if !fuse_or_skip(
        "sixty_four_processes_read_and_write_at_once_and_every_byte_is_right",
        &["cmp", "dd"],
    ) {
        return;
    }
    const READERS: usize = 32;
    const WRITERS: usize = 32;
    const SLOT: usize = 64 * 1024;
    let seconds: u64 = std::env::var("ANTSCHED_CONCURRENCY_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let t = TempDir::new("concurrency");
    let (b, m) = t.backing_and_mountpoint();
    let src = t.join("src");
    std::fs::create_dir_all(&src).unwrap();
    for k in 0..8u64 {
        let data = bytes(100 + k, (1 << 20) + 511 * k as usize);
        std::fs::write(b.join(format!("r{k}")), &data).unwrap();
        std::fs::write(src.join(format!("r{k}")), &data).unwrap();
    }
    std::fs::write(b.join("shared.bin"), vec![0u8; WRITERS * SLOT]).unwrap();
    for i in 0..WRITERS as u64 {
        std::fs::write(src.join(format!("slot{i}")), bytes(200 + i, SLOT)).unwrap();
        std::fs::write(
            src.join(format!("own{i}")),
            bytes(300 + i, 256 * 1024 + 1000 * i as usize),
        )
        .unwrap();
    }
    let s = serve(&fast_config(&b, &m));
    let (src_s, m_s) = (src.display(), m.display());
    // Each process loops until the same end time and prints how many rounds it did; a reader
    // that finds a wrong byte exits 1 at once.
    let until =
        format!("end=$(( $(date +%s) + {seconds} )); n=0; while [ $(date +%s) -lt $end ]; do");
    let mut children = Vec::new();
    for j in 0..READERS {
        let k = j % 8;
        children.push((
            format!("reader {j}"),
            std::process::Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "{until} cmp -s '{m_s}/r{k}' '{src_s}/r{k}' || exit 1; n=$((n+1)); done; echo $n"
                ))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap(),
        ));
    }
    for i in 0..WRITERS {
        children.push((
            format!("writer {i}"),
            std::process::Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "{until} dd if='{src_s}/slot{i}' of='{m_s}/shared.bin' bs={SLOT} seek={i} \
                     conv=notrunc status=none || exit 1; \
                     cp '{src_s}/own{i}' '{m_s}/own{i}' || exit 1; n=$((n+1)); done; echo $n"
                ))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap(),
        ));
    }
    let (mut reads, mut writes) = (0u64, 0u64);
    for (who, c) in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{who} found a wrong byte or failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rounds: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert!(rounds > 0, "{who} did no round in {seconds} s");
        if who.starts_with("reader") {
            reads += rounds;
        } else {
            writes += rounds;
        }
    }
    let mut want = Vec::with_capacity(WRITERS * SLOT);
    for i in 0..WRITERS as u64 {
        want.extend_from_slice(&bytes(200 + i, SLOT));
    }
    let check = |dir: &Path, when: &str| {
        assert!(
            std::fs::read(dir.join("shared.bin")).unwrap() == want,
            "shared.bin {when}: a slot holds other bytes"
        );
        for i in 0..WRITERS as u64 {
            assert!(
                std::fs::read(dir.join(format!("own{i}"))).unwrap()
                    == bytes(300 + i, 256 * 1024 + 1000 * i as usize),
                "own{i} {when}"
            );
        }
    };
    check(&m, "through the mount");
    s.unmount();
    check(&b, "in BACKING after unmounting");
    eprintln!(
        "{READERS} readers and {WRITERS} writers for {seconds} s: {reads} whole-file reads \
         compared byte for byte, {writes} rounds of writes, every byte right"
    );
}

/// The real-time priorities (`rt_priority`) of this process's threads in the `SCHED_FIFO`
/// class, from `/proc/self/task/*/stat` (fields 40 and 41).
fn realtime_priorities() -> Vec<u32> {
    let mut out = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let Ok(stat) = std::fs::read_to_string(task.unwrap().path().join("stat")) else {
            continue; // the thread ended
        };
        // Past the command name, which may hold spaces: field 3 onwards.
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        let (priority, policy) = (fields[40 - 3], fields[41 - 3]);
        if policy == "1" {
            out.push(priority.parse().unwrap());
        }
    }
    out
}

/// The mount's event loop runs in the real-time class, and so does a FUSE worker that has
/// timed a transfer on a disk whose requests take milliseconds, one priority below: on a busy
/// machine an ordinary worker's wake-up waits for the running thread's time slice, longer
/// than anticipation waits for a program's next request. (Other tests' mounts in this binary
/// may add threads of their own; without the workers' rule no thread here has priority 1.)
#[test]
fn a_worker_that_timed_a_transfer_on_a_disk_runs_in_the_real_time_class_below_the_loop() {
    if !fuse_or_skip(
        "a_worker_that_timed_a_transfer_on_a_disk_runs_in_the_real_time_class_below_the_loop",
        &[],
    ) {
        return;
    }
    let t = TempDir::new("realtime");
    let (b, m) = t.backing_and_mountpoint();
    std::fs::write(b.join("f"), bytes(5, 1 << 20)).unwrap();
    let mut cfg = fast_config(&b, &m);
    cfg.disk = "deskstar-34gxp".into();
    let s = serve(&cfg);
    assert_eq!(std::fs::read(m.join("f")).unwrap(), bytes(5, 1 << 20));
    let priorities = realtime_priorities();
    s.unmount();
    assert!(priorities.contains(&2), "the event loop: {priorities:?}");
    assert!(priorities.contains(&1), "a worker: {priorities:?}");
}
