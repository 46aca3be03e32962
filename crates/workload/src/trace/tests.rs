use super::*;
use rand::{RngExt, SeedableRng};

const SAMPLES: [(&str, &str, Format); 8] = [
    (
        "perf-dd-ext4-loop.txt",
        include_str!("../../../../examples/traces/perf-dd-ext4-loop.txt"),
        Format::Perf,
    ),
    (
        "perf-find-cat-dd-ext4-loop.txt",
        include_str!("../../../../examples/traces/perf-find-cat-dd-ext4-loop.txt"),
        Format::Perf,
    ),
    (
        "blkparse.txt",
        include_str!("../../../../examples/traces/blkparse.txt"),
        Format::Blkparse,
    ),
    (
        "msr.csv",
        include_str!("../../../../examples/traces/msr.csv"),
        Format::Msr,
    ),
    (
        "spc.csv",
        include_str!("../../../../examples/traces/spc.csv"),
        Format::Spc,
    ),
    (
        "fio-v2.iolog",
        include_str!("../../../../examples/traces/fio-v2.iolog"),
        Format::FioLog,
    ),
    (
        "fio-v3.iolog",
        include_str!("../../../../examples/traces/fio-v3.iolog"),
        Format::FioLog,
    ),
    (
        "disksim.txt",
        include_str!("../../../../examples/traces/disksim.txt"),
        Format::DiskSim,
    ),
];

fn read(text: &str, format: Option<Format>) -> Result<(Format, Vec<Record>), TraceError> {
    let r = TraceReader::open(text.as_bytes(), "t", format)?;
    let f = r.format();
    Ok((f, r.collect::<Result<Vec<_>, _>>()?))
}

#[test]
fn every_sample_is_detected_and_parses() {
    for (name, text, format) in SAMPLES {
        let (f, records) = read(text, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(f, format, "{name}");
        assert!(!records.is_empty(), "{name}");
        assert!(records.iter().all(|r| r.bytes > 0), "{name}");
    }
}

#[test]
fn perf_pairs_issues_with_completions_in_issue_order() {
    let (_, r) = read(SAMPLES[0].1, None).unwrap();
    // Reads and writes of the loop device (7,0); flushes are no data.
    assert_eq!(r.len(), 88); // 91 issues less 3 flushes
    assert!(r.iter().all(|r| r.device == 7 << 20));
    assert!(r.windows(2).all(|w| w[0].time <= w[1].time));
    let first = r[0];
    assert_eq!(first.pid, Some(24967));
    assert_eq!(
        (first.sector, first.bytes, first.op),
        (32770, 512 * 512, Op::Read)
    );
    assert_eq!(first.time, 14_951_940_002_000);
    assert_eq!(first.completed, Some(14_951_940_839_000));
    assert!(r.iter().all(|r| r.completed.is_some()));
    assert!(r.iter().any(|r| r.op == Op::Write));
}

#[test]
fn blkparse_takes_queue_events_and_skips_the_summary() {
    let (_, r) = read(SAMPLES[2].1, None).unwrap();
    assert_eq!(r.len(), 20);
    assert_eq!(r[0].completed, Some(837_000));
    assert_eq!(r[0].pid, Some(24967));
}

#[test]
fn units_of_the_csv_and_disksim_formats() {
    let (_, msr) = read(SAMPLES[3].1, None).unwrap();
    assert_eq!(msr.len(), 10);
    assert_eq!(msr[0].time, 128_166_372_003_061_629 * 100);
    assert_eq!(msr[0].completed, Some(msr[0].time + 337_300));
    assert_eq!((msr[0].sector, msr[0].bytes), (3_154_059_264 / 512, 4096));
    assert_eq!(msr[5].device, 1);
    let (_, spc) = read(SAMPLES[4].1, None).unwrap();
    assert_eq!(
        (spc[2].time, spc[2].sector, spc[2].bytes),
        (26_214_000, 303_574, 3584)
    );
    assert_eq!(spc[5].op, Op::Read);
    let (_, ds) = read(SAMPLES[7].1, None).unwrap();
    assert_eq!((ds[1].time, ds[1].op), (2_417_530, Op::Read));
    assert_eq!((ds[3].op, ds[3].bytes), (Op::Write, 4096));
}

#[test]
fn fio_logs_of_both_versions_give_the_same_requests() {
    let (_, v2) = read(SAMPLES[5].1, None).unwrap();
    let (_, v3) = read(SAMPLES[6].1, None).unwrap();
    assert_eq!(v3.len(), 64);
    let place = |r: &Vec<Record>| {
        r.iter()
            .map(|r| (r.sector, r.bytes, r.op))
            .collect::<Vec<_>>()
    };
    assert_eq!(place(&v2), place(&v3));
    assert_eq!(v3[0].time, 126_000);
    assert_eq!((v3[0].sector, v3[0].bytes), (196_608 / 512, 65_536));
    // Version 2's clock is its waits: each of at least 100 us.
    assert_eq!(v2[0].time, 126_000);
}

#[test]
fn a_malformed_line_names_the_file_the_line_and_what_was_expected() {
    let e = read("0,1,512,r,0.5\n0,2,512,x,0.6\n", Some(Format::Spc))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "t:2: spc trace: expected an opcode `r` or `w` (field 4), found \"x\""
    );
    let e = read("fio version 3 iolog\n12 /f read 0\n", None)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("t:2: fio trace: expected `FILE ACTION OFFSET LENGTH`"),
        "{e}"
    );
    let e = read("hello\nworld\n", None).unwrap_err().to_string();
    assert!(e.contains("cannot tell the trace's format"), "{e}");
    assert!(Format::from_name("nope").is_err());
    assert_eq!(Format::from_name("DiskSim").unwrap(), Format::DiskSim);
}

#[test]
fn decimals_convert_without_rounding() {
    assert_eq!(
        decimal_ns("14951.940002", 1_000_000_000),
        Some(14_951_940_002_000)
    );
    assert_eq!(decimal_ns("2.41753", 1_000_000), Some(2_417_530));
    assert_eq!(decimal_ns(".5", 1_000), Some(500));
    assert_eq!(decimal_ns("-1", 1), None);
    assert_eq!(decimal_ns("1e3", 1), None);
    assert_eq!(decimal_ns(".", 1), None);
    assert_eq!(decimal_ns("99999999999999999999", 1), None);
    assert_eq!(decimal_ns("7.", 1_000), Some(7_000));
    // Digits below a nanosecond are dropped, but must be digits.
    assert_eq!(
        decimal_ns("1.0000000000000000009", 1_000_000_000),
        Some(1_000_000_000)
    );
    assert_eq!(decimal_ns("1.000000000000000000x", 1_000_000_000), None);
    assert_eq!(decimal_ns("1.5 ", 1), None);
    assert_eq!(decimal_ns("", 1), None);
    assert_eq!(decimal_ns("18446744073709551615", 1), Some(u64::MAX));
    assert_eq!(decimal_ns("1844674407370955161.6", 10), None);
}

#[test]
fn comma_fields_are_trimmed_and_counted_as_split_would() {
    for line in [
        "0,20941264,8192,W,0.551706",
        " a , b ,c",
        "a,,b,",
        "",
        ",",
        "a,b,c,d,e,f,g",
    ] {
        let (f, n) = comma_fields::<3>(line);
        let split: Vec<&str> = line.split(',').map(str::trim).collect();
        assert_eq!(n, split.len(), "{line:?}");
        for (i, field) in f.iter().enumerate() {
            let want = split.get(i).copied().unwrap_or("");
            assert_eq!(*field, want, "{line:?} field {i}");
        }
    }
}

#[test]
fn a_line_without_end_is_an_error_not_a_whole_file_in_memory() {
    let text = "x".repeat(MAX_LINE * 3);
    let e = read(&text, Some(Format::DiskSim)).unwrap_err().to_string();
    assert!(e.contains("longer than"), "{e}");
}

/// Mutated samples (cut short anywhere, random bytes flipped, lines swapped for garbage)
/// give records or an error, never a panic, whether the format is detected or forced.
#[test]
fn mutated_samples_never_panic() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(19);
    for (_, text, format) in SAMPLES {
        let bytes = text.as_bytes();
        for round in 0..300 {
            let mut m = bytes.to_vec();
            match round % 3 {
                0 => m.truncate(rng.random_range(0..=bytes.len())),
                1 => {
                    for _ in 0..rng.random_range(1..8) {
                        let i = rng.random_range(0..m.len());
                        m[i] = rng.random();
                    }
                }
                _ => {
                    let i = rng.random_range(0..m.len());
                    let n = rng.random_range(0..64).min(m.len() - i);
                    for b in &mut m[i..i + n] {
                        *b = rng.random_range(0..128);
                    }
                }
            }
            for forced in [None, Some(format)] {
                if let Ok(r) = TraceReader::open(&m[..], "m", forced) {
                    for rec in r {
                        if rec.is_err() {
                            break;
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn a_trace_read_on_a_thread_of_its_own_gives_the_same_records() {
    use background::{BATCH, BATCHES};
    use std::io::Cursor;
    let on_thread = |text: String, format| {
        let reader = TraceReader::open(Cursor::new(text.into_bytes()), "t", format).unwrap();
        Background::spawn(reader).unwrap()
    };
    for (name, text, format) in SAMPLES {
        let direct: Vec<Record> = TraceReader::open(text.as_bytes(), name, Some(format))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let background: Vec<Record> = on_thread(text.to_string(), Some(format))
            .map(Result::unwrap)
            .collect();
        assert_eq!(direct, background, "{name}");
    }
    // Longer than a batch, with an error on its last line: every record, then the error.
    let n = BATCH * 2 + 5;
    let mut text: String = (0..n)
        .map(|i| format!("0,{},4096,r,{i}.5\n", i * 8))
        .collect();
    text += "0,1,4096,x,1\n";
    let records: Vec<_> = on_thread(text, None).collect();
    assert_eq!(records.len(), n + 1);
    assert!(records[..n].iter().all(Result::is_ok));
    let e = records[n].as_ref().unwrap_err().to_string();
    assert!(e.starts_with(&format!("t:{}: spc trace", n + 1)), "{e}");
    // A replay that stops early drops the reader while it waits on a full channel: the drop
    // ends its thread and returns.
    let text: String = (0..BATCH * (BATCHES + 3))
        .map(|i| format!("0,{},4096,r,{i}\n", i * 8))
        .collect();
    let mut records = on_thread(text, None);
    assert!(records.next().is_some_and(|r| r.is_ok()));
    drop(records);
}

#[test]
fn a_record_is_placed_by_the_lba_scale_and_refused_past_the_disk_with_its_line() {
    let (_, records) = read("1.0 0 100 8 1\n", Some(Format::DiskSim)).unwrap();
    let r = &records[0];
    let unscaled = timing::ReplayOptions::default();
    assert_eq!(unscaled.place(r, 1_000, "t").unwrap(), (100, 8));
    let half = timing::ReplayOptions {
        lba_scale: Some(0.5),
        ..unscaled
    };
    assert_eq!(half.place(r, 1_000, "t").unwrap(), (50, 8));
    // Sectors 100..108 end past a disk of 107 sectors, but not past one of 108.
    assert_eq!(unscaled.place(r, 108, "t").unwrap(), (100, 8));
    match unscaled.place(r, 107, "t") {
        Err(TraceError::BeyondDisk {
            file,
            line: 1,
            sector: 100,
            bytes: 4096,
            capacity: 107,
        }) => assert_eq!(file, "t"),
        other => panic!("{other:?}"),
    }
}
