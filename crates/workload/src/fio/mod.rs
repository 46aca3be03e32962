//! Workload descriptions: fio job files, parsed into a typed job model.
//!
//! Users describe workloads in [fio](https://github.com/axboe/fio)'s job-file format so that one
//! file runs in all three of antsched's worlds: simulated (`antsched sim`), emulated
//! (`antsched run`) and for real (`fio` itself). This module reads the subset of the format that
//! describes synchronous (and simple asynchronous) issuers, and turns it into a [`JobFile`]: one
//! [`Job`] per job section, with every option resolved to a typed field.
//!
//! ```
//! use antsched_workload::fio::{self, IoEngine, RwPattern};
//!
//! let text = "\
//! [global]
//! rw=read:64k     ; every other 64 KiB block
//! bs=64k
//! size=1g
//! ioengine=mmap
//!
//! [reader1]
//! [reader2]
//! thinktime=2ms
//! ";
//! let file = fio::parse(text, "alternate.fio")?;
//! let second = &file.jobs[1];
//! assert_eq!((second.rw, second.rw_skip, second.bs), (RwPattern::Read, 65536, 65536));
//! assert_eq!((second.ioengine, second.thinktime_ns), (IoEngine::Mmap, 2_000_000));
//! assert_eq!(second.line_of("thinktime"), Some(9));
//! # Ok::<(), fio::FioError>(())
//! ```
//!
//! # The format
//!
//! An INI file. `[name]` starts a job; `[global]` starts a section whose options apply to every
//! job *below* it (fio's rule: a job is only affected by `[global]` sections above it; several
//! `[global]` sections accumulate; a job's own value overrides). Inside a section, one option
//! per line: `key=value`, `key = value`, or a bare `key` for fio's no-argument options
//! (`time_based`). `#` and `;` start comments, at the start of a line or after a value. A later
//! line for the same option overrides an earlier one. Anything outside the subset below is an
//! error naming the option and its line: nothing is silently ignored.
//!
//! Sizes are whole numbers of bytes with optional suffixes `k`, `m`, `g`, `t`, `p` (powers of
//! 1024, optionally followed by `b`, case-insensitive: fio's default `kb_base=1024`). Note fio's
//! compatibility quirk, which antsched follows so both read a file alike: with that default the
//! IEC forms are powers of 1000 (`1kib` = 1000, `1gib` = 10^9). Times are whole numbers with an
//! optional unit `ns`, `us`/`usec`, `ms`/`msec`, `s`/`sec`, `m`/`min` (minutes), `h`, `d`;
//! without one, fio's default unit for the option applies. `crates/workload/src/fio/value.rs` has the
//! details.
//!
//! # Options
//!
//! fio's options, with fio's meaning and defaults:
//!
//! | option | value | default | meaning |
//! |---|---|---|---|
//! | `name` | text | section name | the job's display name |
//! | `description` | text | none | free text |
//! | `rw`, `readwrite` | `read`, `write`, `randread`, `randwrite`, `rw`/`readwrite`, `randrw`, each with optional `:N` | `read` | the pattern; `:N` is a size skipped after each I/O for sequential patterns (`rw=read:64k`, `bs=64k`: alternate blocks), the I/Os per random offset for random ones |
//! | `bs`, `blocksize` | size, > 0, multiple of 512 | `4k` | bytes per I/O (one size; no `read,write` pairs) |
//! | `size` | size | required (see below) | region of the file or device, and bytes to transfer |
//! | `offset` | size, multiple of 512 | 0 | where I/O starts in the file or device |
//! | `filename` | path | generated | one file; a path under `/dev/` is the disk itself |
//! | `numjobs` | 1 to 65536 | 1 | identical contexts |
//! | `thinktime` | time, default unit µs | 0 | pause after a completion before the next I/O |
//! | `thinktime_blocks` | ≥ 1 | 1 | I/Os between pauses |
//! | `ioengine` | `psync`, `sync`, `pvsync`, `pvsync2`, `mmap` (synchronous); `libaio`, `io_uring` (asynchronous) | `psync` | how I/O is issued; `mmap` gets no read-ahead |
//! | `iodepth` | 1 to 65536 | 1 | requests in flight; above 1 needs an asynchronous engine |
//! | `direct` | 0 or 1 | 0 | 1 bypasses the page cache (no read-ahead, no write-back) |
//! | `rwmixread` | 0 to 100 | 50 | percentage of reads in `rw`/`randrw` |
//! | `runtime` | time, default unit s | no limit | stop after this long |
//! | `time_based` | bare, or 0/1 | off | loop until `runtime` is up |
//! | `exitall` | bare, or 0/1 | off | when this job finishes, every job stops (an endless writer measured against a reader that ends) |
//! | `io_size`, `io_limit` | size | `size` | bytes to transfer, independent of the region |
//! | `number_ios` | count | no limit | stop after this many I/Os; never past the job's size, as in fio |
//! | `randseed` | count | from the run's seed | seed of the random offsets |
//! | `cgroup` | text | none | the class the job's contexts share |
//! | `cgroup_weight` | 100 to 1000 | 100 | the class's weight (needs `cgroup`) |
//! | `nrfiles` | ≥ 1 | 1 | files per clone (not with `filename`) |
//! | `filesize` | size, > 0 | `size / nrfiles` | size of each file |
//! | `file_service_type` | `roundrobin[:N]`, `sequential`, `random[:N]` | `roundrobin` | which file the next I/O goes to; `N` I/Os before switching |
//!
//! A job must say how much to do: `size`, or `filesize` (with `nrfiles`), or `io_size` or
//! `number_ios` with a device `filename`, or `runtime` with `time_based`.
//!
//! antsched's own options, for what fio has no word for (fio itself would reject them, so a
//! file that uses them runs under antsched only; keep them in files meant for simulation):
//!
//! | option | value | default | meaning |
//! |---|---|---|---|
//! | `antsched_disk_offset` | size, multiple of 512 | after the previous file | where this job's file starts on the simulated disk. Without it, files are laid out one after another in order of first appearance. Not for devices, which are addressed at `offset`. |
//! | `antsched_extent`, `antsched_extent_gap` | sizes, multiples of 512 (extent > 0) | contiguous | the file lies on the disk in extents of that size separated by gaps, as FFS spreads a large file across cylinder groups; read-ahead backs off at each boundary (paper, section 4.1). Both or neither. |
//! | `antsched_thinktime_dist` | `constant`, `uniform` | `constant` | `constant` is fio's `thinktime`; `uniform` draws each pause uniformly on [0, `thinktime`] (paper, section 4.2.3) |
//! | `antsched_adversary` | N ≥ 0 | off | the adversary of section 4.2.4 with its rapid requests issued one at a time: N requests with no think time, then one pause of `thinktime`, repeated (fio's `thinktime_blocks=N+1`; not with `thinktime_blocks` or a uniform distribution). The paper's Figure 7 has the N+1 requests arrive together: `bs` of N+1 pieces, `antsched_split` of one, `antsched_split_flag=0` |
//! | `antsched_issue_delay` | time, unit required | 0 | CPU time between a completion and the next request reaching the disk (the system call or page fault) |
//! | `antsched_split` | size, > 0, multiple of 512 | `128k` | the file system splits larger requests into pieces of this size that the scheduler treats as one request (section 4.2.4; FreeBSD's 128 KB) |
//! | `antsched_split_flag` | 0 or 1 | 1 | 1: the file system flags the pieces so that the scheduler treats them as one request (the paper's fix, section 4.2.4); 0: each piece is a request of its own, all arriving together, as FreeBSD's pieces of a 1 MB read did before that fix, and as the paper's adversary issues its rapid requests |
//! | `antsched_readahead` | size, multiple of 512 | `128k` | maximum read-ahead window for buffered (`direct=0`) reads with `psync`/`sync`/`pvsync`/`pvsync2`; 0 turns read-ahead off (Linux's default `read_ahead_kb` is 128) |
//! | `antsched_context_per_file` | 0 or 1 | 0 | each file of the job is read by a new, short-lived context (`find . -type f -exec cat {} \;`); use with `nrfiles`/`filesize` and `file_service_type=sequential`. The context exits `antsched_issue_delay` after its last I/O completes, after the scheduler's decision |
//! | `antsched_dir_files` | N ≥ 1 | none | with a context per file: directories of N files, each read first (one [`DIR_BLOCK`] before its files) by the job's long-lived parent context (`find`); generated files only |
//! | `antsched_dirty_limit` | size, > 0 | `64m` | buffered writers: dirty data a context may hold before it blocks ([`DEFAULT_DIRTY_LIMIT`] says why 64 MiB) |
//! | `antsched_writeback_interval` | time, > 0, unit required | `100ms` | buffered writers: how often write-back flushes dirty data ([`DEFAULT_WRITEBACK_INTERVAL_NS`] says why) |
//!
//! antsched's time options take no default unit: `antsched_issue_delay=50` could mean 50 µs or
//! 50 s, so antsched asks for `50us`.
//!
//! # Where antsched is stricter than fio
//!
//! - `iodepth` above 1 with a synchronous engine is an error (fio silently runs at depth 1).
//! - `nrfiles` with `filename`, `cgroup_weight` without `cgroup`, and `file_service_type=
//!   sequential:N` are errors (fio ignores the extra part).
//! - Values fio reads loosely are errors: `1.5s` (fio: 1 s), an unknown time unit (fio:
//!   microseconds), `4kx` (fio: 4 KiB), `ki` without `b` (fio's docs and parser disagree).
//! - Not evaluated: `${VAR}`, `$mb_memory`-style keywords, `(arithmetic)`, `include`,
//!   percentages, ranges, `read,write` value pairs, several files in one `filename`.
//!
//! # Errors
//!
//! [`FioError`] displays as `FILE:LINE: message`, and every message names the option (or the
//! section) and says what would be valid. Semantic problems found later, by the simulator, can
//! be reported the same way with [`JobFile::error_at`], using the line each option came from
//! ([`Job::line_of`]).
//!
//! # Layout of this module
//!
//! - `lexer`: lines to section headers and `key=value` entries, with line numbers;
//! - `value`: sizes, times, counts, booleans, enumerations;
//! - `options`: the option table (names, aliases, kinds, rules) and fio options it rejects;
//! - `job`: the resolved model ([`JobFile`], [`Job`] and its enums), defaults and the rules
//!   that involve several options;
//! - `error`: [`FioError`] and [`ErrorKind`].

mod error;
mod job;
mod lexer;
mod options;
mod value;

pub use error::{ErrorKind, FioError};
pub use job::{
    Extents, FileServiceType, FileTarget, IoEngine, Job, JobFile, Limits, RwPattern, ThinkTimeDist,
    DEFAULT_BS, DEFAULT_DIRTY_LIMIT, DEFAULT_READAHEAD, DEFAULT_SPLIT,
    DEFAULT_WRITEBACK_INTERVAL_NS, DIR_BLOCK,
};

use job::{Setting, Settings};
use lexer::Item;

/// Parses the job file `text`. `origin` names it in errors (a path, or something like
/// `<stdin>`).
///
/// Values are checked as they are read, so an error in a `[global]` section is reported at its
/// line even if no job would use it; rules that involve several options are checked per job
/// once the job's section ends, and rules across jobs (one weight per cgroup, one placement
/// per shared file) at the end. The first error stops parsing.
pub fn parse(text: &str, origin: &str) -> Result<JobFile, FioError> {
    parse_with(text, origin, &Limits::default())
}

/// Like [`parse`], within `limits` instead of the default [`Limits`] (what `--limit KEY=VALUE`
/// on the command line sets).
pub fn parse_with(text: &str, origin: &str, limits: &Limits) -> Result<JobFile, FioError> {
    let items = lexer::lex(text, origin)?;
    // What `[global]` sections have set so far; each job starts from a copy taken at its
    // header, so a `[global]` further down does not reach back up.
    let mut global = Settings::new();
    // The job section being read, if the current section is not `[global]`.
    let mut current: Option<(&str, u32, Settings)> = None;
    let mut jobs = Vec::new();
    for item in items {
        match item {
            Item::Section { name, line } => {
                if let Some((name, line, settings)) = current.take() {
                    jobs.push(job::resolve(name, line, &settings, origin, limits)?);
                }
                if name != "global" {
                    current = Some((name, line, global.clone()));
                }
            }
            Item::Entry(entry) => {
                let at = |kind| FioError::new(origin, entry.line, kind);
                let spec = options::lookup(entry.key).map_err(at)?;
                let value = options::parse_value(spec, entry.value).map_err(at)?;
                let settings = match &mut current {
                    Some((_, _, settings)) => settings,
                    None => &mut global,
                };
                settings.insert(
                    spec.name,
                    Setting {
                        value,
                        line: entry.line,
                    },
                );
            }
        }
    }
    if let Some((name, line, settings)) = current.take() {
        jobs.push(job::resolve(name, line, &settings, origin, limits)?);
    }
    if jobs.is_empty() {
        return Err(FioError::new(origin, 0, ErrorKind::NoJobs));
    }
    job::check_across(&jobs, origin, limits)?;
    Ok(JobFile {
        origin: origin.to_owned(),
        jobs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Job {
        let mut file = parse(text, "t.fio").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(file.jobs.len(), 1);
        file.jobs.remove(0)
    }

    fn err(text: &str) -> FioError {
        parse(text, "t.fio").expect_err("should not parse")
    }

    #[test]
    fn defaults_are_fios() {
        let job = one("[j]\nsize=1m\n");
        assert_eq!(
            (job.section.as_str(), job.name.as_str(), job.line),
            ("j", "j", 1)
        );
        assert_eq!(
            (job.rw, job.rw_skip, job.rw_ios_per_offset),
            (RwPattern::Read, 0, 1)
        );
        assert_eq!((job.bs, job.size, job.offset), (4096, Some(1 << 20), 0));
        assert_eq!((job.numjobs, job.nrfiles, job.filesize), (1, 1, None));
        assert_eq!(
            (job.ioengine, job.iodepth, job.direct),
            (IoEngine::Psync, 1, false)
        );
        assert_eq!((job.thinktime_ns, job.thinktime_blocks), (0, 1));
        assert_eq!(
            (job.thinktime_dist, job.adversary),
            (ThinkTimeDist::Constant, None)
        );
        assert_eq!(
            (job.rwmixread, job.runtime_ns, job.time_based),
            (50, None, false)
        );
        assert_eq!(
            (job.io_size, job.number_ios, job.randseed),
            (None, None, None)
        );
        assert_eq!((job.cgroup.as_deref(), job.cgroup_weight), (None, None));
        assert_eq!(
            (job.file_service, job.file_service_ios),
            (FileServiceType::RoundRobin, 1)
        );
        assert_eq!(job.filename, FileTarget::Generated);
        assert_eq!(
            (job.disk_offset, job.extents, job.issue_delay_ns),
            (None, None, 0)
        );
        assert_eq!((job.split, job.readahead), (128 * 1024, 128 * 1024));
        assert!(
            job.split_flag,
            "the pieces are flagged unless told otherwise"
        );
        assert_eq!(
            (job.dirty_limit, job.writeback_interval_ns),
            (64 << 20, 100_000_000)
        );
        assert!(!job.context_per_file);
        assert!(job.readahead_applies());
        assert_eq!(job.line_of("size"), Some(2));
        assert_eq!(job.line_of("bs"), None);
        assert_eq!(job.line_or_header("bs"), 1);
    }

    #[test]
    fn global_applies_only_below_and_accumulates() {
        let file = parse(
            "[global]\nbs=8k\n[a]\nsize=1m\n[global]\nbs=16k\nthinktime=5\n[b]\nsize=1m\n\
             [c]\nsize=1m\nbs=32k\n",
            "t",
        )
        .unwrap();
        let [a, b, c] = &file.jobs[..] else {
            panic!("three jobs")
        };
        // `a` saw only the first [global]; `b` sees both, the second overriding `bs`.
        assert_eq!((a.bs, a.thinktime_ns, a.line_of("bs")), (8192, 0, Some(2)));
        assert_eq!(
            (b.bs, b.thinktime_ns, b.line_of("bs")),
            (16384, 5_000, Some(6))
        );
        // A job's own value overrides [global], and its line is the job's.
        assert_eq!(
            (c.bs, c.line_of("bs"), c.line_of("thinktime")),
            (32768, Some(12), Some(7))
        );
    }

    #[test]
    fn aliases_and_name() {
        let job = one(
            "[j]\nreadwrite=randrw\nrwmixread=70\nblocksize=8k\nio_limit=2m\nsize=1m\nname=shown\n",
        );
        assert_eq!(
            (job.rw, job.rwmixread, job.bs),
            (RwPattern::RandReadWrite, 70, 8192)
        );
        assert_eq!(
            (job.io_size, job.io_bytes()),
            (Some(2 << 20), Some(2 << 20))
        );
        assert_eq!((job.name.as_str(), job.section.as_str()), ("shown", "j"));
        assert_eq!(job.line_of("readwrite"), Some(2));
        assert_eq!(job.line_of("rw"), Some(2));
        assert_eq!(job.line_of("io_limit"), Some(5));
    }

    #[test]
    fn zero_means_unset_where_fio_says_so() {
        let job = one("[j]\nfilename=/dev/sdb\nsize=0\nio_size=0\nnumber_ios=100\nruntime=0\n");
        assert_eq!(
            (job.size, job.io_size, job.number_ios, job.runtime_ns),
            (None, None, Some(100), None)
        );
    }

    #[test]
    fn sync_engine_with_queue_depth() {
        let e = err("[j]\nsize=1m\nioengine=sync\niodepth=4\n");
        assert_eq!((e.line, e.option()), (4, Some("iodepth")));
        assert!(
            e.to_string().contains("ioengine=sync is synchronous"),
            "{e}"
        );
        // The default engine is synchronous too.
        assert_eq!(err("[global]\niodepth=2\n[j]\nsize=1m\n").line, 2);
        assert_eq!(
            one("[j]\nsize=1m\nioengine=libaio\ndirect=1\niodepth=32\n").iodepth,
            32
        );
    }

    #[test]
    fn multi_option_rules() {
        let cases: &[(&str, u32, &str)] = &[
            ("[j]\nsize=1m\ntime_based\n", 3, "time_based"),
            ("[j]\nfilename=a\nnrfiles=4\nfilesize=1m\n", 3, "nrfiles"),
            ("[j]\nfilename=/dev/sda\nfilesize=1m\n", 3, "filesize"),
            (
                "[j]\nfilename=/dev/sda\nsize=1m\nantsched_disk_offset=1g\n",
                4,
                "antsched_disk_offset",
            ),
            ("[j]\nsize=1m\ncgroup_weight=200\n", 3, "cgroup_weight"),
            (
                "[j]\nnrfiles=9\nfilesize=4k\nantsched_context_per_file=1\n",
                4,
                "antsched_context_per_file",
            ),
            (
                "[j]\nsize=1m\nthinktime_blocks=3\nantsched_adversary=2\n",
                4,
                "antsched_adversary",
            ),
            (
                "[j]\nsize=1m\nantsched_thinktime_dist=uniform\nantsched_adversary=2\n",
                4,
                "antsched_adversary",
            ),
            ("[j]\nsize=1m\nantsched_extent=1m\n", 3, "antsched_extent"),
            (
                "[j]\nsize=1m\nantsched_extent_gap=1m\n",
                3,
                "antsched_extent_gap",
            ),
            ("[j]\nsize=1m\noffset=0xfffffffffffffe00\n", 3, "offset"),
        ];
        for &(text, line, option) in cases {
            let e = err(text);
            assert_eq!((e.line, e.option()), (line, Some(option)), "{text}: {e}");
            assert!(e.to_string().contains(option), "{e}");
        }
    }

    #[test]
    fn size_rules() {
        let e = err("[global]\nbs=4k\n\n[lonely]\nrw=read\n");
        assert_eq!(e.line, 4);
        assert!(e.to_string().contains("job `lonely` has no size"), "{e}");
        // Each way of giving one.
        one("[j]\nfilesize=64k\nnrfiles=10\n");
        one("[j]\nfilename=/dev/sdb\nio_size=1g\n");
        one("[j]\nfilename=/dev/sdb\nnumber_ios=1000\n");
        one("[j]\nruntime=10\ntime_based\n");
        // io_size alone on a regular file says nothing about where the file is.
        assert_eq!(err("[j]\nfilename=a\nio_size=1g\n").line, 1);
    }

    #[test]
    fn adversary_and_uniform() {
        let job = one("[j]\nsize=1m\nthinktime=7ms\nantsched_adversary=3\n");
        assert_eq!(
            (job.adversary, job.ios_per_pause(), job.thinktime_ns),
            (Some(3), 4, 7_000_000)
        );
        let job = one(
            "[j]\nsize=1m\nthinktime=7ms\nthinktime_blocks=2\nantsched_thinktime_dist=uniform\n",
        );
        assert_eq!(
            (job.ios_per_pause(), job.thinktime_dist),
            (2, ThinkTimeDist::Uniform)
        );
    }

    #[test]
    fn antsched_options() {
        let job = one(
            "[j]\nsize=1g\nfilename=big\nantsched_disk_offset=2g\nantsched_extent=32m\n\
             antsched_extent_gap=1m\nantsched_issue_delay=50us\nantsched_split=64k\n\
             antsched_split_flag=0\nantsched_readahead=0\nantsched_dirty_limit=8m\n\
             antsched_writeback_interval=1s\n",
        );
        assert!(!job.split_flag);
        assert_eq!(job.disk_offset, Some(2 << 30));
        assert_eq!(
            job.extents,
            Some(Extents {
                extent: 32 << 20,
                gap: 1 << 20
            })
        );
        assert_eq!(
            (job.issue_delay_ns, job.split, job.readahead),
            (50_000, 65536, 0)
        );
        assert_eq!(
            (job.dirty_limit, job.writeback_interval_ns),
            (8 << 20, 1_000_000_000)
        );
        assert!(!job.readahead_applies());
        let e = err("[j]\nsize=1m\nantsched_issue_delay=50\n");
        assert!(e.to_string().contains("needs a unit"), "{e}");
        let e = err("[j]\nsize=1m\nantsched_writeback_interval=0\n");
        assert!(e.to_string().contains("greater than 0"), "{e}");
    }

    #[test]
    fn readahead_depends_on_engine_and_direct() {
        assert!(!one("[j]\nsize=1m\nioengine=mmap\n").readahead_applies());
        assert!(!one("[j]\nsize=1m\ndirect=1\n").readahead_applies());
        assert!(one("[j]\nsize=1m\nioengine=sync\n").readahead_applies());
        assert!(!one("[j]\nsize=1m\nioengine=io_uring\n").readahead_applies());
    }

    #[test]
    fn file_sizes() {
        let job = one("[j]\nsize=1m\nnrfiles=4\n");
        assert_eq!(
            (job.file_size(), job.io_bytes()),
            (Some(256 << 10), Some(1 << 20))
        );
        let job = one("[j]\nfilesize=4k\nnrfiles=10\n");
        assert_eq!((job.file_size(), job.io_bytes()), (Some(4096), Some(40960)));
        let job = one("[j]\nfilename=/dev/sdb\nsize=1m\n");
        assert_eq!((job.is_device(), job.file_size()), (true, None));
    }

    #[test]
    fn across_jobs() {
        let e = err("[a]\nsize=1m\ncgroup=x\ncgroup_weight=100\n[b]\nsize=1m\ncgroup=x\ncgroup_weight=200\n");
        assert_eq!((e.line, e.option()), (8, Some("cgroup_weight")));
        assert!(e.to_string().contains("line 4"), "{e}");
        // Same weight twice, or the weight given once, is fine.
        parse(
            "[a]\nsize=1m\ncgroup=x\ncgroup_weight=100\n[b]\nsize=1m\ncgroup=x\n",
            "t",
        )
        .unwrap();
        let e =
            err("[a]\nsize=1m\nfilename=f\nantsched_disk_offset=1g\n[b]\nsize=1m\nfilename=f\n");
        assert_eq!((e.line, e.option()), (5, Some("antsched_disk_offset")));
    }

    #[test]
    fn no_jobs() {
        let e = err("[global]\nbs=4k\n");
        assert_eq!((e.line, e.kind), (0, ErrorKind::NoJobs));
        assert_eq!(err("").kind, ErrorKind::NoJobs);
    }

    #[test]
    fn error_at_names_the_option_line() {
        let file = parse("[global]\nsize=100g\n[j]\nfilename=/dev/sdb\n", "disk.fio").unwrap();
        let job = &file.jobs[0];
        let e = file.error_at(job, "size", "is larger than the device (37 GB)");
        assert_eq!(
            e.to_string(),
            "disk.fio:2: job `j`: is larger than the device (37 GB)"
        );
        assert_eq!(e.option(), Some("size"));
        assert_eq!(file.error_at(job, "bs", "x").line, 3);
    }

    #[test]
    fn load_reports_the_path() {
        let e = JobFile::load("/nonexistent/dir/job.fio").unwrap_err();
        assert_eq!(e.line, 0);
        assert!(
            e.to_string()
                .starts_with("/nonexistent/dir/job.fio: cannot read"),
            "{e}"
        );
    }
}
