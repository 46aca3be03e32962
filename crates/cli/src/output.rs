//! Writing result files whole or not at all.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

/// Checks, before any work, that `path` can be written: its directory exists and takes a new
/// file, and `path` is not a directory. A run of minutes (or a mount of hours) must not end
/// by failing to write its results.
pub fn check_writable(path: &Path) -> anyhow::Result<()> {
    let dir = parent(path);
    if path.is_dir() {
        anyhow::bail!("cannot write {}: it is a directory", path.display());
    }
    if !dir.is_dir() {
        anyhow::bail!(
            "cannot write {}: the directory {} does not exist",
            path.display(),
            dir.display()
        );
    }
    let probe = temporary(dir, path)?;
    std::fs::File::create(&probe).with_context(|| format!("cannot write {}", path.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// The temporary name `path` is written under before its rename: hidden, in the same directory.
fn temporary(dir: &Path, path: &Path) -> anyhow::Result<std::path::PathBuf> {
    let name = path
        .file_name()
        .with_context(|| format!("{} is not a file path", path.display()))?;
    Ok(dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    )))
}

/// Writes `contents` to `path` through a temporary file in the same directory and a rename, so
/// that a reader never sees a half-written file and a failure leaves nothing behind.
pub fn write_atomically(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    let tmp = temporary(parent(path), path)?;
    let result = (|| -> anyhow::Result<()> {
        let mut f = std::fs::File::create(&tmp)
            .with_context(|| format!("cannot write {}", path.display()))?;
        f.write_all(contents)
            .with_context(|| format!("cannot write {}", path.display()))?;
        f.sync_all().ok();
        std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
