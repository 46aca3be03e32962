//! Writing result files whole or not at all.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

/// Writes `contents` to `path` through a temporary file in the same directory and a rename, so
/// that a reader never sees a half-written file and a failure leaves nothing behind.
pub fn write_atomically(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{} is not a file path", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> anyhow::Result<()> {
        let mut f = std::fs::File::create(&tmp)
            .with_context(|| format!("cannot create {}", tmp.display()))?;
        f.write_all(contents)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        f.sync_all().ok();
        std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
