//! `antsched mount BACKING MOUNTPOINT`: the FUSE mount, in the foreground until SIGINT or
//! SIGTERM, then the final statistics.

use std::path::PathBuf;

use antsched_fuse::{CacheMode, ContextKind, MountConfig};
use anyhow::Context;

#[derive(clap::Args)]
pub struct Args {
    /// The directory whose files the mount shows (and changes).
    backing: PathBuf,
    /// An empty directory to mount on.
    mountpoint: PathBuf,
    /// Disk model: a built-in name (see `antsched disks`) or a DiskSim .parv file.
    #[arg(long, default_value = "deskstar-34gxp", value_name = "NAME|PARV")]
    disk: String,
    /// Scheduler SPEC (NAME[:key=value,...]; see `antsched schedulers`).
    #[arg(long, default_value = antsched_core::DEFAULT_SCHEDULER, value_name = "SPEC")]
    scheduler: String,
    /// The kernel's read-ahead for the mount, in KiB (the page cache applies).
    #[arg(long, value_name = "KIB", conflicts_with = "direct_io")]
    readahead: Option<u32>,
    /// Bypass the kernel's page cache and read-ahead: every read reaches the disk as the
    /// program made it (the paper's mmap case).
    #[arg(long)]
    direct_io: bool,
    /// What a scheduling context is: each process (tgid), each thread (pid) or each user.
    #[arg(long, default_value = "tgid", value_name = "pid|tgid|uid")]
    context: ContextKind,
    /// Let users other than the one mounting in (the backing files' owners and modes
    /// decide; what a user creates is created as that user, so it is theirs from the start).
    #[arg(long)]
    allow_other: bool,
    /// FUSE request threads: how many requests the scheduler can see (and the disk serve) at
    /// once. More processes than this reading at once queue in the kernel, out of the
    /// scheduler's sight; give at least as many as the processes (an Apache with 48
    /// connections: 48 or more).
    #[arg(long, default_value_t = 16, value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: u16,
    /// Offer the kernel FUSE's asynchronous direct I/O: an O_DIRECT request a caller does not
    /// wait for (libaio, io_uring, a loop device with --direct-io=on) is passed on at once, so
    /// one caller can have several requests before the scheduler (it is still one context).
    /// Also sends the pieces of an O_DIRECT request larger than 128 KiB at once.
    #[arg(long)]
    async_dio: bool,
    /// Print where each file lies on the emulated disk.
    #[arg(long)]
    show_layout: bool,
    /// Write every disk request the mount makes to FILE, as a fio version 3 I/O log, for
    /// `antsched sim --trace FILE` (offsets are the emulated disk's; see docs/traces.md).
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// What --record writes: fio (a v3 I/O log: no processes, no completions; one context
    /// when replayed) or blkparse (each request's context, issue and completion).
    #[arg(
        long,
        value_name = "fio|blkparse",
        default_value = "fio",
        requires = "record"
    )]
    record_format: antsched_fuse::record::RecordFormat,
    /// Also write the final statistics as JSON (`{"runs": [...]}`) to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    if let Some(path) = &a.json {
        crate::output::check_writable(path)?;
    }
    // Blocked before any thread starts, so one thread can wait for them and unmount in an
    // orderly way instead of the process dying with the mount still in place.
    let set = crate::signals::block();
    let mut cfg = MountConfig::new(&a.backing, &a.mountpoint);
    cfg.disk = a.disk;
    cfg.scheduler = a.scheduler;
    cfg.cache = if a.direct_io {
        CacheMode::DirectIo
    } else {
        CacheMode::PageCache {
            readahead_kib: a.readahead,
        }
    };
    cfg.context = a.context;
    cfg.allow_other = a.allow_other;
    cfg.threads = usize::from(a.threads);
    cfg.async_dio = a.async_dio;
    cfg.record = a.record;
    cfg.record_format = a.record_format;
    let mount = antsched_fuse::mount(&cfg)?;
    if a.show_layout {
        print!("{}", antsched_fuse::layout::describe(mount.placements()));
    }
    let cache = match cfg.cache {
        CacheMode::DirectIo => "direct I/O (no page cache)".to_string(),
        CacheMode::PageCache {
            readahead_kib: Some(k),
        } => format!("page cache, read-ahead {k} KiB"),
        CacheMode::PageCache {
            readahead_kib: None,
        } => "page cache, the kernel's read-ahead".to_string(),
    };
    eprintln!(
        "antsched: {} mounted at {} ({} files placed): disk {}, scheduler {}, one context per {}, {}.\n\
         antsched: statistics in {}/.antsched/stats.json; Ctrl-C or SIGTERM unmounts.",
        a.backing.display(),
        a.mountpoint.display(),
        mount.placements().len(),
        cfg.disk,
        cfg.scheduler,
        match cfg.context {
            ContextKind::Pid => "thread",
            ContextKind::Tgid => "process",
            ContextKind::Uid => "user",
        },
        if cfg.async_dio {
            format!("{cache}, asynchronous direct I/O")
        } else {
            cache
        },
        a.mountpoint.display(),
    );
    let unmounter = mount.unmounter();
    // The signal thread: first signal unmounts (lazily if the mount is busy), a second one
    // aborts the FUSE connection.
    std::thread::Builder::new()
        .name("antsched-signals".into())
        .spawn(move || {
            let mut n = 0;
            loop {
                let sig = crate::signals::wait(&set);
                n += 1;
                if n == 1 {
                    eprintln!("antsched: unmounting {}", unmounter.path().display());
                    match unmounter.unmount() {
                        Ok(()) => {}
                        Err(e) => {
                            // Busy (a process has a file or its working directory there), or
                            // any other failure: detach, so the mount point is free at once
                            // and the file system ends when its last user lets go.
                            if e.raw_os_error() == Some(libc::EBUSY) {
                                eprintln!(
                                    "antsched: {} is busy (a process has a file or its working directory there): detaching; \
                                     the mount ends when they let go (signal again to abort it)",
                                    unmounter.path().display()
                                );
                            } else {
                                eprintln!("antsched: cannot unmount ({e}): detaching instead");
                            }
                            if let Err(e) = unmounter.detach() {
                                eprintln!("antsched: cannot detach: {e} (signal again to abort the connection)");
                            }
                        }
                    }
                } else {
                    eprintln!("antsched: aborting the FUSE connection");
                    if let Err(e) = unmounter.abort() {
                        // Without the abort file (the FUSE control file system is not
                        // mounted, as on some machines) the server's exit does the same: it
                        // closes /dev/fuse, and the kernel ends the connection, failing the
                        // requests in progress.
                        eprintln!(
                            "antsched: cannot abort through the control file ({e}); detaching and \
                             exiting, which ends the connection"
                        );
                        let _ = unmounter.detach();
                        std::process::exit(128 + sig);
                    }
                }
            }
        })
        .context("cannot start the signal thread")?;
    let report = mount.serve()?;
    eprintln!("antsched: unmounted; final statistics:");
    let run = report.run_report();
    print!("{}", crate::sim::table(std::slice::from_ref(&run)));
    for c in &report.contexts {
        println!(
            "  {:<16} pid {:<8} {:>10} bytes  {:>8.2} MB/s  latency ms p50 {:.2} p99 {:.2} max {:.2}{}",
            c.report.name,
            c.pid.map_or("-".into(), |p| p.to_string()),
            c.report.bytes,
            c.report.throughput_mb_s,
            c.report.latency_ms.p50,
            c.report.latency_ms.p99,
            c.report.latency_ms.max,
            if c.exited { "  (exited)" } else { "" }
        );
    }
    if let Some(path) = &a.json {
        crate::output::write_atomically(path, &report.to_json())?;
    }
    Ok(())
}
