//! # antsched-memd-preload
//!
//! `LD_PRELOAD=libantsched_mem_preload.so CMD` makes any dynamically linked program give its
//! free heap pages back to the kernel when antsched memd says memory is getting expensive:
//! the thesis's libc handler (section 6.4) for programs nobody changed.
//!
//! - A constructor (`.init_array`) looks for the daemon's socket at `$ANTSCHED_MEMD_SOCKET`
//!   (default `/run/antsched/memd.sock`; an empty value turns the library off). Where there is
//!   no socket it does nothing at all: no thread, no descriptor, no output.
//! - Otherwise it starts one thread, with every signal blocked (so that the program's signal
//!   handlers keep running on the threads they ran on), which connects, subscribes to the
//!   machine domain (or `$ANTSCHED_MEMD_DOMAIN`) and waits on its eventfd. Connecting in the
//!   thread, not the constructor, keeps a slow or hung daemon from delaying the program's
//!   start.
//! - On each notification whose record is not in the plenty tier (S halved, or the 1 s repeat
//!   while S < S_max; not the doubling back to plenty), it releases free heap memory with
//!   whatever allocator is loaded: `malloc_trim(0)` for glibc (which since 2.8 `madvise`s the
//!   free pages inside the heap, not only its top); `mallctl("arena.4096.purge")`
//!   (`MALLCTL_ARENAS_ALL`) where jemalloc's `mallctl` is found by `dlsym(RTLD_DEFAULT)`;
//!   `mi_collect(true)` where mimalloc's is.
//! - `ANTSCHED_MEM_PRELOAD_LOG=1` writes a line to stderr for each step, for a look; a release's
//!   line ends with the wake-up's time in seconds of CLOCK_MONOTONIC (`woken at T s`), so that
//!   a bench can time what followed the notification from outside.
//!
//! Fork: the thread is not copied into a child, and the library registers no `atfork`
//! handler, so nothing of it runs in a forked child (no allocation between fork and exec);
//! glibc's fork takes the allocator's locks, so a fork concurrent with a trim waits for it. A
//! child that execs gets the library afresh from `LD_PRELOAD` and connects on its own. Any
//! failure (the daemon gone, a program that closed the thread's descriptors) ends the thread
//! silently; the program is never signalled, stopped or written to.

use std::ffi::{c_char, c_int, c_void};
use std::os::unix::fs::FileTypeExt;
use std::path::PathBuf;

use antsched_mem::Tier;

/// Run at load time, before the program's `main`.
#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = init;

extern "C" fn init() {
    // No unwinding into the loader: a panic here (a bug) leaves the program alone.
    let _ = std::panic::catch_unwind(start);
}

fn logging() -> bool {
    std::env::var_os("ANTSCHED_MEM_PRELOAD_LOG").is_some_and(|v| v == "1")
}

fn start() {
    let path = match std::env::var_os("ANTSCHED_MEMD_SOCKET") {
        Some(p) if p.is_empty() => return,
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(antsched_memd::DEFAULT_SOCKET),
    };
    match std::fs::metadata(&path) {
        Ok(m) if m.file_type().is_socket() => {}
        _ => return,
    }
    let domain = std::env::var("ANTSCHED_MEMD_DOMAIN").ok();
    let log = logging();
    // SAFETY: sigset_t is plain data that sigfillset initializes; pthread_sigmask only reads
    // `all` and writes `old`, both live on this stack.
    let old = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        old
    };
    // The new thread inherits the full mask; this one gets its own back at once.
    let spawned = std::thread::Builder::new()
        .name("antsched-mem".into())
        .stack_size(256 << 10)
        .spawn(move || {
            let _ = std::panic::catch_unwind(move || serve(path, domain, log));
        });
    // SAFETY: restores the mask saved above, a valid sigset_t.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    }
    if let Err(e) = spawned {
        if log {
            eprintln!("antsched-mem-preload: cannot start its thread: {e}");
        }
    }
}

fn serve(path: PathBuf, domain: Option<String>, log: bool) {
    let client = match &domain {
        Some(d) => antsched_memd::connect_domain(&path, d),
        None => antsched_memd::connect(&path),
    };
    let client = match client {
        Ok(c) => c,
        Err(e) => {
            if log {
                eprintln!("antsched-mem-preload: not connected: {e}");
            }
            return;
        }
    };
    if log {
        eprintln!(
            "antsched-mem-preload: pid {} connected to {}",
            std::process::id(),
            path.display()
        );
    }
    loop {
        match client.wait(None) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(e) => {
                if log {
                    eprintln!("antsched-mem-preload: stopped: {e}");
                }
                return;
            }
        }
        let woken = monotonic_s();
        let r = client.current();
        if r.tier == Tier::Plenty {
            continue;
        }
        let started = std::time::Instant::now();
        let done = release();
        if log {
            // The wake-up's CLOCK_MONOTONIC time (the clock of the record's `time`), so that a
            // bench can time what follows the notification from outside the process.
            eprintln!(
                "antsched-mem-preload: S {:.1} s: released with {done} in {:.1} ms (woken at {woken:.6} s)",
                r.severity_s,
                started.elapsed().as_secs_f64() * 1e3
            );
        }
    }
}

/// Seconds of CLOCK_MONOTONIC.
fn monotonic_s() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which lives on this stack.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

/// Returns free heap pages to the kernel with every allocator found; names them.
fn release() -> String {
    let mut done = Vec::new();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim takes the arenas' locks itself; 0 keeps no padding.
        unsafe { libc::malloc_trim(0) };
        done.push("malloc_trim");
    }
    if let Some(mallctl) = symbol(c"mallctl") {
        // SAFETY: jemalloc's mallctl(const char *, void *, size_t *, void *, size_t).
        let mallctl: Mallctl = unsafe { std::mem::transmute::<*mut c_void, Mallctl>(mallctl) };
        if jemalloc_purge(mallctl) {
            done.push("jemalloc purge");
        }
    }
    if let Some(collect) = symbol(c"mi_collect") {
        // SAFETY: mimalloc's void mi_collect(bool force).
        let collect: MiCollect = unsafe { std::mem::transmute::<*mut c_void, MiCollect>(collect) };
        // SAFETY: mimalloc's own call, safe from any thread.
        unsafe { collect(true) };
        done.push("mi_collect");
    }
    done.join(", ")
}

type Mallctl =
    unsafe extern "C" fn(*const c_char, *mut c_void, *mut usize, *mut c_void, usize) -> c_int;
type MiCollect = unsafe extern "C" fn(bool);

/// `symbol` in any loaded object, or None.
fn symbol(name: &std::ffi::CStr) -> Option<*mut c_void> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only looks the name up.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!p.is_null()).then_some(p)
}

/// Purges every jemalloc arena: `arena.<MALLCTL_ARENAS_ALL>.purge` (jemalloc 5), or on older
/// ones `arena.<narenas>.purge`, which meant all arenas there.
fn jemalloc_purge(mallctl: Mallctl) -> bool {
    // SAFETY: a "purge" takes and returns nothing.
    if unsafe {
        mallctl(
            c"arena.4096.purge".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    } == 0
    {
        return true;
    }
    let mut narenas: u32 = 0;
    let mut len = std::mem::size_of::<u32>();
    // SAFETY: "arenas.narenas" is an unsigned written to `narenas`, whose size `len` says.
    let ok = unsafe {
        mallctl(
            c"arenas.narenas".as_ptr(),
            (&mut narenas as *mut u32).cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    } == 0;
    if !ok {
        return false;
    }
    let Ok(name) = std::ffi::CString::new(format!("arena.{narenas}.purge")) else {
        return false;
    };
    // SAFETY: as above.
    let r = unsafe {
        mallctl(
            name.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    };
    r == 0
}
