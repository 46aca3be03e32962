//! Shared by the integration tests: skipping where io_uring is missing (or failing, in CI).

#![allow(dead_code)]

use std::path::PathBuf;

/// `true` if io_uring works. Otherwise prints why and returns `false` so the test can skip,
/// unless `ANTSCHED_REQUIRE_FUSE=1` (set by CI for every privileged test), which makes it a
/// failure.
pub fn io_uring_or_skip(test: &str) -> bool {
    match antsched_io::io_uring_available() {
        Ok(()) => true,
        Err(why) => {
            if std::env::var("ANTSCHED_REQUIRE_FUSE").as_deref() == Ok("1") {
                panic!("{test}: {why}, and ANTSCHED_REQUIRE_FUSE=1 requires it");
            }
            eprintln!("skipping {test}: {why}");
            false
        }
    }
}

/// A fresh directory under the system's temporary directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(what: &str) -> TempDir {
        let p = std::env::temp_dir().join(
            format!(
                "antsched-io-{what}-{}-{:?}",
                std::process::id(),
                std::time::Instant::now()
            )
            .replace([' ', '{', '}', ':', ','], ""),
        );
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
