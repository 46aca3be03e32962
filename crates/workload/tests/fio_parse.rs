//! The fio job-file parser on whole files: the workloads the paper's experiments need, broken
//! files (every error names its line and its option), the example files in `examples/jobs/`,
//! and a property test that no input makes the parser panic.

use std::path::PathBuf;

use antsched_workload::fio::{
    self, ErrorKind, FileServiceType, FileTarget, FioError, IoEngine, Job, JobFile, RwPattern,
    ThinkTimeDist,
};
use proptest::prelude::*;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;
const MS: u64 = 1_000_000;

fn parse(text: &str) -> JobFile {
    fio::parse(text, "test.fio").unwrap_or_else(|e| panic!("should parse: {e}"))
}

fn parse_err(text: &str) -> FioError {
    match fio::parse(text, "test.fio") {
        Ok(file) => panic!("should not parse, got {:?}", file.jobs),
        Err(e) => e,
    }
}

/// The error is at `line`, is about `option`, and its message names the option and starts
/// with the location.
fn assert_error(e: &FioError, line: u32, option: &str) {
    let shown = e.to_string();
    assert_eq!(e.line, line, "{shown}");
    assert_eq!(e.option(), Some(option), "{shown}");
    assert!(shown.starts_with(&format!("test.fio:{line}: ")), "{shown}");
    assert!(
        shown.contains(&format!("`{option}`")),
        "message should name `{option}`: {shown}"
    );
}

fn job<'a>(file: &'a JobFile, section: &str) -> &'a Job {
    file.jobs
        .iter()
        .find(|job| job.section == section)
        .unwrap_or_else(|| panic!("no job [{section}]"))
}

// ---------------------------------------------------------------------------------------------
// Valid files

#[test]
fn paper_two_sequential_readers() {
    let file = parse(
        "; Section 4.1: two processes, separate 1 GB files, 64 KB reads, mmap.\n\
         [global]\n\
         rw=read\n\
         bs=64k\n\
         size=1g\n\
         ioengine=mmap\n\
         \n\
         [reader1]\n\
         filename=reader1.dat\n\
         \n\
         [reader2]\n\
         filename=reader2.dat\n",
    );
    assert_eq!(file.jobs.len(), 2);
    for (job, section, line, path) in [
        (&file.jobs[0], "reader1", 8, "reader1.dat"),
        (&file.jobs[1], "reader2", 11, "reader2.dat"),
    ] {
        assert_eq!(
            (job.section.as_str(), job.name.as_str(), job.line),
            (section, section, line)
        );
        assert_eq!(
            (job.rw, job.rw_skip, job.bs, job.size),
            (RwPattern::Read, 0, 64 * KIB, Some(GIB))
        );
        assert_eq!(
            (job.ioengine, job.iodepth, job.direct),
            (IoEngine::Mmap, 1, false)
        );
        assert!(job.ioengine.is_synchronous());
        assert!(!job.readahead_applies(), "mmap faults get no read-ahead");
        assert_eq!(job.filename, FileTarget::File(path.into()));
        assert_eq!(
            (job.numjobs, job.thinktime_ns, job.cgroup.as_deref()),
            (1, 0, None)
        );
        assert_eq!(job.line_of("bs"), Some(4));
        assert_eq!(job.line_of("filename"), Some(line + 1));
    }
}

#[test]
fn alternate_blocks() {
    let file = parse("[global]\nrw=read:64k\nbs=64k\nsize=1g\n[a]\n[b]\n");
    for job in &file.jobs {
        assert_eq!(
            (job.rw, job.rw_skip, job.rw_ios_per_offset),
            (RwPattern::Read, 64 * KIB, 1)
        );
        assert!(!job.rw.is_random());
        assert_eq!(
            (job.ioengine, job.readahead_applies()),
            (IoEngine::Psync, true)
        );
        assert_eq!(job.line_of("rw"), Some(2));
    }
}

#[test]
fn random_reads_within_own_files() {
    let file = parse(
        "[global]\nreadwrite=randread\nbs=64k\nsize=1g\nrandseed=1234\n[a]\nfilename=a\n\
         [b]\nfilename=b\nrw=randread:4\n",
    );
    let (a, b) = (job(&file, "a"), job(&file, "b"));
    assert_eq!(
        (a.rw, a.rw_skip, a.rw_ios_per_offset),
        (RwPattern::RandRead, 0, 1)
    );
    assert!(a.rw.is_random() && a.rw.reads() && !a.rw.writes());
    assert_eq!(a.randseed, Some(1234));
    // fio's `randread:N`: a new random offset every N I/Os.
    assert_eq!(
        (b.rw_ios_per_offset, b.line_of("rw"), b.line_of("readwrite")),
        (4, Some(10), Some(10))
    );
}

#[test]
fn think_times() {
    let file = parse(
        "[global]\nrw=read\nbs=64k\nsize=1g\nioengine=mmap\n\
         [symmetric]\nthinktime=3000\n\
         [asymmetric-slow]\nthinktime=12ms\nthinktime_blocks=2\n\
         [quick]\n\
         [random]\nthinktime=8ms\nantsched_thinktime_dist=uniform\n\
         [adversary]\nthinktime=7ms\nantsched_adversary=3\nantsched_issue_delay=20us\n",
    );
    let symmetric = job(&file, "symmetric");
    // fio's default unit for thinktime is microseconds.
    assert_eq!(
        (symmetric.thinktime_ns, symmetric.thinktime_blocks),
        (3 * MS, 1)
    );
    assert_eq!(
        (symmetric.thinktime_dist, symmetric.ios_per_pause()),
        (ThinkTimeDist::Constant, 1)
    );
    let slow = job(&file, "asymmetric-slow");
    assert_eq!((slow.thinktime_ns, slow.ios_per_pause()), (12 * MS, 2));
    assert_eq!(job(&file, "quick").thinktime_ns, 0);
    let random = job(&file, "random");
    assert_eq!(
        (random.thinktime_ns, random.thinktime_dist),
        (8 * MS, ThinkTimeDist::Uniform)
    );
    let adversary = job(&file, "adversary");
    assert_eq!(
        (adversary.adversary, adversary.ios_per_pause()),
        (Some(3), 4)
    );
    assert_eq!(
        (adversary.thinktime_ns, adversary.issue_delay_ns),
        (7 * MS, 20_000)
    );
}

#[test]
fn cgroup_weights_one_to_two() {
    let file = parse(
        "[global]\nrw=read\nbs=64k\nsize=1g\nioengine=mmap\n\
         [light]\ncgroup=light\ncgroup_weight=100\n\
         [heavy]\ncgroup=heavy\ncgroup_weight=200\n",
    );
    let (light, heavy) = (job(&file, "light"), job(&file, "heavy"));
    assert_eq!(
        (light.cgroup.as_deref(), light.cgroup_weight),
        (Some("light"), Some(100))
    );
    assert_eq!(
        (heavy.cgroup.as_deref(), heavy.cgroup_weight),
        (Some("heavy"), Some(200))
    );
    assert_eq!(heavy.line_of("cgroup_weight"), Some(11));
}

#[test]
fn numjobs_and_shared_file() {
    let file =
        parse("[readers]\nnumjobs=3\nfilename=shared.dat\nsize=256m\n[own]\nnumjobs=2\nsize=1m\n");
    let readers = job(&file, "readers");
    assert_eq!(
        (readers.numjobs, readers.filename.clone()),
        (3, FileTarget::File("shared.dat".into()))
    );
    let own = job(&file, "own");
    assert_eq!(
        (own.numjobs, own.filename.clone()),
        (2, FileTarget::Generated)
    );
}

#[test]
fn device_filename_with_offset() {
    let file = parse(
        "[global]\nfilename=/dev/sdb\ndirect=1\n\
         [outer]\noffset=0\nsize=1g\n\
         [inner]\noffset=30g\nio_size=512m\n\
         [counted]\noffset=10g\nnumber_ios=1000\n",
    );
    let outer = job(&file, "outer");
    assert!(outer.is_device());
    assert_eq!(outer.filename, FileTarget::Device("/dev/sdb".into()));
    assert_eq!(
        (outer.offset, outer.size, outer.direct),
        (0, Some(GIB), true)
    );
    assert!(!outer.readahead_applies());
    let inner = job(&file, "inner");
    // Without `size` the region is the rest of the device from `offset`.
    assert_eq!(
        (inner.offset, inner.size, inner.io_size),
        (30 * GIB, None, Some(512 * MIB))
    );
    assert_eq!(inner.io_bytes(), Some(512 * MIB));
    let counted = job(&file, "counted");
    assert_eq!((counted.number_ios, counted.io_bytes()), (Some(1000), None));
}

#[test]
fn context_per_file_with_nrfiles_and_filesize() {
    let file = parse(
        "; find . -type f -exec cat {} \\; over 1000 small files\n\
         [find-cat]\n\
         nrfiles=1000\n\
         filesize=16k\n\
         bs=16k\n\
         file_service_type=sequential\n\
         antsched_context_per_file=1\n\
         \n\
         [streamer]\n\
         rw=read\n\
         bs=128k\n\
         size=4g\n\
         antsched_disk_offset=20g\n\
         antsched_extent=32m\n\
         antsched_extent_gap=2m\n",
    );
    let find = job(&file, "find-cat");
    assert!(find.context_per_file);
    assert_eq!(
        (find.nrfiles, find.filesize, find.size),
        (1000, Some(16 * KIB), None)
    );
    assert_eq!(
        (find.file_service, find.file_service_ios),
        (FileServiceType::Sequential, 1)
    );
    assert_eq!(
        (find.file_size(), find.io_bytes()),
        (Some(16 * KIB), Some(16_000 * KIB))
    );
    let streamer = job(&file, "streamer");
    assert_eq!(streamer.disk_offset, Some(20 * GIB));
    let extents = streamer.extents.expect("extents");
    assert_eq!((extents.extent, extents.gap), (32 * MIB, 2 * MIB));
}

#[test]
fn find_reads_its_directories_every_n_files() {
    let file = parse(
        "[find]\nnrfiles=64\nfilesize=16k\nbs=16k\nfile_service_type=sequential\n\
         antsched_context_per_file=1\nantsched_dir_files=16\n",
    );
    assert_eq!(file.jobs[0].dir_files, Some(16));
    assert_eq!(parse("[a]\nsize=1g\n").jobs[0].dir_files, None);
    // Directories only make sense for a chain of short-lived processes over generated files.
    let e = parse_err("[a]\nnrfiles=4\nfilesize=4k\nantsched_dir_files=2\n");
    assert_error(&e, 4, "antsched_dir_files");
    let e = parse_err(
        "[a]\nfilename=x\nsize=1g\nfile_service_type=sequential\nantsched_context_per_file=1\n\
         antsched_dir_files=2\n",
    );
    assert_error(&e, 6, "antsched_dir_files");
    let e = parse_err(
        "[a]\nnrfiles=4\nfilesize=4k\nfile_service_type=sequential\n\
         antsched_context_per_file=1\nantsched_dir_files=0\n",
    );
    assert_eq!(e.line, 6, "{e}");
}

#[test]
fn async_io_uring_iodepth_8() {
    let file =
        parse("[async]\nioengine=io_uring\niodepth=8\ndirect=1\nrw=randread\nbs=4k\nsize=1g\n");
    let job = &file.jobs[0];
    assert_eq!(
        (job.ioengine, job.iodepth, job.direct),
        (IoEngine::IoUring, 8, true)
    );
    assert!(!job.ioengine.is_synchronous());
    let file = parse("[aio]\nioengine=libaio\niodepth=32\ndirect=1\nsize=1g\n");
    assert_eq!(
        (file.jobs[0].ioengine, file.jobs[0].iodepth),
        (IoEngine::Libaio, 32)
    );
}

#[test]
fn buffered_writer_and_time_based() {
    let file = parse(
        "[dd]\nrw=write\nbs=1m\ntime_based\nruntime=2m\nantsched_dirty_limit=32m\n\
         antsched_writeback_interval=250ms\n",
    );
    let dd = &file.jobs[0];
    assert!(dd.rw.writes() && !dd.rw.reads());
    assert_eq!(
        (dd.time_based, dd.runtime_ns),
        (true, Some(120_000_000_000))
    );
    assert_eq!((dd.size, dd.io_bytes()), (None, None));
    assert_eq!(
        (dd.dirty_limit, dd.writeback_interval_ns),
        (32 * MIB, 250 * MS)
    );
}

#[test]
fn spacing_comments_and_case_of_suffixes() {
    let file = parse(
        "  # indented comment\n[global]\r\n  bs = 64K   ; trailing comment\r\n\
         size =1G# comment right after\n\n[ spaced ]\nruntime = 10S\ntime_based = 1\n",
    );
    let job = &file.jobs[0];
    assert_eq!(
        (job.section.as_str(), job.bs, job.size),
        ("spaced", 64 * KIB, Some(GIB))
    );
    assert_eq!(
        (job.runtime_ns, job.time_based),
        (Some(10_000_000_000), true)
    );
}

#[test]
fn duplicate_option_later_line_wins() {
    // Allowed, as in fio: a later line overrides an earlier one, in [global] and in a job.
    let file = parse("[global]\nbs=4k\nbs=8k\n[j]\nsize=1m\nthinktime=1ms\nthinktime=2ms\n");
    let job = &file.jobs[0];
    assert_eq!((job.bs, job.line_of("bs")), (8 * KIB, Some(3)));
    assert_eq!(
        (job.thinktime_ns, job.line_of("thinktime")),
        (2 * MS, Some(7))
    );
    // Through an alias too.
    let file = parse("[j]\nsize=1m\nrw=read\nreadwrite=randwrite\n");
    assert_eq!(
        (file.jobs[0].rw, file.jobs[0].line_of("rw")),
        (RwPattern::RandWrite, Some(4))
    );
}

// ---------------------------------------------------------------------------------------------
// Broken files

#[test]
fn unknown_option() {
    let e = parse_err("[global]\nbs=4k\n[j]\nsize=1m\nthinktme=5\n");
    assert_error(&e, 5, "thinktme");
    assert!(e.to_string().contains("did you mean `thinktime`?"), "{e}");
    let e = parse_err("[j]\nsize=1m\nbssplit=4k/50:64k/50\n");
    assert_error(&e, 3, "bssplit");
    assert!(matches!(e.kind, ErrorKind::UnsupportedOption { .. }), "{e}");
}

#[test]
fn bad_size() {
    let e = parse_err("[j]\nbs=4k\nsize=lots\n");
    assert_error(&e, 3, "size");
    assert!(e.to_string().contains("`lots`"), "{e}");
    for (value, needle) in [
        ("3", "multiple of 512"),
        ("0", "greater than 0"),
        ("1.5k", "whole number"),
    ] {
        let e = parse_err(&format!("[j]\nsize=1m\nbs={value}\n"));
        assert_error(&e, 3, "bs");
        assert!(e.to_string().contains(needle), "{e}");
    }
    let e = parse_err("[j]\nsize=99999999999t\n");
    assert_error(&e, 2, "size");
    assert!(e.to_string().contains("too large"), "{e}");
}

#[test]
fn bad_suffix() {
    let e = parse_err("[global]\nsize=1q\n[j]\n");
    assert_error(&e, 2, "size");
    assert!(e.to_string().contains("unknown size suffix `q`"), "{e}");
    let e = parse_err("[j]\nsize=1m\nthinktime=5x\n");
    assert_error(&e, 3, "thinktime");
    assert!(e.to_string().contains("unknown time unit `x`"), "{e}");
}

#[test]
fn bad_enum_value() {
    let e = parse_err("[j]\nsize=1m\nrw=sequential\n");
    assert_error(&e, 3, "rw");
    let shown = e.to_string();
    for valid in [
        "read",
        "write",
        "randread",
        "randwrite",
        "rw",
        "readwrite",
        "randrw",
    ] {
        assert!(
            shown.contains(&format!("`{valid}`")),
            "should list `{valid}`: {shown}"
        );
    }
    let e = parse_err("[j]\nsize=1m\nioengine=posixaio\n");
    assert_error(&e, 3, "ioengine");
    assert!(e.to_string().contains("`io_uring`"), "{e}");
    let e = parse_err("[j]\nsize=1m\nfile_service_type=zipf:1.1\n");
    assert_error(&e, 3, "file_service_type");
    let e = parse_err("[j]\nsize=1m\nantsched_thinktime_dist=exponential\n");
    assert_error(&e, 3, "antsched_thinktime_dist");
    assert!(e.to_string().contains("`constant`, `uniform`"), "{e}");
}

#[test]
fn out_of_range_values() {
    for (line, option, needle) in [
        ("rwmixread=101", "rwmixread", "between 0 and 100"),
        ("numjobs=0", "numjobs", "between 1 and 65536"),
        ("cgroup_weight=50", "cgroup_weight", "between 100 and 1000"),
        ("direct=2", "direct", "0 or 1"),
        ("thinktime_blocks=0", "thinktime_blocks", "at least 1"),
    ] {
        let e = parse_err(&format!("[j]\nsize=1m\ncgroup=c\n{line}\n"));
        assert_error(&e, 4, option);
        assert!(e.to_string().contains(needle), "{e}");
    }
}

#[test]
fn option_before_any_section() {
    let e = parse_err("; comment\n\nrw=read\n[j]\nsize=1m\n");
    assert_error(&e, 3, "rw");
    assert!(e.to_string().contains("outside of any section"), "{e}");
}

#[test]
fn missing_closing_bracket() {
    let e = parse_err("[global]\nbs=4k\n\n[reader1\nsize=1m\n");
    assert_eq!(e.line, 4);
    assert!(matches!(e.kind, ErrorKind::UnclosedSection { .. }));
    assert!(
        e.to_string()
            .starts_with("test.fio:4: section header `[reader1` is missing its closing `]`"),
        "{e}"
    );
}

#[test]
fn missing_size() {
    let e = parse_err("[global]\nrw=read\nbs=64k\n\n[reader1]\nfilename=a.dat\n");
    assert_eq!(
        (e.line, e.kind.clone()),
        (
            5,
            ErrorKind::MissingSize {
                job: "reader1".into()
            }
        )
    );
    let shown = e.to_string();
    assert!(
        shown.starts_with("test.fio:5: job `reader1` has no size"),
        "{shown}"
    );
    assert!(shown.contains("`size=`"), "{shown}");
}

#[test]
fn missing_value() {
    let e = parse_err("[j]\nsize=1m\ndirect\n");
    assert_error(&e, 3, "direct");
    assert!(
        e.to_string()
            .contains("needs a value, for example `direct=1`"),
        "{e}"
    );
}

#[test]
fn iodepth_with_synchronous_engine() {
    let e = parse_err("[global]\nioengine=psync\n[j]\nsize=1m\niodepth=8\n");
    assert_error(&e, 5, "iodepth");
    let shown = e.to_string();
    assert!(
        shown.contains("job `j`") && shown.contains("ioengine=psync is synchronous"),
        "{shown}"
    );
    assert!(shown.contains("io_uring"), "{shown}");
}

#[test]
fn errors_in_later_jobs_keep_their_line() {
    let e = parse_err("[a]\nsize=1m\n[b]\nsize=1m\n[c]\nsize=1m\nbs=1000\n");
    assert_error(&e, 7, "bs");
}

// ---------------------------------------------------------------------------------------------
// Example files

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/jobs")
}

#[test]
fn every_example_job_file_parses() {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(examples_dir())
        .expect("examples/jobs exists")
        .map(|entry| entry.expect("readable directory").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "fio"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 4, "{paths:?}");
    for path in &paths {
        let file = JobFile::load(path).unwrap_or_else(|e| panic!("{e}"));
        assert!(!file.jobs.is_empty(), "{}", path.display());
    }
}

#[test]
fn example_files_describe_the_paper_workloads() {
    let load =
        |name: &str| JobFile::load(examples_dir().join(name)).unwrap_or_else(|e| panic!("{e}"));
    let seq = load("two-readers-seq.fio");
    assert_eq!(seq.jobs.len(), 2);
    assert!(seq
        .jobs
        .iter()
        .all(|j| j.rw == RwPattern::Read && j.ioengine == IoEngine::Mmap));
    let alternate = load("two-readers-alternate.fio");
    assert!(alternate
        .jobs
        .iter()
        .all(|j| j.rw_skip == j.bs && j.bs == 64 * KIB));
    let random = load("two-readers-random.fio");
    assert!(random
        .jobs
        .iter()
        .all(|j| j.rw == RwPattern::RandRead && j.size == Some(GIB)));
    let stride = load("stride-1-2.fio");
    let weights: Vec<Option<u32>> = stride.jobs.iter().map(|j| j.cgroup_weight).collect();
    assert_eq!(weights, [Some(100), Some(200)]);
}

// ---------------------------------------------------------------------------------------------
// Robustness

/// Lines that look like job files, so generated inputs get past the lexer into values and
/// resolution.
fn job_file_line() -> impl Strategy<Value = String> {
    let keys = prop::sample::select(vec![
        "rw",
        "readwrite",
        "bs",
        "size",
        "offset",
        "filename",
        "numjobs",
        "thinktime",
        "thinktime_blocks",
        "ioengine",
        "iodepth",
        "direct",
        "rwmixread",
        "runtime",
        "time_based",
        "io_size",
        "number_ios",
        "randseed",
        "cgroup",
        "cgroup_weight",
        "nrfiles",
        "filesize",
        "file_service_type",
        "antsched_disk_offset",
        "antsched_extent",
        "antsched_extent_gap",
        "antsched_thinktime_dist",
        "antsched_adversary",
        "antsched_issue_delay",
        "antsched_split",
        "antsched_split_flag",
        "antsched_readahead",
        "antsched_context_per_file",
        "antsched_dir_files",
        "antsched_dirty_limit",
        "antsched_writeback_interval",
        "name",
        "bogus",
    ]);
    let values = prop::sample::select(vec![
        "",
        "0",
        "1",
        "8",
        "64k",
        "1g",
        "4KiB",
        "1.5",
        "-1",
        "18446744073709551615",
        "99999999999999999999",
        "0x1f",
        "read:64k",
        "randread:8",
        "randrw",
        "io_uring",
        "psync",
        "sequential",
        "random:3",
        "uniform",
        "10ms",
        "5",
        "/dev/sdb",
        "a\\:b",
        "a:b",
        "${X}",
        "(1+1)",
        "20%",
        "1k-4k",
        "é",
        "100",
    ]);
    prop_oneof![
        (keys.clone(), values).prop_map(|(k, v)| format!("{k}={v}")),
        keys.prop_map(str::to_owned),
        prop::sample::select(vec!["[global]", "[job]", "[other]", "[", "[]", "# c", ""])
            .prop_map(str::to_owned),
        "\\PC{0,20}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parse_never_panics_on_arbitrary_text(text in "\\PC*|[\\[\\]=#;:\\n\\r \\t\\\\a-z0-9]{0,200}") {
        let _ = fio::parse(&text, "fuzz.fio");
    }

    #[test]
    fn parse_never_panics_on_job_like_text(lines in prop::collection::vec(job_file_line(), 0..30)) {
        let text = lines.join("\n");
        match fio::parse(&text, "fuzz.fio") {
            Ok(file) => prop_assert!(!file.jobs.is_empty()),
            // Every error points inside the file (or at the file as a whole).
            Err(e) => prop_assert!(e.line as usize <= lines.len(), "{e}"),
        }
    }
}

/// Valid-looking options that once made a job cost gigabytes or never end (issue 17): each is
/// refused at its own line, with what would be valid, before anything is allocated or run.
#[test]
fn options_that_would_make_a_job_unbounded_are_refused_at_their_line() {
    // 100 million files of 10 bytes: less than a block each (fio refuses this too).
    let e = parse_err("[a]\nrw=read\nsize=1g\nnrfiles=100000000\n");
    assert_error(&e, 4, "nrfiles");
    assert!(e.to_string().contains("less than one block"), "{e}");
    // Files of one block each, but more than a million of them.
    let e = parse_err("[a]\nrw=read\nbs=512\nfilesize=512\nnrfiles=600000\nnumjobs=2\n");
    assert!(e.to_string().contains("more than 1000000 files"), "{e}");
    // Two million pieces per request.
    let e = parse_err("[a]\nrw=read\nsize=4g\nbs=1g\nantsched_split=512\n");
    assert_error(&e, 5, "antsched_split");
    assert!(e.to_string().contains("at least 262144"), "{e}");
    // A flush every nanosecond.
    let e = parse_err("[a]\nrw=write\nsize=1m\nantsched_writeback_interval=1ns\n");
    assert_error(&e, 4, "antsched_writeback_interval");
    // A time-based run of two hours, and two billion I/Os: hours to simulate.
    let e = parse_err("[a]\nrw=randread\nsize=1g\ntime_based=1\nruntime=7200s\n");
    assert_error(&e, 5, "runtime");
    let e = parse_err("[a]\nrw=read\nbs=512\nsize=1g\nio_size=1t\n");
    assert_error(&e, 5, "io_size");
    let e = parse_err("[a]\nrw=read\nbs=512\nsize=1g\nnumjobs=64\n");
    assert_error(&e, 4, "size");
    // The limits themselves are allowed.
    parse("[a]\nrw=randread\nsize=1g\ntime_based=1\nruntime=3600s\n");
    parse("[a]\nrw=read\nbs=512\nsize=1g\nio_size=51200000000\n");
    parse("[a]\nrw=read\nsize=4g\nbs=1g\nantsched_split=262144\n");
    parse("[a]\nrw=write\nsize=1m\nantsched_writeback_interval=1ms\n");
    parse("[a]\nrw=read\nbs=512\nfilesize=512\nnrfiles=1000000\n");
}

/// Each limit's error names the `--limit` that would allow the job, with the job's own cost,
/// and that `--limit` (as `Limits::set` reads it) does allow it; what the limits do not cover
/// stays refused.
#[test]
fn each_limit_names_the_flag_that_raises_it_and_raising_it_allows_the_job() {
    let cases = [
        (
            "[a]\nrw=read\nbs=512\nfilesize=512\nnrfiles=600000\nnumjobs=2\n",
            "--limit files=1200000",
            "files=1200000",
        ),
        (
            "[a]\nrw=read\nsize=4g\nbs=1g\nantsched_split=512\n",
            "--limit pieces=2097152",
            "pieces=2097152",
        ),
        (
            "[a]\nrw=write\nsize=1m\nantsched_writeback_interval=500us\n",
            "--limit writeback_interval=500000ns",
            "writeback_interval=500us",
        ),
        (
            "[a]\nrw=randread\nsize=1g\ntime_based=1\nruntime=7200s\n",
            "--limit runtime=7200s",
            "runtime=7200s",
        ),
        (
            "[a]\nrw=read\nbs=512\nsize=1g\nio_size=1t\n",
            "--limit ios=2147483648",
            "ios=2147483648",
        ),
    ];
    for (text, named, flag) in cases {
        let e = parse_err(text).to_string();
        assert!(e.contains(named), "{e}");
        let mut limits = fio::Limits::default();
        limits.set(flag).unwrap();
        fio::parse_with(text, "test.fio", &limits)
            .unwrap_or_else(|e| panic!("{flag} should allow it: {e}"));
        // One short of what the job needs is still refused.
        let mut short = fio::Limits::default();
        match flag.split_once('=').unwrap() {
            ("files", _) => short.files = 1_199_999,
            ("pieces", _) => short.pieces = 2_097_151,
            ("runtime", _) => short.runtime_ns = 7_199_999_999_999,
            ("ios", _) => short.ios = 2_147_483_647,
            (_, _) => short.writeback_interval_ns = 500_001,
        }
        assert!(fio::parse_with(text, "test.fio", &short).is_err(), "{flag}");
    }
    // The cost is stated: a million files and more are hundreds of megabytes.
    let e = parse_err("[a]\nrw=read\nbs=512\nfilesize=512\nnrfiles=600000\nnumjobs=2\n");
    assert!(e.to_string().contains("about 396 MB"), "{e}");
    // A file smaller than a block is not a cost: no limit allows it.
    let mut all = fio::Limits::default();
    for l in [
        "files=1000000000",
        "pieces=1000000000",
        "writeback_interval=1ns",
    ] {
        all.set(l).unwrap();
    }
    assert!(fio::parse_with("[a]\nrw=read\nsize=1g\nnrfiles=100000000\n", "t", &all).is_err());
}

#[test]
fn a_bad_limit_says_what_the_limits_are() {
    let mut l = fio::Limits::default();
    for (bad, says) in [
        ("files", "KEY=VALUE"),
        ("nope=3", "unknown limit `nope`"),
        ("files=0", "above 0"),
        ("files=-1", "whole number"),
        ("pieces=lots", "whole number"),
        ("writeback_interval=5", "no unit"),
        ("writeback_interval=0", "above 0"),
    ] {
        let e = l.set(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
    assert_eq!(l, fio::Limits::default(), "a refused limit changes nothing");
}

/// Virtual time once wrapped: `antsched_issue_delay=18446744073709551615ns` reported the
/// no-delay result and `thinktime=1000000000s` a duration of 18,426,047,410 s. A pause past an
/// hour is now refused at its line, naming the option.
#[test]
fn pauses_past_an_hour_are_refused_naming_the_option() {
    for (extra, option) in [
        (
            "antsched_issue_delay=18446744073709551615ns",
            "antsched_issue_delay",
        ),
        ("thinktime=1000000000s", "thinktime"),
        ("thinktime=3600000001us", "thinktime"),
        (
            "antsched_writeback_interval=2h",
            "antsched_writeback_interval",
        ),
    ] {
        let text = format!("[a]\nrw=read\nbs=4k\nsize=1m\ndirect=1\n{extra}\n");
        let e = fio::parse(&text, "t.fio").unwrap_err().to_string();
        assert!(
            e.contains("t.fio:6") && e.contains(option) && e.contains("at most 1h"),
            "{extra}: {e}"
        );
    }
}
