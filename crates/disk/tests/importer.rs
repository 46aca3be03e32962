//! The DiskSim importer on broken copies of the shipped files: every error names the file, the
//! line and the parameter, and says what would be valid.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use antsched_disk::{load_disksim, DeviceModel, DiskSimError};

fn data_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/disksim");
    assert!(
        dir.join("cheetah4LP.parv").is_file(),
        "DiskSim data not found at {}; these tests need it",
        dir.display()
    );
    dir
}

/// A private copy of the Cheetah 4LP files, removed when dropped.
struct Copy(PathBuf);

impl Drop for Copy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl std::ops::Deref for Copy {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

/// A private copy of the Cheetah 4LP files, with `edit` applied to one of them.
fn broken_copy(file: &str, edit: impl FnOnce(String) -> String) -> Copy {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "antsched-disk-importer-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut edit = Some(edit);
    for ext in ["parv", "diskspecs", "model", "seek"] {
        let name = format!("cheetah4LP.{ext}");
        let mut text = std::fs::read_to_string(data_dir().join(&name)).unwrap();
        if name == file {
            text = (edit.take().unwrap())(text);
        }
        std::fs::write(dir.join(&name), text).unwrap();
    }
    std::fs::write(dir.join("statdefs"), "").unwrap();
    Copy(dir)
}

fn load(dir: &Path) -> Result<antsched_disk::HddModel, DiskSimError> {
    load_disksim(dir.join("cheetah4LP.parv"))
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn the_shipped_files_load() {
    for d in ["cheetah4LP", "atlas10k", "barracuda", "ibm18es"] {
        let m = load_disksim(data_dir().join(format!("{d}.parv"))).unwrap();
        assert!(m.capacity_sectors() > 4_000_000, "{d}");
    }
    // The older drives: smaller, and with the features the first four do not use.
    for d in [
        "atlas_III",
        "dec_rz26",
        "hp_c2247a",
        "hp_c2490a",
        "hp_c3323a",
        "st41601n",
    ] {
        let m = load_disksim(data_dir().join(format!("{d}.parv"))).unwrap();
        assert!(m.capacity_sectors() > 1_000_000, "{d}");
    }
}

/// The Ruemmler-Wilkes seek equation replaces the extracted table; a malformed one is named
/// with its file and line.
#[test]
fn hpl_seek_equation_is_read_and_checked() {
    let hpl = "Seek type = hplplus10,\n      HPL seek equation values = [ 300, 3.81, 0.33, 7.75, 0.0059, -1 ],\n      First ten seek times = [ 2.9, 3.7, 3.8, 4.0, 4.3, 4.6, 4.5, 4.6, 4.8, 5.0 ],";
    let dir = broken_copy("cheetah4LP.model", |t| {
        t.replacen("Seek type = extracted,", hpl, 1)
    });
    let m = load(&dir).unwrap();
    // One cylinder: the first of the ten; 100: 3.81 + 0.33 * 10; 1000: 7.75 + 5.9.
    assert!((m.params().seek.time_ms(1) - 2.9).abs() < 1e-9);
    assert!((m.params().seek.time_ms(100) - 7.11).abs() < 1e-9);
    assert!((m.params().seek.time_ms(1000) - 13.65).abs() < 1e-9);
    let dir = broken_copy("cheetah4LP.model", |t| {
        t.replacen("Seek type = extracted,", &hpl.replace(", -1 ]", " ]"), 1)
    });
    let text = std::fs::read_to_string(dir.join("cheetah4LP.model")).unwrap();
    let e = load(&dir).unwrap_err().to_string();
    let line = line_of(&text, "HPL seek equation values");
    assert!(
        e.contains(&format!("cheetah4LP.model:{line}"))
            && e.contains("HPL seek equation values")
            && e.contains("6 numbers"),
        "{e}"
    );
}

#[test]
fn unknown_parameter_is_named_with_file_and_line() {
    let dir = broken_copy("cheetah4LP.diskspecs", |t| {
        t.replace("Print stats = 1,", "Print stats = 1,\n   Turbo mode = 1,")
    });
    let text = std::fs::read_to_string(dir.join("cheetah4LP.diskspecs")).unwrap();
    let e = load(&dir).unwrap_err().to_string();
    let want = format!("cheetah4LP.diskspecs:{}", line_of(&text, "Turbo mode"));
    assert!(e.contains(&want), "{e}");
    assert!(
        e.contains("`Turbo mode`") && e.contains("valid parameters"),
        "{e}"
    );
}

#[test]
fn bad_number_is_named_with_file_line_and_parameter() {
    let dir = broken_copy("cheetah4LP.model", |t| {
        t.replace(
            "Rotation speed (in rpms) = 10033",
            "Rotation speed (in rpms) = fast",
        )
    });
    let text = std::fs::read_to_string(dir.join("cheetah4LP.model")).unwrap();
    let e = load(&dir).unwrap_err().to_string();
    assert!(
        e.contains(&format!(
            "cheetah4LP.model:{}",
            line_of(&text, "Rotation speed")
        )),
        "{e}"
    );
    assert!(
        e.contains("Rotation speed (in rpms)") && e.contains("expected a number"),
        "{e}"
    );
}

#[test]
fn out_of_range_value_says_what_is_valid() {
    let dir = broken_copy("cheetah4LP.diskspecs", |t| {
        t.replace("Fast write level = 1", "Fast write level = 7")
    });
    let e = load(&dir).unwrap_err().to_string();
    assert!(
        e.contains("Fast write level") && e.contains("from 0 to 2"),
        "{e}"
    );
}

#[test]
fn truncated_file_is_a_syntax_error_with_its_line() {
    let dir = broken_copy("cheetah4LP.model", |t| t[..t.len() / 2].to_string());
    let e = load(&dir).unwrap_err();
    assert!(matches!(e, DiskSimError::Syntax { .. }), "{e}");
    let e = e.to_string();
    assert!(
        e.contains("cheetah4LP.model:") && e.contains("not closed"),
        "{e}"
    );
}

#[test]
fn missing_sourced_file_names_it_and_where_it_was_sourced() {
    let dir = broken_copy("cheetah4LP.parv", |t| t);
    std::fs::remove_file(dir.join("cheetah4LP.model")).unwrap();
    let e = load(&dir).unwrap_err().to_string();
    assert!(
        e.contains("cheetah4LP.model")
            && e.contains("sourced at")
            && e.contains("cheetah4LP.diskspecs:2"),
        "{e}"
    );
}

#[test]
fn missing_seek_file_is_reported() {
    let dir = broken_copy("cheetah4LP.parv", |t| t);
    std::fs::remove_file(dir.join("cheetah4LP.seek")).unwrap();
    let e = load(&dir).unwrap_err().to_string();
    assert!(
        e.contains("cheetah4LP.seek") && e.contains("sourced at"),
        "{e}"
    );
}

#[test]
fn bad_seek_table_line_is_reported() {
    let dir = broken_copy("cheetah4LP.seek", |t| {
        t.replace("100,\t2.70500", "100,\tslow")
    });
    let text = std::fs::read_to_string(dir.join("cheetah4LP.seek")).unwrap();
    let e = load(&dir).unwrap_err().to_string();
    assert!(
        e.contains(&format!("cheetah4LP.seek:{}", line_of(&text, "slow"))),
        "{e}"
    );
}

#[test]
fn unsupported_values_are_refused_with_the_supported_ones() {
    let cases = [
        (
            "cheetah4LP.model",
            "Seek type = extracted",
            "Seek type = 3pt",
            "extracted, hpl or hplplus10",
        ),
        (
            "cheetah4LP.model",
            "Percent error in rpms = 0.000000",
            "Percent error in rpms = 0.5",
            "0",
        ),
        (
            "cheetah4LP.model",
            "Sparing scheme used = 8",
            "Sparing scheme used = 4",
            "per cylinder range",
        ),
        (
            "cheetah4LP.diskspecs",
            "Immediate buffer read = 0",
            "Immediate buffer read = 2",
            "supported: 0 or 1",
        ),
        (
            "cheetah4LP.diskspecs",
            "Disconnect write if seek = 0",
            "Disconnect write if seek = 1",
            "supported: 0",
        ),
        (
            "cheetah4LP.parv",
            "Arbitration time = 0.0,",
            "Arbitration time = 0.1,",
            "supported: 0",
        ),
    ];
    for (file, from, to, supported) in cases {
        let dir = broken_copy(file, |t| {
            assert!(t.contains(from), "{from}");
            t.replacen(from, to, 1)
        });
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let e = load(&dir).unwrap_err();
        assert!(matches!(e, DiskSimError::Unsupported { .. }), "{to}: {e}");
        let e = e.to_string();
        let key = to.split(" = ").next().unwrap();
        assert!(e.contains(&format!("{file}:{}", line_of(&text, to))), "{e}");
        assert!(e.contains(key) && e.contains(supported), "{e}");
    }
}

#[test]
fn unknown_block_type_is_refused() {
    let dir = broken_copy("cheetah4LP.parv", |t| {
        t + "\ndisksim_cachemem C { Cache size = 1 }\n"
    });
    let e = load(&dir).unwrap_err().to_string();
    assert!(
        e.contains("disksim_cachemem") && e.contains("valid top-level blocks"),
        "{e}"
    );
}

/// A seek, overhead or switch time of 1e308 once made the model loop forever, and 1e12 to
/// 1e30 silently saturated its nanosecond arithmetic (18446744073.71 s per request).
#[test]
fn absurd_times_are_refused_before_the_model_runs() {
    for huge in ["1e308", "1e12", "10001"] {
        let dir = broken_copy("cheetah4LP.seek", |t| {
            t.replace("100,\t2.70500", &format!("100,\t{huge}"))
        });
        let e = load(&dir).unwrap_err().to_string();
        assert!(e.contains("from 0 to 10000"), "{huge}: {e}");

        let dir = broken_copy("cheetah4LP.diskspecs", |t| {
            let at = t.find("Read completion overhead").unwrap();
            let end = at + t[at..].find(',').unwrap();
            format!("{}Read completion overhead = {huge}{}", &t[..at], &t[end..])
        });
        let e = load(&dir).unwrap_err().to_string();
        assert!(e.contains("Read completion overhead"), "{huge}: {e}");
        assert!(e.contains("from 0 to 10000"), "{huge}: {e}");
    }
    // Within the bound, a slow (fictional) drive still loads and answers in finite time.
    let dir = broken_copy("cheetah4LP.seek", |t| {
        t.replace("100,\t2.70500", "100,\t9999")
    });
    let mut m = load(&dir).unwrap();
    let c = m.submit(&antsched_disk::DiskRequest::read(1_000_000, 8), 0);
    assert!(c.service.total() < 30_000_000_000, "{c:?}");
}

/// Found by the mutation run (bench/mutate.sh): `Seek distances measured: 4294967295` made the
/// importer reserve room for that many points before reading one, and the process aborted
/// asking for 64 GB. The count is now only checked against the lines that follow.
#[test]
fn a_seek_count_past_the_file_is_refused_without_reserving_for_it() {
    let dir = broken_copy("cheetah4LP.seek", |t| {
        let header = t
            .lines()
            .find(|l| l.starts_with("Seek distances measured:"))
            .unwrap();
        t.replace(header, "Seek distances measured: 4294967295")
    });
    let e = load(&dir).unwrap_err().to_string();
    assert!(
        e.contains("cheetah4LP.seek") && e.contains("announces 4294967295"),
        "{e}"
    );
}
