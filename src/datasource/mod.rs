//! Data sources: Parquet files and directories, in-memory batches, generated data sets.

pub mod demo;
pub mod partitions;
pub mod owned;
pub mod parquet;
pub mod provider;
pub mod pushed_filter;
pub mod spark_parquet;
pub mod range;
pub mod text;
pub mod tpch;
pub mod write;

/// `kiln.files.allowedRoots`: refuses `path` (a table's files, a LOCATION, a write's target)
/// unless it lies inside one of `roots`, before any file is touched. Symbolic links and `..`
/// are resolved first, so neither leads out; no roots: every path is allowed.
pub fn check_allowed(roots: &[String], path: &std::path::Path) -> crate::error::Result<()> {
    if roots.is_empty() {
        return Ok(());
    }
    let resolved = resolve(path);
    if roots.iter().any(|r| resolved.starts_with(resolve(std::path::Path::new(r)))) {
        return Ok(());
    }
    Err(crate::error::KilnError::analysis(
        "PATH_NOT_ALLOWED",
        format!("`{}` is outside the folders kiln.files.allowedRoots allows ({}).", path.display(), roots.join(", ")),
    ))
}

/// `path` absolute, its longest existing prefix canonical (links followed), the rest normalized.
fn resolve(path: &std::path::Path) -> std::path::PathBuf {
    use std::path::Component;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = absolute.clone();
    let mut rest = vec![];
    while !existing.exists() {
        match (existing.file_name().map(|n| n.to_os_string()), existing.parent().map(|p| p.to_path_buf())) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent;
            }
            _ => break,
        }
    }
    let mut out = existing.canonicalize().unwrap_or(existing);
    for part in rest.iter().rev() {
        out.push(part);
    }
    // `..` in the part that does not exist yet.
    let mut normal = std::path::PathBuf::new();
    for c in out.components() {
        match c {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    normal
}
