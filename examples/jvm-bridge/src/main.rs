//! `jvm-bridge SOCKET [DOMAIN]`: antsched memd's notifications as lines of text.
//!
//! A JVM cannot receive the daemon's severity page and eventfd (descriptors passed over a Unix
//! socket), so this small program subscribes for it with the Rust client
//! (`antsched_memd::connect_domain`), waits on its eventfd (`Client::wait`), reads the record
//! (`Client::current`) and writes one line per notification to stdout, flushed at once:
//!
//! ```text
//! S_SECONDS FREE_BYTES TIER MONOTONIC_SECONDS
//! 412.3 18874368 ramp 15231.402117
//! ```
//!
//! TIER is `plenty`, `ramp`, `paging` or `thrashing`; the last field is the wake-up's time in
//! seconds of CLOCK_MONOTONIC (the clock of the record's `time`). The first line is the record
//! at subscription, so a reader starts from the current S. The daemon notifies by the thesis's
//! rule (S halved or doubled since this subscriber was last told, and every second while S <
//! S_max), so the reader sees what a SIGMEM handler would. `bench/mem/jvm.sh` pipes it into
//! the Java program of `bench/mem/jvm/`, whose daemon thread applies the thesis's rule for a
//! collected heap (section 6.3). It exits 0 when stdout is closed (the reader went away) and 1
//! when the daemon goes away or refuses the subscription, saying why on stderr.

use std::io::Write;

use antsched_mem::Tier;

fn tier_name(t: Tier) -> &'static str {
    match t {
        Tier::Plenty => "plenty",
        Tier::Ramp => "ramp",
        Tier::Paging => "paging",
        Tier::Thrashing => "thrashing",
    }
}

/// Seconds of CLOCK_MONOTONIC (the clock of the record's `time` and of the preload library's
/// log), so that another process can line its own times up with these.
fn monotonic_s() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which lives on this stack.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 || args.len() > 3 || args[1] == "--help" || args[1] == "-h" {
        eprintln!(
            "usage: jvm-bridge SOCKET [DOMAIN]   (DOMAIN: machine or a governed group's path)"
        );
        std::process::exit(2);
    }
    let socket = &args[1];
    let domain = args.get(2).map(String::as_str).unwrap_or("machine");
    let client = match antsched_memd::connect_domain(socket, domain) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("jvm-bridge: cannot subscribe to {domain} at {socket}: {e}");
            std::process::exit(1);
        }
    };
    let mut out = std::io::stdout().lock();
    let say = |out: &mut std::io::StdoutLock| {
        let r = client.current();
        let line = format!(
            "{:.1} {} {} {:.6}\n",
            r.severity_s,
            r.free_bytes,
            tier_name(r.tier),
            monotonic_s()
        );
        if out
            .write_all(line.as_bytes())
            .and_then(|_| out.flush())
            .is_err()
        {
            std::process::exit(0);
        }
    };
    say(&mut out);
    loop {
        match client.wait(None) {
            Ok(0) => continue,
            Ok(_) => say(&mut out),
            Err(e) => {
                eprintln!("jvm-bridge: the daemon went away: {e}");
                std::process::exit(1);
            }
        }
    }
}
