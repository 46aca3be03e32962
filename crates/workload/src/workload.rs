//! From a job file to what a driver runs: files placed on the disk, and issuers (one per
//! job clone) with the regions they work in and the class they belong to.
//!
//! Placement follows docs/architecture.md ("Workloads"): a job whose `filename` is a device path addresses the disk
//! directly at `offset`; other files are laid out one after another in the order they first
//! appear, unless `antsched_disk_offset` places them; the files of one job (its `nrfiles`, its
//! clones) lie next to each other, as a file system puts the files of one directory.

use antsched_core::ClassId;

use crate::fio::{FileTarget, FioError, Job, JobFile, DIR_BLOCK};
use crate::layout::{DiskLayout, FileId, FileLayout, FreeSpace};

const SECTOR: u64 = 512;

/// Part of a file an issuer works in: bytes `[start, start + len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub file: FileId,
    pub start: u64,
    pub len: u64,
    /// A directory that the job's parent context reads before the files that follow it
    /// (`antsched_dir_files`), rather than a file for a short-lived context.
    pub directory: bool,
}

/// One job clone: a process, or with `antsched_context_per_file` a chain of short-lived ones.
#[derive(Clone, Debug)]
pub struct Issuer {
    /// fio's name for the clone: the job name, with `.N` for clones after the first.
    pub name: String,
    /// Index of its job in the job file.
    pub job: usize,
    pub class: ClassId,
    pub regions: Vec<Region>,
    /// Seed of its random offsets and think times.
    pub seed: u64,
}

/// A class (resource principal) and its weight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassSpec {
    pub id: ClassId,
    pub name: String,
    /// The job file's `cgroup_weight`; `None` where it gives none, and the scheduler treats
    /// the class as it treats any without a contract.
    pub weight: Option<u32>,
}

/// Everything the engine needs to know about the workload before it starts.
#[derive(Clone, Debug)]
pub struct Workload {
    pub layout: DiskLayout,
    pub issuers: Vec<Issuer>,
    pub classes: Vec<ClassSpec>,
}

/// A file some job needs, before placement.
struct Need {
    name: String,
    size: u64,
    job: usize,
    extents: Option<crate::fio::Extents>,
    at: Option<u64>,
}

/// splitmix64: decorrelates seeds derived from one run seed.
pub(crate) fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn clone_name(job: &Job, clone: u32) -> String {
    if clone == 0 {
        job.name.clone()
    } else {
        format!("{}.{clone}", job.name)
    }
}

/// Bytes of each file a job touches, or an error naming the job: the simulator must know
/// where a regular file ends.
fn file_bytes(jobs: &JobFile, job: &Job) -> Result<u64, FioError> {
    match job.file_size() {
        Some(0) | None => Err(jobs
            .error_at(
                job,
                "size",
                "the simulator needs the file's size: give size= or filesize= (runtime alone does not say where the file ends)",
            )),
        Some(n) => Ok(n),
    }
}

/// Lays out the job file's files and makes its issuers. Every error is the job file's: a file
/// that does not fit on a disk of `capacity_sectors`, files that overlap, a job whose `bs`
/// exceeds its region, each named at the option's line.
pub fn compile(jobs: &JobFile, capacity_sectors: u64, seed: u64) -> Result<Workload, FioError> {
    let capacity = capacity_sectors * SECTOR;
    let mut needs: Vec<Need> = Vec::new();
    // Names of the directories among them (`antsched_dir_files`).
    let mut dirs: std::collections::HashSet<String> = Default::default();
    // (job, clone) -> names of its files, in order.
    let mut files_of: Vec<Vec<Vec<String>>> = Vec::new();
    // Named files already in `needs`, by name: a scan per clone was quadratic.
    let mut need_of: std::collections::HashMap<String, usize> = Default::default();
    for (j, job) in jobs.jobs.iter().enumerate() {
        let mut per_clone = Vec::new();
        for clone in 0..job.numjobs {
            let mut names = Vec::new();
            match &job.filename {
                FileTarget::Device(_) => {}
                FileTarget::File(path) => {
                    let size = job.offset + file_bytes(jobs, job)?;
                    match need_of.get(path) {
                        Some(&i) => needs[i].size = needs[i].size.max(size),
                        None => {
                            need_of.insert(path.clone(), needs.len());
                            needs.push(Need {
                                name: path.clone(),
                                size,
                                job: j,
                                extents: job.extents,
                                at: job.disk_offset,
                            })
                        }
                    }
                    names.push(path.clone());
                }
                FileTarget::Generated => {
                    let size = job.offset + file_bytes(jobs, job)?;
                    for f in 0..job.nrfiles {
                        if let Some(n) = job.dir_files.filter(|&n| u64::from(f) % n == 0) {
                            // A directory's block lies just before its files, as ext3
                            // allocates a directory's files near the directory.
                            let name = format!("{}.{clone}.dir{}", job.name, u64::from(f) / n);
                            dirs.insert(name.clone());
                            let at = (clone == 0 && f == 0).then_some(job.disk_offset).flatten();
                            need_of.entry(name.clone()).or_insert(needs.len());
                            needs.push(Need {
                                name: name.clone(),
                                size: DIR_BLOCK,
                                job: j,
                                extents: None,
                                at,
                            });
                            names.push(name);
                        }
                        let name = format!("{}.{clone}.{f}", job.name);
                        // Only the first file of the first clone is placed explicitly; the
                        // rest follow it.
                        let at = (clone == 0 && f == 0 && job.dir_files.is_none())
                            .then_some(job.disk_offset)
                            .flatten();
                        // A named file of a later job with this name shares it, as before.
                        need_of.entry(name.clone()).or_insert(needs.len());
                        needs.push(Need {
                            name: name.clone(),
                            size,
                            job: j,
                            extents: job.extents,
                            at,
                        });
                        names.push(name);
                    }
                }
            }
            per_clone.push(names);
        }
        files_of.push(per_clone);
    }

    let mut layout = DiskLayout::default();
    // The placement rule the mount uses too (`FreeSpace`): each file where the last one
    // ended, unless `antsched_disk_offset` puts it somewhere.
    let mut space = FreeSpace::new(capacity_sectors);
    // Placed files by first sector: (end sector, index), to name the file a placement runs
    // into. They never overlap, so ordered by start they are ordered by end too, and the one
    // placed file that can overlap a new span is the last one starting before the span ends.
    // A scan of every file per file made a job of a million small files take hours (issue
    // 17).
    let mut placed: std::collections::BTreeMap<u64, (u64, usize)> = Default::default();
    for n in needs {
        let job = &jobs.jobs[n.job];
        let size = n.size.div_ceil(SECTOR) * SECTOR;
        let start = match n.at {
            Some(at) => at / SECTOR,
            None => space.cursor(),
        };
        let file = FileLayout {
            name: n.name.clone(),
            size,
            start,
            extents: n.extents,
        };
        let end = start + file.span_sectors();
        if end > capacity_sectors {
            let option = if n.at.is_some() {
                "antsched_disk_offset"
            } else {
                "size"
            };
            return Err(jobs
                .error_at(
                    job,
                    option,
                    format!(
                        "file {} would end at byte {} but the disk holds {capacity} bytes; make the files smaller or place them lower",
                        n.name,
                        end * SECTOR
                    ),
                ));
        }
        if space.reserve(start, end - start).is_err() {
            // Sectors that are not free belong to the last file placed before the span ends.
            let (other_start, other) = placed
                .range(..end)
                .next_back()
                .map_or((0, "another file"), |(s, &(_, i))| {
                    (*s, layout.files[i].name.as_str())
                });
            return Err(jobs
                .error_at(
                    job,
                    "antsched_disk_offset",
                    format!(
                        "file {} (sectors {start}..{end}) overlaps file {other} (from sector {other_start}); place it elsewhere",
                        n.name
                    ),
                ));
        }
        if file.span_sectors() > 0 {
            placed.insert(start, (end, layout.files.len()));
        }
        layout.files.push(file);
    }

    // Each file by name, the first of a name winning as `DiskLayout::find` answers; looked up
    // once per region below, where a scan per lookup was quadratic in the number of files.
    let by_name: std::collections::HashMap<String, FileId> = layout
        .files
        .iter()
        .enumerate()
        .rev()
        .map(|(i, f)| (f.name.clone(), FileId(i)))
        .collect();
    let mut device: Option<FileId> = None;
    let mut classes: Vec<ClassSpec> = Vec::new();
    // Classes by name: a scan per clone made numjobs=65536 (a class per clone) take seconds.
    let mut class_of: std::collections::HashMap<String, ClassId> = Default::default();
    let mut issuers = Vec::new();
    for (j, job) in jobs.jobs.iter().enumerate() {
        for clone in 0..job.numjobs {
            let name = clone_name(job, clone);
            let class_name = job.cgroup.clone().unwrap_or_else(|| name.clone());
            let class = match class_of.get(&class_name) {
                Some(&id) => id,
                None => {
                    let id = ClassId(classes.len() as u32);
                    class_of.insert(class_name.clone(), id);
                    classes.push(ClassSpec {
                        id,
                        name: class_name,
                        weight: job.cgroup_weight,
                    });
                    id
                }
            };
            let regions = match &job.filename {
                FileTarget::Device(path) => {
                    let file = *device.get_or_insert_with(|| {
                        layout.files.push(FileLayout {
                            name: path.clone(),
                            size: capacity,
                            start: 0,
                            extents: None,
                        });
                        FileId(layout.files.len() - 1)
                    });
                    let len = job.size.unwrap_or(capacity.saturating_sub(job.offset));
                    if job.offset + len > capacity || len == 0 {
                        let option = if job.size.is_some() { "size" } else { "offset" };
                        return Err(jobs.error_at(
                            job,
                            option,
                            format!(
                                "offset {} + size {len} is beyond the disk's {capacity} bytes",
                                job.offset
                            ),
                        ));
                    }
                    vec![Region {
                        file,
                        start: job.offset,
                        len,
                        directory: false,
                    }]
                }
                _ => files_of[j][clone as usize]
                    .iter()
                    .map(|n| {
                        let file = by_name[n.as_str()];
                        if dirs.contains(n) {
                            return Region {
                                file,
                                start: 0,
                                len: DIR_BLOCK,
                                directory: true,
                            };
                        }
                        let len = layout.file(file).size - job.offset;
                        Region {
                            file,
                            start: job.offset,
                            len: job.file_size().map_or(len, |s| s.min(len)),
                            directory: false,
                        }
                    })
                    .collect(),
            };
            if job.bs > regions.iter().map(|r| r.len).max().unwrap_or(0) {
                return Err(jobs.error_at(
                    job,
                    "bs",
                    "bs is larger than the region the job works in",
                ));
            }
            let seed = match job.randseed {
                Some(s) => mix(s ^ u64::from(clone)),
                None => mix(seed ^ mix(j as u64) ^ mix(0x1000 + u64::from(clone))),
            };
            issuers.push(Issuer {
                name,
                job: j,
                class,
                regions,
                seed,
            });
        }
    }
    Ok(Workload {
        layout,
        issuers,
        classes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::parse;

    const CAP: u64 = 70_000_000; // sectors, about 36 GB

    #[test]
    fn files_are_laid_out_in_order_of_appearance() {
        let jobs = parse(
            "[global]\nrw=read\nbs=64k\nsize=1g\n[a]\nfilename=a.dat\n[b]\nfilename=b.dat\n",
            "t.fio",
        )
        .unwrap();
        let w = compile(&jobs, CAP, 1).unwrap();
        let a = w.layout.file(w.issuers[0].regions[0].file);
        let b = w.layout.file(w.issuers[1].regions[0].file);
        assert_eq!((a.start, b.start), (0, (1 << 30) / 512));
        assert_eq!(w.classes.len(), 2);
    }

    #[test]
    fn a_shared_file_is_one_file_and_a_cgroup_one_class() {
        let jobs = parse(
            "[global]\nbs=64k\nsize=1g\ncgroup=g\ncgroup_weight=200\nfilename=x\n[a]\n[b]\nnumjobs=2\n",
            "t.fio",
        )
        .unwrap();
        let w = compile(&jobs, CAP, 1).unwrap();
        assert_eq!(w.layout.files.len(), 1);
        assert_eq!(w.issuers.len(), 3);
        assert_eq!(w.issuers[2].name, "b.1");
        assert_eq!(
            w.classes,
            vec![ClassSpec {
                id: ClassId(0),
                name: "g".into(),
                weight: Some(200)
            }]
        );
    }

    #[test]
    fn a_file_beyond_the_disk_is_an_error_at_its_size_line() {
        let jobs = parse("[a]\nfilename=a\nsize=100g\n", "t.fio").unwrap();
        let e = compile(&jobs, CAP, 1).unwrap_err().to_string();
        assert!(e.starts_with("t.fio:3:") && e.contains("disk holds"), "{e}");
    }

    #[test]
    fn overlapping_placements_are_an_error() {
        let jobs = parse(
            "[a]\nfilename=a\nsize=1g\n[b]\nfilename=b\nsize=1g\nantsched_disk_offset=512m\n",
            "t.fio",
        )
        .unwrap();
        let e = compile(&jobs, CAP, 1).unwrap_err().to_string();
        assert!(e.starts_with("t.fio:7:") && e.contains("overlaps"), "{e}");
    }

    #[test]
    fn a_device_job_addresses_the_disk_at_its_offset() {
        let jobs = parse("[a]\nfilename=/dev/sda\noffset=1g\nsize=2g\n", "t.fio").unwrap();
        let w = compile(&jobs, CAP, 1).unwrap();
        let r = w.issuers[0].regions[0];
        assert_eq!((r.start, r.len), (1 << 30, 2 << 30));
        assert_eq!(w.layout.file(r.file).start, 0);
    }

    #[test]
    fn generated_files_of_one_job_lie_together() {
        let jobs = parse(
            "[tree]\nnrfiles=4\nfilesize=16k\nfile_service_type=sequential\nantsched_context_per_file=1\n",
            "t.fio",
        )
        .unwrap();
        let w = compile(&jobs, CAP, 1).unwrap();
        let starts: Vec<u64> = w.issuers[0]
            .regions
            .iter()
            .map(|r| w.layout.file(r.file).start)
            .collect();
        assert_eq!(starts, vec![0, 32, 64, 96]);
    }

    #[test]
    fn a_directory_block_lies_before_each_directorys_files() {
        let jobs = parse(
            "[tree]\nnrfiles=4\nfilesize=16k\nfile_service_type=sequential\n\
             antsched_context_per_file=1\nantsched_dir_files=2\nantsched_disk_offset=1m\n",
            "t.fio",
        )
        .unwrap();
        let w = compile(&jobs, CAP, 1).unwrap();
        let laid: Vec<(u64, u64, bool)> = w.issuers[0]
            .regions
            .iter()
            .map(|r| (w.layout.file(r.file).start, r.len, r.directory))
            .collect();
        // 1 MiB = sector 2048: a 4 KiB directory (8 sectors), its two files, the next one.
        assert_eq!(
            laid,
            vec![
                (2048, 4096, true),
                (2056, 16384, false),
                (2088, 16384, false),
                (2120, 4096, true),
                (2128, 16384, false),
                (2160, 16384, false),
            ]
        );
    }
}
