//! The mount's security and integrity promises, each against the attack or accident that
//! broke it (issue 17, items 1 to 4): no user gets another's files by racing a create, no
//! symbolic link (through any name, after any rename) reaches outside BACKING, growth past
//! the emulated disk is refused with the file left as it was, and a file changed in BACKING
//! behind the mount is never served as a mix of old and new pages.
//!
//! Like `mount.rs` they need root and `/dev/fuse`: elsewhere they skip with a printed reason,
//! and under `ANTSCHED_REQUIRE_FUSE=1` (CI) they fail instead.

mod common;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use antsched_fuse::MountError;
use common::*;

/// The mount's capacity in bytes, as `statfs` reports it (the emulated disk's).
fn capacity(m: &Path) -> u64 {
    let c = CString::new(m.as_os_str().as_bytes()).unwrap();
    // SAFETY: an all-zero statvfs is a valid value to be overwritten; `c` is a valid path.
    let mut sv: libc::statvfs = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut sv) }, 0);
    sv.f_blocks * sv.f_frsize
}

fn errno(r: std::io::Result<()>) -> Option<i32> {
    r.err().and_then(|e| e.raw_os_error())
}

#[test]
fn growing_a_file_past_the_emulated_disk_fails_with_enospc_and_leaves_it_as_it_was() {
    if !fuse_or_skip(
        "growing_a_file_past_the_emulated_disk_fails_with_enospc_and_leaves_it_as_it_was",
        &["dd"],
    ) {
        return;
    }
    let t = TempDir::new("capacity");
    let (b, m) = t.backing_and_mountpoint();
    let data = bytes(7, 10_000);
    std::fs::write(b.join("f"), &data).unwrap();
    let cfg = fast_config(&b, &m);
    let s = serve(&cfg);
    let cap = capacity(&m);
    assert!(cap > 0);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(m.join("f"))
        .unwrap();
    // ftruncate past the disk (a sparse file in BACKING would be easy to make: the disk is
    // what must hold it).
    assert_eq!(errno(f.set_len(cap + 4096)), Some(libc::ENOSPC));
    assert_eq!(std::fs::metadata(b.join("f")).unwrap().len(), 10_000);
    // truncate(2) by name goes through setattr without a handle.
    let o = sh(&format!(
        "truncate -s {} '{}'",
        cap + 1,
        m.join("f").display()
    ));
    assert!(!o.status.success(), "truncate past the disk succeeded");
    assert_eq!(std::fs::metadata(b.join("f")).unwrap().len(), 10_000);
    // fallocate.
    // SAFETY: a valid open descriptor.
    // Past the disk by a block: nothing is allocated in BACKING.
    let r = unsafe {
        libc::fallocate(
            std::os::fd::AsRawFd::as_raw_fd(&f),
            0,
            0,
            (cap + 4096) as i64,
        )
    };
    assert_eq!(r, -1);
    assert_eq!(
        std::io::Error::last_os_error().raw_os_error(),
        Some(libc::ENOSPC)
    );
    assert_eq!(std::fs::metadata(b.join("f")).unwrap().len(), 10_000);
    // A write whose end is past the disk.
    let o = sh(&format!(
        "dd if=/dev/zero of='{}' bs=4096 count=1 seek={} conv=notrunc status=none",
        m.join("f").display(),
        cap / 4096
    ));
    assert!(!o.status.success(), "a write past the disk succeeded");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("No space left"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read(b.join("f")).unwrap(), data);
    // What fits still works: growing within the disk and shrinking back.
    f.set_len(1 << 20).unwrap();
    f.set_len(10_000).unwrap();
    drop(f);
    s.unmount();
    // And the directory mounts again, its file intact.
    let s = serve(&cfg);
    assert_eq!(std::fs::read(m.join("f")).unwrap(), data);
    s.unmount();
}

#[test]
fn a_backing_tree_that_does_not_fit_is_refused_naming_the_file_and_its_size() {
    if !fuse_or_skip(
        "a_backing_tree_that_does_not_fit_is_refused_naming_the_file_and_its_size",
        &[],
    ) {
        return;
    }
    let t = TempDir::new("nofit");
    let (b, m) = t.backing_and_mountpoint();
    std::fs::create_dir_all(b.join("sub")).unwrap();
    let cfg = fast_config(&b, &m);
    let s = serve(&cfg);
    let cap = capacity(&m);
    s.unmount();
    // Sparse: it takes no room in BACKING, but the emulated disk lays it out by its size.
    let f = std::fs::File::create(b.join("sub/huge")).unwrap();
    f.set_len(cap + 1).unwrap();
    let e = match antsched_fuse::mount(&cfg) {
        Ok(_) => panic!("a tree larger than the disk was mounted"),
        Err(e) => e,
    };
    assert!(matches!(e, MountError::Layout(_)), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("sub/huge"), "{msg}");
    assert!(msg.contains(&(cap + 1).to_string()), "{msg}");
    assert!(msg.contains("does not fit"), "{msg}");
    assert!(!is_mounted(&m));
}

/// Makes the calling thread (only) the user `uid`/`gid` with `groups`, for good: the raw
/// system calls change one thread (glibc's wrappers would change the whole test process),
/// and a thread it spawns inherits the identity.
fn become_user_in_this_thread(uid: u32, gid: u32, groups: &[libc::gid_t]) {
    // SAFETY: raw credential system calls on the calling thread, with valid arguments.
    unsafe {
        assert_eq!(
            libc::syscall(libc::SYS_setgroups, groups.len(), groups.as_ptr()),
            0
        );
        assert_eq!(libc::syscall(libc::SYS_setresgid, gid, gid, gid), 0);
        assert_eq!(libc::syscall(libc::SYS_setresuid, uid, uid, uid), 0);
    }
}

const NOBODY: u32 = 65534;

/// What one run of the ownership race did.
struct Race {
    root_files: usize,
    user_creates: u64,
    changed_owner: usize,
}

/// The attack of issue 17, item 1: in a directory of BACKING that every user may write and
/// that has no sticky bit, root's mode-600 files keep appearing; a user creates a name
/// through the mount while, in BACKING itself, swapping root's newest file with that name
/// (`renameat2(RENAME_EXCHANGE)`) as fast as it can, then renames whatever the name holds
/// away through the mount. A server that creates as root and then changes the owner by
/// name hands root's file to the user whenever the swap lands between the two.
///
/// Run in rounds of at most 10 s, each on a fresh mount of the same BACKING: the server
/// holds a descriptor per inode the kernel knows, and the swaps leave the kernel knowing
/// thousands (about 600 a second here), more than the process may open in a minute.
fn ownership_race(seconds: u64) -> Race {
    use std::time::{Duration, Instant};
    let t = TempDir::new("race");
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (b, m) = t.backing_and_mountpoint();
    std::fs::create_dir_all(b.join("pub")).unwrap();
    std::fs::set_permissions(&b, std::fs::Permissions::from_mode(0o755)).unwrap();
    // World-writable, no sticky bit: anyone may rename anything in it.
    std::fs::set_permissions(b.join("pub"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut cfg = fast_config(&b, &m);
    cfg.allow_other = true;
    // Root's files: their inodes are what must stay root's wherever they end up.
    let mut roots = std::collections::HashSet::new();
    let mut n = 0u64;
    let mut user_creates = 0;
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut round = 0;
    while Instant::now() < end {
        round += 1;
        let round_end = end.min(Instant::now() + Duration::from_secs(10));
        let s = serve(&cfg);
        user_creates += race_round(&b, &m, round, round_end, &mut n, &mut roots);
        s.unmount();
    }
    let mut changed = 0;
    let mut seen = 0;
    for e in std::fs::read_dir(b.join("pub")).unwrap() {
        let md = e.unwrap().metadata().unwrap();
        if roots.contains(&md.ino()) {
            seen += 1;
            if md.uid() != 0 {
                changed += 1;
            }
        }
    }
    assert_eq!(seen, roots.len(), "a root file went missing");
    Race {
        root_files: roots.len(),
        user_creates,
        changed_owner: changed,
    }
}

/// One round of [`ownership_race`] on the mount `m` of `b`, until `end`; returns how many
/// files the user created.
fn race_round(
    b: &Path,
    m: &Path,
    round: u32,
    end: std::time::Instant,
    n: &mut u64,
    roots: &mut std::collections::HashSet<u64>,
) -> u64 {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let stop = Arc::new(AtomicBool::new(false));
    let newest = Arc::new(AtomicU64::new(*n));
    let creates = Arc::new(AtomicU64::new(0));
    // The user, creating through the mount.
    let creator = {
        let (stop, creates) = (stop.clone(), creates.clone());
        let (m, b) = (m.to_path_buf(), b.to_path_buf());
        std::thread::spawn(move || {
            become_user_in_this_thread(NOBODY, NOBODY, &[]);
            let x = m.join("pub/x");
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let r = std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .mode(0o600)
                    .open(&x);
                if let Ok(mut f) = r {
                    creates.fetch_add(1, Ordering::Relaxed);
                    // Marks the file this create made (the handle is that file).
                    let _ = std::io::Write::write_all(&mut f, b"u");
                }
                i += 1;
                let name = format!("pub/s{round}-{i}");
                // Judged in BACKING, where the name is the truth (the kernel's idea of it
                // can be another inode after the swaps): the user's own marked file, which
                // it does not need, is removed through the mount, which lets the server
                // close its descriptor.
                if std::fs::rename(&x, m.join(&name)).is_ok()
                    && std::fs::symlink_metadata(b.join(&name)).is_ok_and(|md| md.uid() == NOBODY)
                    && std::fs::read(b.join(&name)).is_ok_and(|d| d == b"u")
                {
                    let _ = std::fs::remove_file(m.join(&name));
                }
            }
        })
    };
    // The same user, swapping root's newest file with that name in BACKING.
    let swapper = {
        let (stop, newest, b) = (stop.clone(), newest.clone(), b.to_path_buf());
        std::thread::spawn(move || {
            become_user_in_this_thread(NOBODY, NOBODY, &[]);
            let x = CString::new(b.join("pub/x").as_os_str().as_bytes()).unwrap();
            while !stop.load(Ordering::Relaxed) {
                let n = newest.load(Ordering::Relaxed);
                let r = CString::new(b.join(format!("pub/r{n}")).as_os_str().as_bytes()).unwrap();
                for _ in 0..64 {
                    // SAFETY: valid C strings.
                    unsafe {
                        libc::renameat2(
                            libc::AT_FDCWD,
                            r.as_ptr(),
                            libc::AT_FDCWD,
                            x.as_ptr(),
                            libc::RENAME_EXCHANGE,
                        )
                    };
                }
            }
        })
    };
    // Root, making mode-600 files in the shared directory.
    while std::time::Instant::now() < end {
        *n += 1;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(b.join(format!("pub/r{n}")))
            .unwrap();
        roots.insert(f.metadata().unwrap().ino());
        drop(f);
        newest.store(*n, Ordering::Relaxed);
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    stop.store(true, Ordering::Relaxed);
    creator.join().unwrap();
    swapper.join().unwrap();
    creates.load(Ordering::Relaxed)
}

fn check_ownership_race(test: &str, seconds: u64) {
    if !fuse_or_skip(test, &[]) {
        return;
    }
    let r = ownership_race(seconds);
    eprintln!(
        "ownership race, {seconds} s: {} root files, {} files created by the user through the mount, {} root files changed owner",
        r.root_files, r.user_creates, r.changed_owner
    );
    assert!(r.root_files > 0 && r.user_creates > 0);
    assert_eq!(r.changed_owner, 0, "root's files became the user's");
}

/// A few seconds (`ANTSCHED_RACE_SECONDS` to change it); the minute-long run is
/// `ownership_race_for_a_minute`, ignored by default.
#[test]
fn no_root_file_changes_owner_when_a_user_races_a_create_against_a_rename() {
    let secs = std::env::var("ANTSCHED_RACE_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    check_ownership_race(
        "no_root_file_changes_owner_when_a_user_races_a_create_against_a_rename",
        secs,
    );
}

#[test]
#[ignore = "runs for a minute: cargo test --release -p antsched-fuse --test security -- --ignored"]
fn ownership_race_for_a_minute() {
    check_ownership_race("ownership_race_for_a_minute", 60);
}

#[test]
fn files_made_through_the_mount_belong_to_their_maker_including_by_a_supplementary_group() {
    if !fuse_or_skip(
        "files_made_through_the_mount_belong_to_their_maker_including_by_a_supplementary_group",
        &[],
    ) {
        return;
    }
    let t = TempDir::new("owner");
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (b, m) = t.backing_and_mountpoint();
    std::fs::create_dir_all(b.join("team")).unwrap();
    std::fs::set_permissions(&b, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Writable only by group 4242, set-group-id: nobody may write here only through a
    // supplementary group, and new entries take the directory's group.
    let team = CString::new(b.join("team").as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::chown(team.as_ptr(), 0, 4242) }, 0);
    std::fs::set_permissions(b.join("team"), std::fs::Permissions::from_mode(0o2770)).unwrap();
    let mut cfg = fast_config(&b, &m);
    cfg.allow_other = true;
    let s = serve(&cfg);
    let mm = m.clone();
    let made = std::thread::spawn(move || {
        become_user_in_this_thread(NOBODY, NOBODY, &[4242]);
        let d = mm.join("team");
        std::fs::write(d.join("file"), b"x")?;
        std::fs::create_dir(d.join("dir"))?;
        std::os::unix::fs::symlink("file", d.join("link"))?;
        let fifo = CString::new(d.join("fifo").as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid path.
        if unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok::<(), std::io::Error>(())
    })
    .join()
    .unwrap();
    made.expect("nobody, in group 4242, makes entries in team/");
    for name in ["file", "dir", "link", "fifo"] {
        let md = std::fs::symlink_metadata(b.join("team").join(name)).unwrap();
        assert_eq!((md.uid(), md.gid()), (NOBODY, 4242), "{name}");
    }
    s.unmount();
}

/// Whether reading `path` (through the mount) yields the secret kept outside BACKING.
fn leaks(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|s| s.contains("outside secret"))
}

#[test]
fn no_symlink_reaches_outside_backing_by_any_name_depth_or_rename() {
    if !fuse_or_skip(
        "no_symlink_reaches_outside_backing_by_any_name_depth_or_rename",
        &[],
    ) {
        return;
    }
    let t = TempDir::new("escape");
    let (b, m) = t.backing_and_mountpoint();
    std::fs::create_dir_all(b.join("p1/p2/p3")).unwrap();
    let secret = t.join("secret");
    std::fs::write(&secret, b"outside secret\n").unwrap();
    std::fs::write(b.join("inside"), b"inside\n").unwrap();
    // The secret by its absolute path, and by climbing far past the root from anywhere.
    let abs = secret.clone();
    let climb = Path::new(&"../".repeat(24)).join(secret.strip_prefix("/").unwrap());
    let sym = |target: &Path, link: &Path| std::os::unix::fs::symlink(target, link).unwrap();
    // Planted in BACKING before mounting: at depth, absolute, and a hard link to a
    // symlink at another depth (which the backing file system allows).
    sym(&climb, &b.join("p1/p2/p3/planted"));
    sym(&abs, &b.join("p1/planted-abs"));
    sym(&climb, &b.join("p1/p2/p3/deep"));
    std::fs::hard_link(b.join("p1/p2/p3/deep"), b.join("shallow")).unwrap();
    sym(&climb, &b.join("moved"));
    let s = serve(&fast_config(&b, &m));
    for p in ["p1/p2/p3/planted", "p1/planted-abs"] {
        assert!(!leaks(&m.join(p)), "{p}");
    }
    // A change of owner acts on the link itself, never on what it names.
    std::os::unix::fs::lchown(m.join("p1/planted-abs"), Some(NOBODY), Some(NOBODY)).unwrap();
    let l = std::fs::symlink_metadata(b.join("p1/planted-abs")).unwrap();
    assert_eq!(l.uid(), NOBODY);
    assert_eq!(std::fs::metadata(&secret).unwrap().uid(), 0);
    // The hard link, deep name first: the server's descriptor is the deep one, and the
    // kernel then follows the same inode from the root.
    assert!(!leaks(&m.join("p1/p2/p3/deep")));
    assert!(!leaks(&m.join("shallow")), "through a planted hard link");
    // Renamed deeper in BACKING while the kernel still has it at the root (its dentry is
    // good for a second): followed from the root, a target confined for the new depth
    // would climb out.
    assert!(!leaks(&m.join("moved")));
    std::fs::create_dir_all(b.join("x1/x2/x3/x4/x5/x6/x7/x8")).unwrap();
    std::fs::rename(b.join("moved"), b.join("x1/x2/x3/x4/x5/x6/x7/x8/moved")).unwrap();
    assert!(
        !leaks(&m.join("moved")),
        "through a rename behind the mount"
    );
    // Made through the mount: relative at depth, absolute.
    let d6 = m.join("d1/d2/d3/d4/d5/d6");
    std::fs::create_dir_all(&d6).unwrap();
    sym(&climb, &d6.join("L"));
    sym(&abs, &m.join("A"));
    assert!(!leaks(&d6.join("L")));
    assert!(!leaks(&m.join("A")));
    // The hard link (`ln -P`): refused, since a link is confined for one directory.
    let e = std::fs::hard_link(d6.join("L"), m.join("L2")).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EPERM), "{e}");
    assert!(!leaks(&m.join("L2")));
    // Renamed through the mount to another depth, the link itself or a directory above it.
    std::fs::rename(d6.join("L"), m.join("R")).unwrap();
    assert!(!leaks(&m.join("R")));
    sym(&climb, &d6.join("L3"));
    assert!(!leaks(&d6.join("L3")));
    std::fs::rename(m.join("d1/d2/d3"), m.join("e3")).unwrap();
    assert!(!leaks(&m.join("e3/d4/d5/d6/L3")));
    // Links inside the tree still work, at depth and after a rename.
    sym(Path::new("../../../../inside"), &m.join("e3/d4/d5/d6/in"));
    assert_eq!(
        std::fs::read_to_string(m.join("e3/d4/d5/d6/in")).unwrap(),
        "inside\n"
    );
    std::fs::rename(m.join("e3/d4/d5/d6/in"), m.join("e3/d4/d5/d6/in2")).unwrap();
    assert_eq!(
        std::fs::read_to_string(m.join("e3/d4/d5/d6/in2")).unwrap(),
        "inside\n"
    );
    // The host's own /etc/passwd, the example, never shows either.
    let passwd = Path::new(&"../".repeat(10)).join("etc/passwd");
    let p = m.join("e3/d4/d5/d6/P");
    sym(&passwd, &p);
    let host = std::fs::read_to_string("/etc/passwd").unwrap();
    assert_ne!(std::fs::read_to_string(&p).ok(), Some(host));
    s.unmount();
}

/// A backing file of 1 MiB of `bytes(1)` with an old modification time (so that any change
/// has a new one whatever the clock's tick), and a mount with the page cache and a 64 KiB
/// read-ahead window (so that reading the first 128 KiB caches only the start).
fn cached_mount(t: &TempDir) -> (std::path::PathBuf, std::path::PathBuf, Served) {
    let (b, m) = t.backing_and_mountpoint();
    std::fs::write(b.join("f"), bytes(1, 1 << 20)).unwrap();
    sh_ok(&format!("touch -d @1000000000 '{}'", b.join("f").display()));
    let mut cfg = fast_config(&b, &m);
    cfg.cache = antsched_fuse::CacheMode::PageCache {
        readahead_kib: Some(64),
    };
    let s = serve(&cfg);
    (b, m, s)
}

fn read_start(f: &mut std::fs::File) {
    use std::io::Read;
    let mut head = vec![0u8; 128 << 10];
    f.read_exact(&mut head).unwrap();
    assert_eq!(head, bytes(1, 1 << 20)[..128 << 10]);
}

/// Rewrites the backing file in place with `bytes(2)`, as another program would (not
/// through the mount): same size, new contents.
fn rewrite_behind(b: &Path) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(b.join("f"))
        .unwrap();
    f.write_all(&bytes(2, 1 << 20)).unwrap();
}

/// No 4 KiB page of `got` holds the contents `f` had before [`rewrite_behind`].
fn assert_no_old_pages(got: &[u8]) {
    let old = got
        .chunks(4096)
        .zip(bytes(1, 1 << 20).chunks(4096))
        .filter(|(a, b)| a == b)
        .count();
    assert_eq!(old, 0, "{old} of 256 pages were the old contents");
}

#[test]
fn a_file_changed_in_backing_is_read_whole_and_new_at_its_next_open() {
    if !fuse_or_skip(
        "a_file_changed_in_backing_is_read_whole_and_new_at_its_next_open",
        &["touch"],
    ) {
        return;
    }
    let t = TempDir::new("stale-open");
    let (b, m, s) = cached_mount(&t);
    let mut f = std::fs::File::open(m.join("f")).unwrap();
    read_start(&mut f);
    drop(f);
    rewrite_behind(&b);
    // Before: the start from the kernel's cache (old), the rest from BACKING (new).
    let got = std::fs::read(m.join("f")).unwrap();
    assert_no_old_pages(&got);
    assert_eq!(got, bytes(2, 1 << 20));
    s.unmount();
}

#[test]
fn a_file_changed_in_backing_while_open_is_not_served_from_stale_pages_after_the_attribute_ttl() {
    if !fuse_or_skip(
        "a_file_changed_in_backing_while_open_is_not_served_from_stale_pages_after_the_attribute_ttl",
        &["touch"],
    ) {
        return;
    }
    let t = TempDir::new("stale-open-file");
    let (b, m, s) = cached_mount(&t);
    let mut f = std::fs::File::open(m.join("f")).unwrap();
    read_start(&mut f);
    rewrite_behind(&b);
    // The kernel refreshes a file's attributes a TTL (1 s) after it last did; the wait is
    // for that, not a measurement.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let mut got = vec![0u8; 1 << 20];
    use std::os::unix::fs::FileExt;
    f.read_exact_at(&mut got, 0).unwrap();
    assert_no_old_pages(&got);
    assert_eq!(got, bytes(2, 1 << 20));
    drop(f);
    s.unmount();
}
