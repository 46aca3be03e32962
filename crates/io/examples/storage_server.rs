//! A storage server's skeleton: a pool of worker threads serves read requests from many client
//! connections, and the runtime schedules them per connection.
//!
//! The problem this solves: a thread pool hides from the kernel which client a request belongs
//! to. Each worker thread reads for whichever connection it picked up last, so the kernel sees
//! a few threads issuing requests all over the disk, never a client reading sequentially, and
//! cannot anticipate. Here each request names its connection as its context (and its tenant
//! as its class), so the anticipatory scheduler sees each client's sequential stream and waits
//! for it, exactly as for a process reading a file.
//!
//! ```text
//! cargo run --release -p antsched-io --example storage_server -- [--file PATH] [--scheduler SPEC] [--seconds S]
//! ```
//!
//! Without `--file` the "disk" is an emulated IBM Deskstar 34GXP (the SOSP 2001 paper's disk)
//! over a sparse temporary file, so it behaves like a 7,200 rpm disk anywhere. Compare
//! `--scheduler aged-sptf` (work-conserving: the clients' streams interleave and the disk
//! seeks between them on every request) with the default `as-aged-sptf`.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use antsched_core::{build, ClassId, ContextId};
use antsched_io::{Backend, Ctx, IoBuf, IoError, Options, Runtime, Store};

/// One request as it arrives from a connection: what the protocol decoder would produce.
struct ReadRequest {
    connection: u32,
    tenant: u32,
    offset: u64,
    len: usize,
    reply: mpsc::Sender<Result<IoBuf, IoError>>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let spec = arg("--scheduler").unwrap_or_else(|| "as-aged-sptf".into());
    let seconds: f64 = arg("--seconds").map_or(3.0, |s| s.parse().expect("--seconds S"));

    // 1. The device. A real server opens its disk: Backend::file(path, true) (O_DIRECT).
    let mut temp = None;
    let backend = match arg("--file") {
        Some(p) => Backend::file(std::path::Path::new(&p), true).expect("open the device"),
        None => {
            let model = antsched_disk::preset("deskstar-34gxp").expect("a built-in model");
            let path =
                std::env::temp_dir().join(format!("storage-server-{}.img", std::process::id()));
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&path)
                .expect("create the backing file");
            f.set_len(model.capacity_sectors() * 512)
                .expect("size the backing file");
            temp = Some(path);
            Backend::emulated(model, Store::whole(f))
        }
    };

    // 2. The scheduler. On an emulated disk `estimator=exact` reads the model; on a real disk
    // measure a curve once with `antsched calibrate /dev/sdX --out curve.json` and build with
    // `as-aged-sptf:estimator=curve.json`.
    let env = backend.build_env(1);
    let sched = build(&spec, &env).expect("a valid scheduler SPEC");

    // 3. The runtime: one event-loop thread for this device. Share it with Arc.
    let rt = Arc::new(Runtime::start(backend, sched, Options::default()).expect("io_uring"));
    // Two tenants with equal weight (a proportional-share scheduler would use these).
    rt.set_class_weight(ClassId(0), 100);
    rt.set_class_weight(ClassId(1), 100);

    // 4. The worker pool: any worker serves any connection, naming the connection's context.
    let (tx, rx) = mpsc::channel::<ReadRequest>();
    let rx = Arc::new(Mutex::new(rx));
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (rt, rx) = (rt.clone(), rx.clone());
            std::thread::spawn(move || loop {
                let req = match rx.lock().unwrap().recv() {
                    Ok(r) => r,
                    Err(_) => return, // all connections closed
                };
                let ctx = Ctx {
                    context: ContextId(req.connection),
                    class: ClassId(req.tenant),
                };
                let _ = req.reply.send(rt.read(ctx, req.offset, req.len));
            })
        })
        .collect();

    // 5. The clients: each connection streams its own 256 MB region, 64 KB per request, and
    // waits for each reply before asking for the next (as a client reading a file does).
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let clients: Vec<_> = (0..2u32)
        .map(|c| {
            let (tx, rt) = (tx.clone(), rt.clone());
            std::thread::spawn(move || {
                let base = u64::from(c) * (8 << 30); // 8 GB apart: a long seek between them
                let mut bytes = 0u64;
                let mut offset = 0u64;
                while Instant::now() < deadline {
                    let (reply, answer) = mpsc::channel();
                    tx.send(ReadRequest {
                        connection: c,
                        tenant: c % 2,
                        offset: base + offset,
                        len: 64 << 10,
                        reply,
                    })
                    .expect("the pool is running");
                    match answer.recv().expect("a worker answers") {
                        Ok(data) => bytes += data.len() as u64,
                        Err(e) => eprintln!("connection {c}: {e}"),
                    }
                    offset = (offset + (64 << 10)) % (256 << 20);
                }
                // The connection closes: the scheduler must not wait for it any more.
                rt.context_exited(ContextId(c));
                bytes
            })
        })
        .collect();
    drop(tx);
    let bytes: Vec<u64> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    for w in workers {
        w.join().unwrap();
    }
    let rt = Arc::into_inner(rt).expect("every worker is gone");
    let stats = rt.shutdown();
    for (c, b) in bytes.iter().enumerate() {
        println!("connection {c}: {:.2} MB/s", *b as f64 / 1e6 / seconds);
    }
    println!(
        "{spec} on {}: {:.2} MB/s in all; anticipation waited {} times ({} hits)",
        stats.device,
        bytes.iter().sum::<u64>() as f64 / 1e6 / seconds,
        stats.anticipation.waits,
        stats.anticipation.hits
    );
    if let Some(p) = temp {
        let _ = std::fs::remove_file(p);
    }
}
