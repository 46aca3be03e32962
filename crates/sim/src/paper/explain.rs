//! Why our figure differs from the paper's, where it does by more than 15%.
//!
//! Each explanation was written after looking at the runs in question (their throughput,
//! utilization and anticipation counts in `results.json`, and sweeps of the free parameters).
//! They are about the model, what the paper leaves unsaid (where its files lay), or the
//! published figure being a bound rather than a measurement. The defaults they describe are
//! those of [`super::PaperOptions`]; with other options the report still prints them, and
//! they may not apply.

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
];

/// The explanation for `quantity` of experiment `id`.
pub fn explain(id: &str, quantity: &str, quick: bool) -> String {
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
