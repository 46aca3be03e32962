//! The workloads of the paper's microbenchmarks, as fio job files, and the runs that make up
//! the suite.
//!
//! Common settings, from section 4 and the original release's README:
//! - two (or three) processes, each reading its own 1 GB file in 64 KB requests. The paper does
//!   not say where its files lay; it says what a switch between them cost: "9ms of average seek
//!   time and 3ms of read time for every 64 KB block" (section 2). Reader k's file starts at
//!   k x 6 GB, where a seek between two files costs the disk's average seek (9 ms on the
//!   34GXP model; 1 GB apart it would be 4 ms). On the smaller 15,000 rpm disk of section 4.8
//!   the same placement spans a third of it, the "large seeks" that section describes. This
//!   distance gives section 4.1's random readers the paper's gain ("gains are mostly due to
//!   seek reduction between files"), which needs the files far apart; the think times at
//!   which anticipation stops paying in section 4.2 grow with the same switch, and come out
//!   as the paper's with the files nearer: the suite runs those experiments again at the
//!   distances of [`SPACING_SWEEP_MIB`], and the report says where each figure holds;
//! - `antsched_issue_delay=200us`: the CPU time between a completion and the next request
//!   ("a few hundred microseconds", section 2; the release measured 94.8% utilization for two
//!   anticipated mmap readers, i.e. about 5% of each 3 ms request spent idle);
//! - buffered `read` runs see FreeBSD's prefetch, which backs off where a large file crosses to
//!   another region of the disk; FFS of that era gave a file 16 MB per cylinder group
//!   (`maxbpg` of 2048 8 KB blocks), so the files are laid out in 16 MB extents separated by
//!   2 MB of other data;
//! - measured over a fixed run (the release printed averages over a 20 s window); `--quick`
//!   shortens runs and sweeps;
//! - the think-time experiments of section 4.2 also run with the files at the distances of
//!   [`SPACING_SWEEP_MIB`], from back to back to twice the default: where the symmetric gain
//!   ends and where the asymmetric dip falls follow the cost of a switch between the files,
//!   which their distance sets and the paper does not give.
//!
//! The Linux/CAS paper's three experiments (its sections 5.4 to 5.6) and BFQ's shares are
//! described where they are built ([`cas_table1`], [`cas_table2`], [`cas_table3`],
//! [`bfq_readers`]). Comparison mode is not a workload of its own: the groups it reads (the
//! section 4.1 patterns, think times of 4 and 8 ms, the shares, the CAS tables and BFQ's
//! shares) run under every scheduler of the catalog ([`all_schedulers`]).

use serde::Serialize;

/// How much of the suite to run, and on which disks.
#[derive(Clone, Debug)]
pub struct PaperOptions {
    /// The paper's disk (IBM Deskstar 34GXP unless told otherwise).
    pub disk: String,
    /// The disk of section 4.8 (Seagate Cheetah 15K).
    pub fast_disk: String,
    /// Shorter runs and sparser sweeps: seconds instead of minutes.
    pub quick: bool,
    /// The schedulers' positioning-time estimator. The paper's implementation used an
    /// LBN-distance curve calibrated at installation (section 3.6): `calibrated`.
    pub estimator: String,
    /// Distance between the starts of consecutive readers' files, in bytes.
    pub file_spacing: u64,
}

impl Default for PaperOptions {
    fn default() -> Self {
        Self {
            disk: "deskstar-34gxp".into(),
            fast_disk: "cheetah-15k".into(),
            quick: false,
            estimator: "calibrated".into(),
            file_spacing: FILE_SPACING,
        }
    }
}

/// One simulation of the suite.
#[derive(Clone, Debug, Serialize)]
pub struct PlannedRun {
    /// The experiment it belongs to (e.g. `fig5-symmetric`).
    pub group: String,
    /// What varies between the runs of one experiment besides the scheduler (e.g. `seq/mmap`).
    pub variant: String,
    /// The swept value, for plots (think time in ms, adversary's n, timer tick in us).
    pub x: Option<f64>,
    /// The scheduler's name, as the tables show it.
    pub label: String,
    /// Its full SPEC.
    pub scheduler: String,
    pub disk: String,
    /// The workload as a fio job file.
    pub job: String,
    /// For a run timed by when a job finishes (the CAS tables): its cap, in seconds. A run
    /// that lasts this long was stopped before the job finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cap_s: Option<f64>,
}

/// The two schedulers the paper compares in sections 4.1 to 4.2 and 4.8: Aged-SPTF with a
/// 1 s bound, without and with anticipation.
pub const BASELINE: &str = "aged-sptf";
pub const ANTICIPATORY: &str = "as-aged-sptf";

/// Every scheduler of the catalog (antsched's own, then the peers): the rows of comparison
/// mode.
pub fn all_schedulers() -> Vec<&'static str> {
    antsched_core::catalog().iter().map(|s| s.name).collect()
}

/// Think times (ms) of sections 4.2.1 and 4.2.2 that comparison mode runs under every
/// scheduler: where anticipation still pays (4 ms) and where it stops paying (8 ms).
pub const COMPARE_THINK_MS: [f64; 2] = [4.0, 8.0];

/// The Linux/CAS paper's experiments at one scale.
#[derive(Clone, Copy, Debug)]
pub struct CasScale {
    /// Size of Table 1's file, in MiB (the paper: 200 MB).
    pub reader_mib: u32,
    /// Files in each `find` tree (Tables 2 and 3).
    pub tree_files: u32,
    /// The endless job (Table 1's `dd`, Table 2's `cat big-file`) stops here, and so does a
    /// run whose timed job has not finished: a bound on a starved run's cost, reported as
    /// "did not finish".
    pub cap_s: u32,
}

impl CasScale {
    pub fn of(o: &PaperOptions) -> Self {
        if o.quick {
            Self {
                reader_mib: 50,
                tree_files: 128,
                cap_s: 100,
            }
        } else {
            Self {
                reader_mib: 200,
                tree_files: 512,
                cap_s: 300,
            }
        }
    }
}

/// Size of one file of the `find` trees: 16 KiB. *Understanding the Linux Kernel* (2nd ed.,
/// appendix C) counts about 8,750 C and assembly files in about 530 directories, more than
/// 144 MB: about 16.5 KB per file and 16.5 files per directory. A file this small is read by
/// `cat` in one request: the kernel's first read-ahead window of a file (32 KiB in 2.6.9)
/// covers it whole.
pub const TREE_FILE_KIB: u32 = 16;
/// Files per directory of the `find` trees (see `TREE_FILE_KIB`).
pub const TREE_DIR_FILES: u32 = 16;

/// The `find . -type f -exec cat {} \;` job of the Linux/CAS paper (Program B, Figure 2): a
/// tree of `files` files of [`TREE_FILE_KIB`] in directories of [`TREE_DIR_FILES`], laid out
/// in the order `find` visits them. Each file is read by a new, short-lived `cat`
/// (`antsched_context_per_file`); before each directory's files, `find` itself (one long-lived
/// context) reads the directory (`antsched_dir_files`). Between one process's last read and
/// the next one's first, 1 ms: `find` waking from `wait`, forking, and the new `cat`
/// exec'ing and opening its file, an upper estimate on the paper's 2.28 GHz Pentium 4.
/// Table 2 is the same from 0.5 to 2 ms; Table 3's seek storm fades from 2 ms on, when the
/// drive's read-ahead, filling its cache in the idle time between files, serves both trees
/// (the report says so).
fn find_job(name: &str, files: u32, at_mib: u64) -> String {
    format!(
        "\n[{name}]\nrw=read\nnrfiles={files}\nfilesize={TREE_FILE_KIB}k\nbs={TREE_FILE_KIB}k\n\
         file_service_type=sequential\nantsched_context_per_file=1\nantsched_dir_files={TREE_DIR_FILES}\n\
         thinktime={CAT_GAP_US}us\nantsched_disk_offset={at_mib}m\n"
    )
}

/// The gap between one process's last read of a `find` tree and the next one's first, in
/// microseconds (see [`find_job`]).
pub const CAT_GAP_US: u32 = 1000;

fn cas_global(what: &str, cap_s: u32) -> String {
    format!(
        "; generated by antsched paper: {what}\n[global]\nioengine=psync\ndirect=0\nruntime={cap_s}s\n"
    )
}

/// Table 1 of the Linux/CAS paper (section 5.4, Figure 1): `time cat 200mb-file` against
/// `while true; do dd if=/dev/zero of=file count=2048 bs=1M; done`. The writer's 1 MB
/// `write`s only dirty the page cache; the write-back daemon sends them to the disk as
/// asynchronous writes (the simulator's write-back model). The reader is buffered, with
/// read-ahead; its 128 KiB reads stand for `cat`'s 4 KiB ones, which hit the page cache
/// between read-ahead windows (the disk sees the same requests; the times agree to 0.1 s).
/// The writer's file lies first, the reader's `spacing` further on, where a switch between
/// them costs the disk's average seek. The reader's time is the run's length (`exitall`).
pub fn cas_table1(o: &PaperOptions) -> String {
    let c = CasScale::of(o);
    format!(
        "{}\n[dd]\nrw=write\nbs=1m\nsize=2g\nfilename=file\ntime_based\n\n[cat]\nrw=read\nbs=128k\n\
         size={}m\nfilename=200mb-file\nantsched_disk_offset={}m\nexitall\n",
        cas_global(
            "Linux/CAS paper, Table 1: cat of a file against an endless dd writer",
            c.cap_s
        ),
        c.reader_mib,
        o.file_spacing >> 20,
    )
}

/// Table 2 (section 5.5, Figure 2): `while true; do cat big-file; done` (a 2 GiB file, twice
/// the paper's 1 GB of memory, read with read-ahead) against `time find . -type f -exec cat
/// {} \;` ([`find_job`]) on a tree `spacing` further on. The find's time is the run's length.
pub fn cas_table2(o: &PaperOptions) -> String {
    let c = CasScale::of(o);
    let mut s = format!(
        "{}\n[cat-big-file]\nrw=read\nbs=128k\nsize=2g\nfilename=big-file\ntime_based\n",
        cas_global(
            "Linux/CAS paper, Table 2: find -exec cat against an endless cat of a large file",
            c.cap_s
        )
    );
    s += &find_job("find", c.tree_files, o.file_spacing >> 20);
    s += "exitall\n";
    s
}

/// Table 3 (section 5.6): one, or two concurrent, `find -exec cat` on disjoint trees, the
/// second `spacing` from the first. Throughput is all the bytes read over the time until both
/// are done.
pub fn cas_table3(o: &PaperOptions, instances: u32) -> String {
    let c = CasScale::of(o);
    let mut s = cas_global(
        &format!("Linux/CAS paper, Table 3: {instances} find -exec cat on disjoint trees"),
        c.cap_s,
    );
    for k in 0..instances {
        s += &find_job(
            &format!("find{}", k + 1),
            c.tree_files,
            u64::from(k) * (o.file_spacing >> 20),
        );
    }
    s
}

/// BFQ's bandwidth distribution (Valente and Checconi, section V; the issue's test):
/// sequential readers of their own files (the suite's [`readers`] with `read`, so with
/// read-ahead), each in a class weighted `weights[k]`, or with no class for `None`.
pub fn bfq_readers(o: &PaperOptions, runtime_s: u32, weights: &[Option<u32>]) -> String {
    let names = ["p", "q", "r"];
    let rs: Vec<Reader<'_>> = weights
        .iter()
        .zip(names)
        .map(|(&weight, name)| Reader {
            name,
            think: Think::default(),
            weight,
        })
        .collect();
    readers("read", "psync", runtime_s, o.file_spacing, &rs)
}

/// The default of tunable `name` of `scheduler`, as the catalog gives it (e.g. `125ms`).
fn tunable_default(scheduler: &str, name: &str) -> String {
    antsched_core::catalog()
        .iter()
        .find(|s| s.name == scheduler)
        .and_then(|s| s.tunables.iter().find(|t| t.name == name))
        .map_or_else(|| "?".into(), |t| t.default.to_string())
}

/// How the Linux/CAS and BFQ experiments are modelled, for the report (markdown). Its
/// figures are the options', the simulator's settings, and those of `runs`, the suite's runs
/// (a figure whose run is not there shows as `?`).
pub fn modelling_notes(o: &PaperOptions, runs: &[crate::PaperRun]) -> String {
    let c = CasScale::of(o);
    let spacing = o.file_spacing >> 20;
    let tree_mib = f64::from(c.tree_files * TREE_FILE_KIB) / 1024.0;
    let find = |group: &str, variant: &str, s: &str| {
        runs.iter()
            .find(|r| r.plan.group == group && r.plan.variant == variant && r.plan.label == s)
            .map(|r| &r.report)
    };
    let show = |v: Option<f64>, digits: usize| v.map_or("?".into(), |v| format!("{v:.digits$}"));
    // One reader alone under deadline, which has nothing to schedule: the disk's streaming rate.
    let stream = show(
        find("bfq-shares", "1-reader", "deadline").map(|r| r.throughput_mb_s),
        1,
    );
    let dirs = c.tree_files.div_ceil(TREE_DIR_FILES);
    let time2 = |s| find("cas-table2", "", s).map(|r| r.duration_s);
    let dir_s = show(time2("cas").map(|t| t / f64::from(dirs)), 2);
    let newer = match (time2("cas"), time2("linux-as-2.6.32")) {
        (Some(c), Some(n)) if (n / c - 1.0).abs() <= 0.05 => format!(
            "gives nearly the same time in Table 2 ({n:.1} s against CAS's {c:.1} s in this run)"
        ),
        (Some(c), Some(n)) => {
            format!("gives {n:.1} s in Table 2 against CAS's {c:.1} s in this run")
        }
        _ => "is in the tables beside them".into(),
    };
    format!(
        "## How the Linux/CAS and BFQ experiments are modelled\n\n\
The Linux/CAS paper measured Linux 2.6.9 on a 7,200 rpm Maxtor IDE disk; we run its workloads on the \
same disk model as the rest of the suite (`{disk}`, where one reader alone gets {stream} MB/s in this \
run: `bfq-shares`, one reader, under deadline). Job files: `jobs/cas-*.fio` and \
`jobs/bfq-shares-*.fio`.\n\n\
- **Table 1** (`cas-table1`): `while true; do dd if=/dev/zero of=file count=2048 bs=1M; done` is a \
buffered writer of 1 MB `write`s looping over a 2 GiB file: its writes only dirty memory, the \
simulator's write-back daemon sends them to the disk every {wb_ms} ms as asynchronous writes, and the \
writer blocks while it holds {dirty_mib} MiB of dirty data. `time cat 200mb-file` is a buffered reader of a \
{reader} MiB file with read-ahead (128 KiB windows); the reader's time is the run's length. The \
writer's file lies first, the reader's {spacing} MiB further on (the suite's file spacing: a switch \
costs the disk's average seek).\n\
- **Table 2** (`cas-table2`): `while true; do cat big-file; done` reads a 2 GiB file (twice the \
paper's 1 GB of memory) with read-ahead. `time find . -type f -exec cat {{}} \\;` runs over a tree of \
{files} files of {kib} KiB ({tree:.0} MiB) in directories of {per_dir}, {spacing} MiB from the big \
file, laid out in the order find visits them; *Understanding the Linux Kernel* counts about 8,750 C \
and assembly files in 530 directories of a 2.4 tree, over 144 MB: 16.5 files per directory and about \
16.5 KB per file. A 2.6.9 tree holds about 17,000 files: ours is about 1/{scale} of it, so the \
paper's seconds and ours compare as ratios between schedulers, not as seconds. Each file is read by a \
new, short-lived process (`antsched_context_per_file`) in one request (the kernel's first read-ahead \
window of a file, 32 KiB, covers it), and find itself, one long-lived process, reads each directory \
(one 4 KiB block before its files, `antsched_dir_files`) before forking the cats for its files. One \
process's last read and the next one's first are {gap_ms} ms apart (find waking, fork, exec and open: an \
upper estimate for a 2.28 GHz Pentium 4). Table 3 depends on that gap: the longer it is, the more \
of both trees' files the drive's own read-ahead, filling its segmented cache while it would idle \
between files, serves without a seek, and the storm fades under every scheduler; our trees, \
contiguous in the order find reads them, are the best case for that read-ahead. A process exits when it next runs after its last read completes: after the \
scheduler has decided what follows that completion, as in Linux, where the completion interrupt runs \
the queue while the process is still asleep. The find's time is the run's length.\n\
- **Table 3** (`cas-table3`): the same find alone, and two of them on trees {spacing} MiB apart; MB/s \
counts every byte read until both are done.\n\
- A run whose timed job is not done after {cap} s is stopped there, and its time shows as `≥{cap}`.\n\n\
What decides these tables:\n\n\
- **CAS against LAS.** When a `cat` finishes its file, the scheduler decides what follows while that \
`cat` is still alive: LAS (`linux-as`) and CAS both start to wait for it. The `cat` exits, and the \
next one's read of the neighbouring file arrives a millisecond later. LAS sees that the awaited \
process has exited and breaks off, but its elevator still picks the nearby read; each such exit \
raises its exit probability, and once that passes 50% LAS no longer waits for a new process at all: \
the streaming reader takes the disk after every file, and each next file waits for its read to expire \
(`read_expire`, {expire} in linux-as, checked as often). CAS counts the close read from another process as cooperation: its \
cooperative exit probability rises instead, and it keeps waiting for new processes. (Before this was \
modelled, the simulator told the scheduler of a `cat`'s exit inside the completion, before the \
decision; no scheduler could then wait for a successor, and CAS gave exactly LAS's times.)\n\
- **CAS against deadline.** CAS serves the files of one directory back to back, but not the \
directory change: find's own directory read comes from a process that thinks far longer than \
`antic_expire` between its reads (it waits for a dozen `cat`s), so CAS does not wait for find's next \
request, the streaming reader takes the disk, and the first file of the directory waits for its read \
to expire. That costs {dir_s} s per directory in this run (Table 2's CAS time over its {dirs} \
directories), so CAS's time grows with the number of directories, while deadline pays two seeks per \
file. `linux-as-2.6.32`, whose cooperating-process rules are CAS's in other words, {newer}.\n\
- **The seek storm** (Table 3): with two finds, deadline and LAS serve the other tree's waiting \
read after every file; CAS stays with one tree through a directory and switches at directory \
changes.\n\
- **BFQ** (`bfq-shares`): sequential readers of their own files as in section 4.1 (64 KB `read`s with \
read-ahead, files {spacing} MiB apart), each a class with `cgroup_weight` 100:200 or 100:200:1000, \
for the suite's run length; shares are of bytes, the unit of BFQ's budgets. Two readers without \
weights are compared with one reader alone.\n",
        disk = o.disk,
        reader = c.reader_mib,
        files = c.tree_files,
        kib = TREE_FILE_KIB,
        tree = tree_mib,
        per_dir = TREE_DIR_FILES,
        scale = 17_000 / c.tree_files,
        cap = c.cap_s,
        wb_ms = antsched_workload::fio::DEFAULT_WRITEBACK_INTERVAL_NS / 1_000_000,
        dirty_mib = antsched_workload::fio::DEFAULT_DIRTY_LIMIT >> 20,
        gap_ms = f64::from(CAT_GAP_US) / 1000.0,
        expire = tunable_default("linux-as", "read_expire"),
    )
}

/// Think-time settings of one reader.
#[derive(Clone, Copy, Debug, Default)]
pub struct Think {
    pub ms: f64,
    pub uniform: bool,
    /// The adversary of section 4.2.4: n rapid requests besides the one after each pause,
    /// and how they reach the scheduler.
    pub adversary: Option<(u32, Burst)>,
}

/// How the adversary's n rapid requests reach the scheduler (section 4.2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Burst {
    /// All n + 1 at once, as pieces of one read that the file system does not flag
    /// (`antsched_split_flag=0`): the paper's adversary. It "issues several requests
    /// rapidly, followed by a long wait", which the paper likens to a large read split into
    /// pieces, where "the scheduler receives eight 128 KB requests in rapid succession,
    /// followed by the application's typically larger thinktime period" (section 4.2.4).
    /// Only with the requests arriving together does the paper's result follow from its
    /// heuristic: it learns a zero think time for the queued ones, waits out the timeout
    /// after each burst, and has nothing to gain within one, which the work-conserving
    /// policy serves back to back as well.
    Together,
    /// One at a time, each issued as soon as the one before completes
    /// (`antsched_adversary=n`): the other reading of the paper's words, a think-time
    /// pattern in the setup of section 4.2. From n = 2 on the heuristic then waits within
    /// each burst and is answered, which the baseline, seeking between the readers, cannot
    /// match; at n = 1 it waits only when the reader is about to pause, and the drive's
    /// read-ahead during those waits repays them.
    OneAtATime,
}

/// One reader of a 1 GB file.
pub struct Reader<'a> {
    pub name: &'a str,
    pub think: Think,
    pub weight: Option<u32>,
}

/// Where reader k's file starts: k x 6 GB (see the module docs).
pub const FILE_SPACING: u64 = 6 << 30;

/// The CPU time between a reader's completion and its next request, in microseconds
/// (`antsched_issue_delay`; see the module docs). Every think time the heuristic measures is
/// the reader's pause plus this.
pub const ISSUE_DELAY_US: u64 = 200;

/// Size of each reader's file: the paper's "separate 1 GB files" (section 4.1), and the
/// release's `file0` and `file1` ("1 GB each", `dd bs=1048576 count=1024`).
pub const FILE_SIZE: u64 = 1 << 30;

/// The distances between the readers' files (MiB) at which the think-time experiments of
/// sections 4.2.1 and 4.2.2 run again (group `sec4.2-file-spacing`): the symmetric gain ends,
/// and the asymmetric dip falls, where the median think time passes what the SPTF rule prices
/// a wait at, and that is the calibrated curve's cost of a switch between the files, which
/// grows with their distance. The paper does not say where its files lay. The sweep starts
/// with them back to back (the least distance 1 GB files allow), which is how the original
/// release's README has them made: "Create /larder/file/file0 and file1, 1 GB each (dd
/// bs=1048576 count=1024)", one after the other, on a file system "with at least 2,000,000 KB
/// free"; it ends at twice the default, and passes the default.
pub const SPACING_SWEEP_MIB: [u64; 7] = [1024, 2048, 3072, 4096, 6144, 8192, 12288];

/// The group of the spacing sweep's runs.
pub const SPACING_SWEEP: &str = "sec4.2-file-spacing";

/// The least spacing the suite's job files allow: the Linux/CAS experiments place the reader
/// (or the `find` tree) one spacing after a 2 GiB file, so any less overlaps it.
pub const MIN_FILE_SPACING: u64 = 2 << 30;

/// A job file with one job per reader, each on its own 1 GB file.
pub fn readers(
    rw: &str,
    engine: &str,
    runtime_s: u32,
    spacing: u64,
    readers: &[Reader<'_>],
) -> String {
    let mut s = format!(
        "; generated by antsched paper\n[global]\nrw={rw}\nbs=64k\nsize=1g\nioengine={engine}\n\
         time_based\nruntime={runtime_s}s\nantsched_issue_delay={ISSUE_DELAY_US}us\n"
    );
    // The files' span on the disk: 1 GB, or 64 extents of 16 MB with 2 MB gaps between.
    let mut span: u64 = FILE_SIZE;
    if engine != "mmap" {
        s += "antsched_extent=16m\nantsched_extent_gap=2m\n";
        span = 64 * (18 << 20) - (2 << 20);
    }
    let spacing = spacing.max(span);
    for (k, r) in readers.iter().enumerate() {
        s += &format!(
            "\n[{}]\nfilename={}.dat\nantsched_disk_offset={}m\n",
            r.name,
            r.name,
            k as u64 * spacing / (1 << 20)
        );
        if r.think.ms > 0.0 {
            s += &format!("thinktime={}us\n", (r.think.ms * 1000.0).round() as u64);
        }
        if r.think.uniform {
            s += "antsched_thinktime_dist=uniform\n";
        }
        match r.think.adversary {
            Some((n, Burst::Together)) => {
                s += &format!(
                    "; n={n}: {} requests of 64 KB arrive together, then the pause\n\
                     bs={}k\nantsched_split=64k\nantsched_split_flag=0\n",
                    n + 1,
                    64 * (u64::from(n) + 1)
                );
            }
            Some((n, Burst::OneAtATime)) => s += &format!("antsched_adversary={n}\n"),
            None => {}
        }
        if let Some(w) = r.weight {
            s += &format!("cgroup={}\ncgroup_weight={w}\n", r.name);
        }
    }
    s
}

fn two(think_p: Think, think_q: Think) -> [Reader<'static>; 2] {
    [
        Reader {
            name: "p",
            think: think_p,
            weight: None,
        },
        Reader {
            name: "q",
            think: think_q,
            weight: None,
        },
    ]
}

/// `spec` with `estimator=...` added if the scheduler has that tunable.
fn with_estimator(spec: &str, estimator: &str) -> String {
    with_tunable(spec, "estimator", estimator)
}

/// `spec` with `key=value` added where its scheduler has that tunable, else `spec` as it is.
fn with_tunable(spec: &str, key: &str, value: &str) -> String {
    let name = spec.split(':').next().unwrap_or(spec);
    let has = antsched_core::catalog()
        .iter()
        .any(|s| s.name == name && s.tunables.iter().any(|t| t.name == key));
    match (has, spec.contains(':')) {
        (false, _) => spec.to_string(),
        (true, true) => format!("{spec},{key}={value}"),
        (true, false) => format!("{spec}:{key}={value}"),
    }
}

/// Every run of the suite.
pub fn plan(o: &PaperOptions) -> Vec<PlannedRun> {
    let runtime = if o.quick { 4 } else { 20 };
    let mut out = Vec::new();
    let mut add =
        |group: &str, variant: &str, x: Option<f64>, label: &str, disk: &str, job: &str| {
            out.push(PlannedRun {
                group: group.into(),
                variant: variant.into(),
                x,
                label: label.into(),
                // BFQ's experiments give their weights in bytes, BFQ's contract: a scheduler
                // whose user chooses the unit of its weights (`share`) is told bytes there, as
                // a user asking for BFQ's contract would tell it. And they are the BFQ
                // report's, whose BFQ had no weight raising: `bfq` runs them with
                // `low_latency` 0 (raised for most of a 20 s run, the readers' shares drift
                // by a tenth and their throughput falls by a sixth).
                scheduler: with_estimator(
                    &if group == "bfq-shares" {
                        with_tunable(&with_tunable(label, "share", "bytes"), "low_latency", "0")
                    } else {
                        label.to_string()
                    },
                    &o.estimator,
                ),
                disk: disk.into(),
                job: job.into(),
                cap_s: group
                    .starts_with("cas-")
                    .then_some(f64::from(CasScale::of(o).cap_s)),
            })
        };
    let pair = [BASELINE, ANTICIPATORY];
    let all = all_schedulers();
    let none = Think::default();

    // 4.1 and 4.8: access patterns, read versus mmap.
    let patterns = [
        ("seq", "read"),
        ("alter", "read:64k"),
        ("random", "randread"),
    ];
    for (group, disk) in [
        ("fig4-access-patterns", &o.disk),
        ("fig13-fast-disk", &o.fast_disk),
    ] {
        for (pat, rw) in patterns {
            for engine in ["psync", "mmap"] {
                let variant = format!("{pat}/{}", if engine == "mmap" { "mmap" } else { "read" });
                let job = readers(rw, engine, runtime, o.file_spacing, &two(none, none));
                // Comparison mode: every scheduler on the paper's disk.
                let schedulers: &[&str] = if disk == &o.disk { &all } else { &pair };
                for s in schedulers {
                    add(group, &variant, None, s, disk, &job);
                }
            }
        }
    }

    // 4.2: think times, on sequential mmap readers.
    let sweep: Vec<f64> = if o.quick {
        vec![0.0, 2.0, 4.0, 6.0, 8.0, 12.0]
    } else {
        (0..=14).map(f64::from).collect()
    };
    for &t in &sweep {
        let think = Think { ms: t, ..none };
        let uniform = Think {
            ms: t,
            uniform: true,
            ..none
        };
        for (group, job) in [
            (
                "fig5-symmetric",
                readers("read", "mmap", runtime, o.file_spacing, &two(think, think)),
            ),
            (
                "fig6-asymmetric",
                readers("read", "mmap", runtime, o.file_spacing, &two(none, think)),
            ),
            (
                "sec4.2.3-random-think",
                readers(
                    "read",
                    "mmap",
                    runtime,
                    o.file_spacing,
                    &two(uniform, uniform),
                ),
            ),
        ] {
            let compared = COMPARE_THINK_MS.contains(&t) && group != "sec4.2.3-random-think";
            let schedulers: &[&str] = if compared { &all } else { &pair };
            for s in schedulers {
                add(group, "", Some(t), s, &o.disk, &job);
            }
        }
    }

    // 4.2.1 and 4.2.2 again with the files at each distance of the sweep (those that fit on
    // the disk), and the random readers of 4.1 beside them: the gain that wants the files far
    // apart. mmap readers, so the distance is exactly the spacing.
    let capacity = antsched_sim::disk_model(&o.disk).map_or(0, |d| d.capacity_sectors() * 512);
    for mib in SPACING_SWEEP_MIB {
        let spacing = mib << 20;
        if spacing + FILE_SIZE > capacity {
            continue;
        }
        let job = readers("randread", "mmap", runtime, spacing, &two(none, none));
        for s in pair {
            add(
                SPACING_SWEEP,
                &format!("random/{mib}"),
                None,
                s,
                &o.disk,
                &job,
            );
        }
        for &t in &sweep {
            let think = Think { ms: t, ..none };
            for (shape, job) in [
                (
                    "symmetric",
                    readers("read", "mmap", runtime, spacing, &two(think, think)),
                ),
                (
                    "asymmetric",
                    readers("read", "mmap", runtime, spacing, &two(none, think)),
                ),
            ] {
                for s in pair {
                    add(
                        SPACING_SWEEP,
                        &format!("{shape}/{mib}"),
                        Some(t),
                        s,
                        &o.disk,
                        &job,
                    );
                }
            }
        }
    }

    // 4.2.4: the adversary issues n rapid requests besides the one after each pause, then
    // pauses just longer than the longest wait the heuristic can choose (the 15 ms think-time
    // cap). Figure 7 with the requests arriving together (see [`Burst::Together`]), and the
    // same with one request at a time, which the report sets beside it.
    let adversary = |n: u32, burst: Burst| Think {
        ms: 16.0,
        uniform: false,
        adversary: Some((n, burst)),
    };
    let adversaries = |n: u32, burst: Burst| {
        readers(
            "read",
            "mmap",
            runtime,
            o.file_spacing,
            &two(adversary(n, burst), adversary(n, burst)),
        )
    };
    for n in 0..=4u32 {
        let job = adversaries(n, Burst::Together);
        for s in pair {
            add("fig7-adversary", "", Some(f64::from(n)), s, &o.disk, &job);
        }
    }
    // n = 0 is the same workload either way.
    for n in 1..=4u32 {
        let job = adversaries(n, Burst::OneAtATime);
        for s in pair {
            add(
                "sec4.2.4-one-at-a-time",
                "",
                Some(f64::from(n)),
                s,
                &o.disk,
                &job,
            );
        }
    }
    // "The adversary application causes many timeouts to expire, and thus stresses the
    // accuracy of the timer": the paper's adversary, every one of whose waits times out.
    let job = adversaries(2, Burst::Together);
    for tick_us in [50u32, 200, 500, 1000] {
        let s = format!("{ANTICIPATORY}:timer_tick={tick_us}us");
        add(
            "sec4.2.4-timer",
            "",
            Some(f64::from(tick_us)),
            &s,
            &o.disk,
            &job,
        );
    }

    // 4.7: proportional share. Sequential mmap readers in classes weighted 1:2 and 1:1:3.
    let weighted = |ws: &[u32]| -> String {
        let names = ["p", "q", "r"];
        let rs: Vec<Reader<'_>> = ws
            .iter()
            .zip(names)
            .map(|(&w, name)| Reader {
                name,
                think: none,
                weight: Some(w),
            })
            .collect();
        readers("read", "mmap", runtime, o.file_spacing, &rs)
    };
    // Every scheduler, not only the paper's proportional ones: comparison mode.
    let job = weighted(&[100, 200]);
    for s in &all {
        add("fig12-stride-1-2", "", None, s, &o.disk, &job);
    }
    let job = weighted(&[100, 100, 300]);
    for s in &all {
        add("sec2-shares-1-1-3", "", None, s, &o.disk, &job);
    }

    // The Linux/CAS paper's Tables 1 to 3, and BFQ's shares, under every scheduler.
    let cas = [
        ("cas-table1", "", cas_table1(o)),
        ("cas-table2", "", cas_table2(o)),
        ("cas-table3", "1-instance", cas_table3(o, 1)),
        ("cas-table3", "2-instances", cas_table3(o, 2)),
    ];
    let bfq = [
        ("1:2", bfq_readers(o, runtime, &[Some(100), Some(200)])),
        (
            "1:2:10",
            bfq_readers(o, runtime, &[Some(100), Some(200), Some(1000)]),
        ),
        ("1-reader", bfq_readers(o, runtime, &[None])),
        ("2-readers", bfq_readers(o, runtime, &[None, None])),
    ];
    for s in &all {
        for (group, variant, job) in &cas {
            add(group, variant, None, s, &o.disk, job);
        }
        for (variant, job) in &bfq {
            add("bfq-shares", variant, None, s, &o.disk, job);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_planned_job_parses() {
        for quick in [true, false] {
            for r in plan(&PaperOptions {
                quick,
                ..PaperOptions::default()
            }) {
                antsched_workload::fio::parse(&r.job, &r.group)
                    .unwrap_or_else(|e| panic!("{}: {e}\n{}", r.group, r.job));
            }
        }
    }
}
