//! The runtime against real io_uring: every backend, both APIs, errors, shutdown.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use antsched_core::{build, BuildEnv, Op};
use antsched_io::{block_on, content, Backend, Ctx, IoBuf, IoError, Options, Runtime, Store};
use common::{io_uring_or_skip, TempDir};

fn noop() -> Box<dyn antsched_core::Scheduler> {
    build("noop", &BuildEnv::default()).unwrap()
}

/// A runtime scheduling `sptf` on the paper's emulated disk, whose data is discarded.
fn sptf_on_a_discarding_disk() -> Runtime {
    let model = antsched_disk::preset("deskstar-34gxp").unwrap();
    let backend = Backend::emulated(model, Store::discard());
    let env = backend.build_env(1);
    Runtime::start(backend, build("sptf", &env).unwrap(), Options::default()).unwrap()
}

fn file_of(dir: &TempDir, name: &str, bytes: u64) -> std::path::PathBuf {
    let p = dir.path().join(name);
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(bytes).unwrap();
    p
}

#[test]
fn a_file_backend_writes_and_reads_back_blocking_and_async() {
    if !io_uring_or_skip("a_file_backend_writes_and_reads_back") {
        return;
    }
    let dir = TempDir::new("file");
    let path = file_of(&dir, "dev.img", 1 << 20);
    for direct in [false, true] {
        let backend = match Backend::file(&path, direct) {
            Ok(b) => b,
            Err(e) if direct => {
                eprintln!("O_DIRECT not supported on the temporary directory ({e}); buffered only");
                continue;
            }
            Err(e) => panic!("{e}"),
        };
        let rt = Runtime::start(backend, noop(), Options::default()).unwrap();
        let ctx = Ctx::new(1, 1);
        let mut data = vec![0u8; 8192];
        content::fill(7, 4096, &mut data);
        rt.write(ctx, 4096, &data).unwrap();
        assert_eq!(&rt.read(ctx, 4096, 8192).unwrap()[..], &data[..]);
        let got = block_on(rt.read_async(ctx, 8192, 4096)).unwrap();
        assert_eq!(&got.buf[..], &data[4096..]);
        // Malformed requests fail alone, before reaching the device.
        assert!(matches!(rt.read(ctx, 100, 512), Err(IoError::Invalid(_))));
        assert!(matches!(rt.read(ctx, 0, 100), Err(IoError::Invalid(_))));
        assert!(matches!(
            rt.read(ctx, 1 << 20, 512),
            Err(IoError::Invalid(_))
        ));
        let s = rt.shutdown();
        assert_eq!((s.completed, s.failed), (3, 0));
    }
}

#[test]
fn an_emulated_disk_completes_when_its_model_says() {
    if !io_uring_or_skip("an_emulated_disk_completes_when_its_model_says") {
        return;
    }
    let dir = TempDir::new("emu");
    let path = file_of(&dir, "backing.img", 64 << 20);
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let model = antsched_disk::preset("deskstar-34gxp").unwrap();
    // What the model alone says a cold 64 KB read at sector 0 costs from time 0 (an upper
    // bound on the rotational wait; the runtime starts the model at its own time 0).
    let mut m = model.clone_box();
    let alone = m.submit(&antsched_disk::DiskRequest::read(0, 128), 0);
    let backend = Backend::emulated(model, Store::whole(f));
    let env = backend.build_env(1);
    let rt = Runtime::start(backend, build("sptf", &env).unwrap(), Options::default()).unwrap();
    let ctx = Ctx::new(0, 0);
    let t0 = rt.clock().now();
    let d = block_on(rt.read_async(ctx, 0, 65536)).unwrap();
    let took = d.completed_at - t0;
    assert!(
        took >= 1_000_000 && took < alone.finish + 20_000_000,
        "a 64 KB read on a 7,200 rpm disk takes milliseconds, took {took} ns"
    );
    let s = rt.shutdown();
    assert_eq!(s.completed, 1);
    assert!(s.busy > 0);
}

#[test]
fn a_discard_store_moves_no_bytes_but_keeps_the_models_timing() {
    if !io_uring_or_skip("a_discard_store_moves_no_bytes_but_keeps_the_models_timing") {
        return;
    }
    let rt = sptf_on_a_discarding_disk();
    let ctx = Ctx::new(0, 0);
    // Far out on the disk: no file anywhere holds these sectors, and none is needed.
    let offset = 10u64 << 30;
    rt.write(ctx, offset, &[7u8; 4096]).unwrap();
    let t0 = rt.clock().now();
    let d = block_on(rt.read_async(ctx, offset + (1 << 30), 65536)).unwrap();
    assert!(d.buf.iter().all(|b| *b == 0), "a discard store reads zeros");
    assert!(
        d.completed_at - t0 >= 1_000_000,
        "a read a gigabyte away still seeks on the model: took {} ns",
        d.completed_at - t0
    );
    let s = rt.shutdown();
    assert_eq!((s.completed, s.failed), (2, 0));
    assert!(s.busy > 0);
}

#[test]
fn every_nth_failure_reaches_its_caller_alone_and_the_rest_complete_once() {
    if !io_uring_or_skip("every_nth_failure_reaches_its_caller_alone") {
        return;
    }
    let dir = TempDir::new("fail");
    let path = file_of(&dir, "dev.img", 4 << 20);
    let n = 7;
    let backend = Backend::file(&path, false).unwrap().fail_every(n);
    let rt = Arc::new(Runtime::start(backend, noop(), Options::default()).unwrap());
    let ok = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..4u32)
        .map(|t| {
            let (rt, ok, failed) = (rt.clone(), ok.clone(), failed.clone());
            std::thread::spawn(move || {
                for i in 0..50u64 {
                    match rt.read(Ctx::new(t, t), (i * 4 + u64::from(t)) * 4096, 4096) {
                        Ok(b) => {
                            assert_eq!(b.len(), 4096);
                            ok.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(IoError::Os { errno, op, .. }) => {
                            assert_eq!((errno, op), (libc_eio(), Op::Read));
                            failed.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(e) => panic!("unexpected {e}"),
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let rt = Arc::into_inner(rt).unwrap();
    let s = rt.shutdown();
    let (ok, failed) = (ok.load(Ordering::SeqCst), failed.load(Ordering::SeqCst));
    assert_eq!(ok + failed, 200, "every request got exactly one answer");
    assert_eq!(failed, 200 / n, "every {n}th request failed");
    assert_eq!((s.completed, s.failed), (ok, failed));
}

fn libc_eio() -> i32 {
    5
}

#[test]
fn shutdown_drains_everything_in_flight_and_refuses_what_comes_after() {
    if !io_uring_or_skip("shutdown_drains_everything_in_flight") {
        return;
    }
    let dir = TempDir::new("drain");
    let path = file_of(&dir, "backing.img", 128 << 20);
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let model = antsched_disk::preset("deskstar-34gxp").unwrap();
    let backend = Backend::emulated(model, Store::whole(f)).fail_every(5);
    let env = backend.build_env(1);
    let rt = Runtime::start(
        backend,
        build("as-aged-sptf", &env).unwrap(),
        Options::default(),
    )
    .unwrap();
    // Twenty requests from four contexts, all queued before shutdown; they take tens of
    // milliseconds on the emulated disk, so shutdown finds most of them pending.
    let tickets: Vec<_> = (0..20u64)
        .map(|i| {
            rt.submit(
                Ctx::new((i % 4) as u32, 0),
                Op::Read,
                (i * 7919 % 30_000) * 8,
                IoBuf::zeroed(4096),
                true,
                false,
            )
        })
        .collect();
    let s = rt.shutdown();
    let mut ok = 0;
    let mut failed = 0;
    for t in tickets {
        assert!(
            t.is_done(),
            "shutdown returned before a request was answered"
        );
        match t.wait() {
            Ok(_) => ok += 1,
            Err(IoError::Os { .. }) => failed += 1,
            Err(e) => panic!("a request accepted before shutdown got {e}"),
        }
    }
    assert_eq!((ok, failed), (16, 4));
    assert_eq!((s.completed, s.failed), (16, 4));
}

#[test]
fn abandon_fails_what_the_scheduler_holds_and_completes_what_the_device_has() {
    if !io_uring_or_skip("abandon_fails_what_the_scheduler_holds") {
        return;
    }
    let rt = sptf_on_a_discarding_disk();
    // Two hundred random reads at once: seconds of work for the emulated disk, which takes
    // one at a time, so nearly all are still in the scheduler when the run is abandoned.
    let tickets: Vec<_> = (0..200u64)
        .map(|i| {
            rt.submit(
                Ctx::new((i % 4) as u32, 0),
                Op::Read,
                (i * 7_919_993 % 60_000_000) & !7,
                IoBuf::zeroed(4096),
                true,
                false,
            )
        })
        .collect();
    // Until the device has served the first.
    while rt.stats().completed == 0 {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    rt.abandon();
    let refused = rt.submit(
        Ctx::new(0, 0),
        Op::Read,
        0,
        IoBuf::zeroed(4096),
        true,
        false,
    );
    assert_eq!(refused.wait().unwrap_err(), IoError::ShuttingDown);
    let s = rt.shutdown();
    let (mut served, mut abandoned) = (0, 0);
    for t in tickets {
        assert!(
            t.is_done(),
            "shutdown returned before a request was answered"
        );
        match t.wait() {
            Ok(_) => served += 1,
            Err(IoError::Abandoned) => abandoned += 1,
            Err(e) => panic!("a request got {e}"),
        }
    }
    // What the device had served or held when abandoned completes, the rest fails, none
    // is lost.
    assert!(
        served >= 1 && abandoned >= 150,
        "{served} served, {abandoned} abandoned"
    );
    assert_eq!(served + abandoned, 200);
    assert_eq!((s.completed, s.failed), (served, 0));
}

#[test]
fn requests_after_shutdown_began_are_refused_not_lost() {
    if !io_uring_or_skip("requests_after_shutdown_began_are_refused") {
        return;
    }
    let rt = Arc::new(Runtime::start(Backend::null(1 << 20), noop(), Options::default()).unwrap());
    let answered = Arc::new(AtomicU64::new(0));
    let refused = Arc::new(AtomicU64::new(0));
    let submitted = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..3u32)
        .map(|t| {
            let (rt, answered, submitted, refused) = (
                rt.clone(),
                answered.clone(),
                submitted.clone(),
                refused.clone(),
            );
            std::thread::spawn(move || {
                for i in 0..2000u64 {
                    submitted.fetch_add(1, Ordering::SeqCst);
                    match rt.read(Ctx::new(t, 0), (i % 1000) * 512, 512) {
                        Ok(_) => {
                            answered.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(IoError::ShuttingDown) => {
                            answered.fetch_add(1, Ordering::SeqCst);
                            refused.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(5));
    rt.close();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(
        answered.load(Ordering::SeqCst),
        submitted.load(Ordering::SeqCst)
    );
    let s = Arc::into_inner(rt).unwrap().shutdown();
    assert!(
        s.completed > 0 && s.completed < 6000,
        "shutdown came mid-way ({})",
        s.completed
    );
    assert_eq!(
        s.completed + refused.load(Ordering::SeqCst),
        6000,
        "nothing lost"
    );
    assert_eq!(s.failed, 0);
}

/// Statistics asked for from other threads while the runtime closes are all answered: by the
/// loop while it runs, and with its final statistics once it has gone. A question queued after
/// the loop's last look used to wait forever (or panic, its channel dropped by the loop).
#[test]
fn statistics_asked_across_a_close_are_answered_with_the_final_ones() {
    if !io_uring_or_skip("statistics_asked_across_a_close") {
        return;
    }
    let rt = Arc::new(Runtime::start(Backend::null(1 << 20), noop(), Options::default()).unwrap());
    for i in 0..100u64 {
        rt.read(Ctx::new(1, 0), i * 512, 512).unwrap();
    }
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let askers: Vec<_> = (0..2)
        .map(|_| {
            let (rt, done_tx) = (rt.clone(), done_tx.clone());
            std::thread::spawn(move || {
                let mut last = 0;
                for _ in 0..5000 {
                    let s = rt.stats();
                    assert!(s.completed >= last, "statistics went backwards");
                    last = s.completed;
                }
                done_tx.send(last).unwrap();
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(2));
    rt.close();
    for _ in 0..2 {
        let last = done_rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("a statistics question went unanswered after close");
        assert_eq!(last, 100);
    }
    for a in askers {
        a.join().unwrap();
    }
    let after = rt.stats();
    let s = Arc::into_inner(rt).unwrap().shutdown();
    assert_eq!((after.completed, s.completed), (100, 100));
}

#[test]
fn calibration_times_the_device_not_the_hand_off_to_the_loop() {
    if !io_uring_or_skip("calibration_times_the_device") {
        return;
    }
    use antsched_disk::DiskRequest;
    use antsched_io::calibrate::{measure, CalibrateOptions};
    let model = antsched_sim::disk_model("deskstar-34gxp").unwrap();
    // What the drive takes to position for 4 KiB it has read ahead: its command overhead.
    let mut m = model.clone_box();
    let t = m.submit(&DiskRequest::read(1000, 8), 0).finish;
    let hit = m.submit(&DiskRequest::read(1008, 8), t + 5_000_000);
    assert!(hit.service.cache_hit);
    let expect_us = hit.service.positioning() as f64 / 1e3;

    let opts = Options {
        spin: 200_000,
        ..Options::default()
    };
    let rt = Runtime::start(Backend::emulated(model, Store::discard()), noop(), opts).unwrap();
    let plan = CalibrateOptions {
        pairs: 5,
        per_decade: 1,
        repeats: 1,
        ..CalibrateOptions::default()
    };
    let c = measure(&rt, &plan, &|_, _| {}).unwrap();
    // The reads at distance 0 are served from the drive's read-ahead. Timed from the caller's
    // submission they came out 50 to 100 us longer (the loop's wake-up and the caller's);
    // timed on the device they are the model's overhead, give or take the loop's punctuality.
    let mut zero: Vec<f64> = c.samples.iter().filter(|s| s.0 == 0).map(|s| s.1).collect();
    assert_eq!(zero.len(), 5);
    zero.sort_by(f64::total_cmp);
    let median = zero[2];
    assert!(
        (median - expect_us).abs() <= (0.2 * expect_us).max(30.0),
        "cache hits measured at {zero:?} us, the model says {expect_us} us"
    );
}
