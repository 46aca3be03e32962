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
    let (b, m) = (t.join("backing"), t.join("mnt"));
    std::fs::create_dir_all(&m).unwrap();
    std::fs::create_dir_all(&b).unwrap();
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
    let (b, m) = (t.join("backing"), t.join("mnt"));
    std::fs::create_dir_all(&m).unwrap();
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
