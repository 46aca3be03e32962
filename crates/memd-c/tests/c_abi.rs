//! The C ABI as a C program uses it: `include/antsched_mem.h`, linked against
//! `libantsched_mem_c.so`, run against a daemon on a temporary socket whose source the test
//! sets. Skips (with the reason) where there is no C compiler.

mod common;

use common::{cc_or_skip, compile, config, target_dir, Fake, Running, TempDir};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const GIB: u64 = 1 << 30;

/// The C program: connects (after checking that a missing daemon is NULL + errno), prints the
/// record, waits for the first wake-up on its own poll loop over antsched_mem_fd(), says
/// "ready", and then waits with antsched_mem_wait until it reads the halved S the test sets.
const PROGRAM: &str = r#"
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include "antsched_mem.h"

_Static_assert(sizeof(struct antsched_mem_record) == 80, "the record is 80 bytes, as in Rust");

int main(int argc, char **argv) {
    (void)argc;
    antsched_mem *none = antsched_mem_connect("/nonexistent/memd.sock");
    if (none != NULL || errno != ENOENT || strstr(antsched_mem_last_error(), "/nonexistent") == NULL) {
        printf("FAIL missing daemon: %p errno %d %s\n", (void *)none, errno, antsched_mem_last_error());
        return 1;
    }
    if (antsched_mem_current(NULL, NULL) != -1 || errno != EINVAL) {
        printf("FAIL NULL handle\n");
        return 1;
    }
    antsched_mem *h = antsched_mem_connect(argv[1]);
    if (h == NULL) {
        printf("FAIL connect: %s\n", antsched_mem_last_error());
        return 1;
    }
    struct antsched_mem_record r;
    if (antsched_mem_current(h, &r) != 0) {
        printf("FAIL current\n");
        return 1;
    }
    printf("record version %u S %.1f age %.1f free %llu tau %llu tier %u estimator %u cost %.6g disk %.3f queue %.1f\n",
           r.version, r.severity_s, r.candidate_age_s, (unsigned long long)r.free_bytes,
           (unsigned long long)r.tau_bytes, r.tier, r.estimator, r.paging_cost,
           r.disk_service_ms, r.disk_queue);
    struct pollfd p = {.fd = antsched_mem_fd(h), .events = POLLIN};
    if (poll(&p, 1, 20000) != 1) {
        printf("FAIL no wake-up on the eventfd\n");
        return 1;
    }
    int64_t n = antsched_mem_wait(h, 0);
    printf("woken %lld\n", (long long)n);
    printf("ready\n");
    fflush(stdout);
    for (int i = 0; i < 200; i++) {
        if (antsched_mem_wait(h, 20000) < 0) {
            printf("FAIL wait: %s\n", antsched_mem_last_error());
            return 1;
        }
        antsched_mem_current(h, &r);
        if (r.severity_s == 100.0) {
            printf("halved S %.1f tier %u\n", r.severity_s, r.tier);
            antsched_mem_close(h);
            antsched_mem_close(NULL);
            return 0;
        }
    }
    printf("FAIL never saw S halve\n");
    return 1;
}
"#;

/// Linked against the shared library.
#[test]
fn a_c_program_reads_the_record_and_is_woken() {
    let Some(cc) = cc_or_skip("a_c_program_reads_the_record_and_is_woken") else {
        return;
    };
    let lib = target_dir();
    run_the_program(
        &cc,
        "shared",
        &[
            &format!("-L{}", lib.display()),
            "-lantsched_mem_c",
            &format!("-Wl,-rpath,{}", lib.display()),
        ],
    );
}

/// Linked against the static library, with the system libraries the header names.
#[test]
fn a_c_program_linked_statically_reads_the_record_and_is_woken() {
    let Some(cc) = cc_or_skip("a_c_program_linked_statically_reads_the_record_and_is_woken") else {
        return;
    };
    let archive = target_dir().join("libantsched_mem_c.a");
    run_the_program(
        &cc,
        "static",
        &[&archive.display().to_string(), "-lpthread", "-ldl", "-lm"],
    );
}

fn run_the_program(cc: &str, name: &str, link: &[&str]) {
    let dir = TempDir::new(name);
    let source = dir.0.join("client.c");
    std::fs::write(&source, PROGRAM).unwrap();
    let exe = dir.0.join("client");
    let include = format!("-I{}", concat!(env!("CARGO_MANIFEST_DIR"), "/include"));
    // The libraries after the source, as static linking needs.
    let mut args = vec![include.as_str()];
    args.extend_from_slice(link);
    compile(cc, &source, &exe, &args);

    // Free 0: S is the candidate age, 400 s, below S_max: told at once.
    let fake = Fake::new(0, GIB, 400.0);
    let d = Running::start(config(&dir.0), Box::new(fake.clone()));
    let mut child = Command::new(&exe)
        .arg(&d.socket)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "{lines:?}");
        eprint!("c: {line}");
        lines.push(line.clone());
        if line == "ready\n" {
            break;
        }
    }
    assert!(
        lines[0].starts_with(
            "record version 1 S 400.0 age 400.0 free 0 tau 107374182 tier 2 estimator 0"
        ),
        "{lines:?}"
    );
    assert!(lines[1].starts_with("woken "), "{lines:?}");
    fake.set(0, GIB, 100.0);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    eprint!("c: {rest}");
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}: {rest}");
    assert!(rest.contains("halved S 100.0 tier 2"), "{rest}");
    drop(d);
}
