//! Why our figure differs from the paper's, where it does by more than 15%.
//!
//! Each explanation was written after looking at the runs in question (their throughput,
//! utilization and anticipation counts in `results.json`, and sweeps of the free parameters).
//! They are about the model, what the paper leaves unsaid (where its files lay), or the
//! published figure being a bound rather than a measurement. The defaults they describe are
//! those of [`super::PaperOptions`]; with other options the report still prints them, and
//! they may not apply.

/// Why one `find -exec cat` alone is slower than the paper's.
const ONE_FIND: &str =
    "one find alone is bound by starting processes, not by the disk: each 16 KiB \
     file costs the 1 ms from one cat to the next plus about 0.4 ms to read it from the drive's \
     read-ahead cache (11 MB/s, less the directory reads); the paper's machine read its tree at \
     15.5 MB/s, under a millisecond per file of a Linux tree";

/// (experiment, start of the quantity, explanation).
const KNOWN: &[(&str, &str, &str)] = &[
    (
        "fig4-access-patterns",
        "alter/mmap gain",
        "anticipation reaches what the paper says it does, half the disk bandwidth (about 10.4 MB/s \
         here); the ratio is larger because our baseline alternates at the seek-bound rate of the \
         placement (files 6 GB apart, about 4.5 MB/s) against the paper's 5 MB/s",
    ),
    (
        "fig4-access-patterns",
        "random/",
        "the gain within random files depends on how much farther apart the two files are than the \
         requests within one; the paper does not say where its files lay. With the files 6 GB apart \
         (a switch costs the disk's average seek, as section 2 describes) the gain is close to the \
         paper's; with `--file-spacing 1024` it is about 6%",
    ),
    (
        "fig13-fast-disk",
        "seq/read bandwidth",
        "the Cheetah model streams at its media rate (about 40 MB/s on the outer zone, Seagate's \
         figure); the paper's system delivered 55% more than its IDE disk, about 32 MB/s, a limit of \
         its file system or I/O path that we do not model",
    ),
    (
        "fig13-fast-disk",
        "seq/mmap gain vs",
        "each gain is within 15% of the paper's (4.9 against 5.5 on this disk, 4.6 against 4 on the \
         7,200 rpm one), and the 15,000 rpm gain is the larger, as in the paper; their ratio compounds \
         the two differences",
    ),
    (
        "fig13-fast-disk",
        "seq/mmap gain (",
        "the baseline alternates between the files at 8.4 MB/s on this model; the paper's disk \
         delivered \"nearly the same low throughput\" as the IDE disk, which needs seeks longer \
         than a third of this smaller disk",
    ),
    (
        "fig5-symmetric",
        "gain at t=8ms",
        "the heuristic stops waiting once the median think time exceeds the benefit, the calibrated \
         cost of a switch between the files. The calibrated curve prices a switch with the files 6 GB \
         apart as a seek plus the average rotational wait, more than the paper's 8 ms, so the gain \
         ends later (see the row below and the sweep); with `--file-spacing 1024` the switch is \
         cheaper and it ends earlier",
    ),
    (
        "fig5-symmetric",
        "t where the gain ends",
        "see \"gain at t=8ms\": the end follows the calibrated cost of a switch between the files",
    ),
    (
        "fig5-symmetric",
        "gain at t=14ms",
        "past 12 ms each reader thinks longer than a switch takes, the disk idles between \
         requests, and the drive's own read-ahead fills its cache for both readers: the baseline's \
         alternating requests become cache hits (its utilization drops to 50%). Anticipation no \
         longer waits at a completion, but when the other reader's request arrives while the last \
         reader is still thinking, the elapsed time lowers the cost side of the rule and it waits: \
         the calibrated curve prices the switch as a seek and cannot see that the drive has the \
         data cached. The exact estimator would; the paper's curve could not either",
    ),
    (
        "fig6-asymmetric",
        "t of the",
        "the dip ends where the heuristic stops waiting for the slow reader: when its median think \
         time exceeds the benefit of waiting, which grows with the calibrated cost of a switch \
         between the files (see fig5-symmetric)",
    ),
    (
        "fig7-adversary",
        "as/original at n=",
        "our baseline is busy 94-99% of the time at 5-6.5 MB/s: the two adversaries' bursts overlap \
         and it seeks on nearly every request, so anticipation, which serves each burst without seeks \
         and loses one timeout per burst, comes out ahead. For the paper's baseline to beat \
         anticipation by 20%, its readers' bursts must have rarely overlapped, which the simulator's \
         exact timing does not reproduce. The issue's bound holds: anticipation never costs more \
         than 30% here",
    ),
    (
        "sec4.2.4-timer",
        "largest difference",
        "the paper's figure is an upper bound (\"only 10%\"); ours lies within it",
    ),
    (
        "fig12-stride-1-2",
        "stride-relaxed MB/s",
        "without anticipation the readers alternate at the seek-bound rate of this placement, the \
         same 4.5 MB/s as aged-sptf's; the release measured 5.4 MB/s on its own file layout",
    ),
    (
        "fig12-stride-1-2",
        "as-stride-combo MB/s",
        "with sequential readers the combination heuristic waits for each class while it is within \
         tau of the smallest clock, so each class gets long runs and the disk streams at the full \
         bandwidth of anticipated sequential readers (the same as as-aged-sptf). The release's 14.5 \
         MB/s came from a configuration (PROP_RELAX_THRESH=100, unit unrecorded) and workload its \
         README does not fully give",
    ),
    // The Linux/CAS paper's tables (see the report's modelling section).
    (
        "cas-table1",
        "linux-as reader time",
        "the disk model streams at 21 MB/s against the paper's Maxtor's 35 or so: the 200 MB file alone \
         takes 10 s to read here, about 6 s there. Under anticipation the writer costs the reader \
         about 3.5 s here, 4 s there",
    ),
    (
        "cas-table1",
        "cas reader time",
        "as for linux-as (the disk is slower); CAS and LAS take the same time here because Table 1 \
         has no cooperating processes: CAS's rules only differ from LAS's for requests of another \
         process near the head, and the writer's are neither synchronous nor near. The paper's 9 \
         against 10 s is within its own run-to-run spread",
    ),
    (
        "cas-table1",
        "deadline disk MB/s",
        "the disk model's bandwidth is about 60% of the paper's disk's, and under deadline the disk \
         seeks between the reader's and the writer's files, 6 GB apart, after every read batch",
    ),
    (
        "cas-table1",
        "linux-as disk MB/s",
        "the disk model's bandwidth is about 60% of the paper's disk's (21 against about 35 MB/s)",
    ),
    (
        "cas-table1",
        "cas disk MB/s",
        "the disk model's bandwidth is about 60% of the paper's disk's (21 against about 35 MB/s)",
    ),
    (
        "cas-table1",
        "deadline / linux-as",
        "an order of magnitude in both. Deadline's time is close to the paper's (it is set by \
         `read_expire` and the write batches, not the disk's speed), while LAS's is the reader's \
         transfer time, longer on the slower disk model: the ratio shrinks by the disks' ratio",
    ),
    (
        "cas-table1",
        "linux-as / deadline disk MB/s",
        "the gain is larger on the slower disk model: deadline's seeks between the files cost the \
         same on both disks, the transfers they interrupt take longer on the paper's",
    ),
    (
        "cas-table2",
        "deadline find time",
        "our tree is 512 files in 32 directories, about 1/33 of the paper's Linux tree: seconds scale \
         with the tree (the rows of ratios compare the schedulers). Per file, deadline pays two seeks \
         between the big file and the tree, 6 GB apart: 37 ms, against the paper's 17",
    ),
    (
        "cas-table2",
        "linux-as find time",
        "our tree is about 1/33 of the paper's: seconds scale with it. Per file LAS makes the find \
         wait for its read to expire, 260 ms here and 280 ms in the paper (4,767 s over about 17,000 \
         files)",
    ),
    (
        "cas-table2",
        "cas find time",
        "our tree is about 1/33 of the paper's: seconds scale with it. CAS's time is about a quarter \
         of a second per directory (see the modelling section), 8 s for our 32 directories and about \
         250 s for the paper's tree of about 1,000",
    ),
    (
        "cas-table2",
        "linux-as MB/s",
        "the disk model's bandwidth is about 60% of the paper's disk's; as in the paper, LAS gives \
         the streaming reader nearly all of it",
    ),
    (
        "cas-table2",
        "cas MB/s",
        "the disk model's bandwidth is about 60% of the paper's disk's; as in the paper, CAS's \
         throughput is close to LAS's (within 10% here, 3% there)",
    ),
    (
        "cas-table2",
        "linux-as / deadline",
        "deadline is 7 to 16 times ahead of LAS, but costs more per file here: two seeks of 6 GB \
         (the suite's file spacing) between the big file and the tree, where the paper's 17 ms per \
         file suggests its tree lay nearer. LAS's cost per file (a read expiry) is \
         the same in both",
    ),
    (
        "cas-table2",
        "deadline / cas",
        "CAS beats deadline in both; by more here, because deadline's per-file cost (two seeks \
         across 6 GB) is higher on our placement than on the paper's, while CAS's per-directory \
         cost is set by the read expiry, the same in both",
    ),
    (
        "cas-table3",
        "deadline MB/s, 1 instance",
        ONE_FIND,
    ),
    ("cas-table3", "linux-as MB/s, 1 instance", ONE_FIND),
    ("cas-table3", "cas MB/s, 1 instance", ONE_FIND),
    (
        "cas-table3",
        "deadline MB/s, 2 instances",
        "a seek storm in both: deadline serves the other tree's waiting read after every file. The \
         MB/s are lower than the paper's because one find alone is slower here (see the 1 instance \
         row) and each switch crosses 6 GB, the disk's average seek",
    ),
    (
        "cas-table3",
        "deadline 2 instances",
        "a seek storm in both: for twice the work the paper's deadline took 7 times as long, ours 10 \
         times. Our single find is bound by process creation, so the seeks the storm adds are a \
         larger part of the time",
    ),
    (
        "cas-table3",
        "linux-as MB/s, 2 instances",
        "a seek storm in both (6 times the single find's time here, 7 in the paper). LAS loses less \
         than deadline here: early in the run, while its exit probability is still below 50%, it \
         waits for each tree's next file, and the drive uses that idle time to read ahead on both \
         trees into its segmented cache (8 segments of 240 KB), which then serves many of the \
         alternating reads without a seek",
    ),
    (
        "cas-table3",
        "linux-as 2 instances",
        "a seek storm in both (6 times the single find's time here, 7 in the paper); LAS loses less \
         than deadline here because the drive's segmented read-ahead cache serves many of its \
         alternating reads (see the 2 instances row)",
    ),
    (
        "cas-table3",
        "cas MB/s, 2 instances",
        "CAS keeps 78% of the single find's throughput here and 75% in the paper (the ratio row); \
         the MB/s are lower because one find alone is slower here (see the 1 instance row)",
    ),
];

/// The explanation for `quantity` of experiment `id`.
pub fn explain(id: &str, quantity: &str, quick: bool) -> String {
    if quick && id.starts_with("cas-") {
        // The explanations below describe the full-size tables.
        return "quick mode: the Linux/CAS tables at a quarter of their size (a 50 MiB file, trees \
                of 128 files in 8 directories, runs capped at 100 s), where a few directories and \
                the start of each run weigh more (run without --quick)"
            .to_string();
    }
    if let Some((_, _, why)) = KNOWN
        .iter()
        .find(|(e, q, _)| *e == id && quantity.starts_with(q))
    {
        return (*why).to_string();
    }
    if quick {
        "quick mode: 4 s runs and sparse sweeps; shares and sweep points are coarse at this length \
         (run without --quick)"
            .to_string()
    } else {
        "not explained: this difference is new, investigate it".to_string()
    }
}
