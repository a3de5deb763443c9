//! Tables kiln owns. Every folder kiln writes as a table carries a marker file listing the data
//! files kiln put there; it is staged with them and renamed into place with them, so a table
//! folder never exists without it. A folder without the marker is not a kiln table: the
//! warehouse does not show it, and kiln never deletes, replaces or appends to it. Deleting a
//! table deletes the files its marker lists (then the marker, the statistics and the folders
//! left empty), never through a symbolic link, never a file it did not write.

use std::path::{Component, Path, PathBuf};

use crate::error::{KilnError, Result};

/// The marker's name: hidden (readers skip `_` names), in the table's top folder.
pub const MARKER: &str = "_kiln_table";

/// The marker's first line, naming what the file is.
const HEADER: &str = "kiln table: the data files kiln wrote here, one per line";

/// What a table path holds before a write.
#[derive(Debug)]
pub enum Existing {
    /// Nothing: no file or folder there.
    Nothing,
    /// An empty folder.
    Empty,
    /// A table kiln wrote: its data files, relative to the folder.
    Table(Vec<PathBuf>),
    /// Anything else: why kiln leaves it alone.
    Foreign(String),
}

/// The file a managed table's statistics (`catalog::statistics`) live in, inside its folder.
pub const STATS_FILE: &str = "_kiln_stats";

/// The kiln files of a table folder besides the data files.
fn is_kiln_file(name: &str) -> bool {
    name == MARKER || name.strip_prefix(STATS_FILE).is_some_and(|rest| rest.is_empty() || rest == ".tmp")
}

/// True when `folder` is a real folder (not a link) holding kiln's marker.
pub fn is_table(folder: &Path) -> bool {
    std::fs::symlink_metadata(folder).is_ok_and(|m| m.is_dir()) && std::fs::symlink_metadata(folder.join(MARKER)).is_ok_and(|m| m.is_file())
}

/// Writes the marker listing `files` into `folder` (a staging folder, before its commit).
pub fn write_marker(folder: &Path, files: &[PathBuf]) -> Result<()> {
    let mut text = format!("{HEADER}\n");
    for f in files {
        text.push_str(&f.to_string_lossy());
        text.push('\n');
    }
    let path = folder.join(MARKER);
    std::fs::write(&path, text).map_err(|e| KilnError::io(path.display().to_string(), format!("cannot write the table marker: {e}")))
}

/// The data files `folder`'s marker lists; None without a readable marker. A listed path that
/// would leave the folder (absolute, `..`) makes the marker unreadable.
pub fn listed_files(folder: &Path) -> Option<Vec<PathBuf>> {
    if !is_table(folder) {
        return None;
    }
    let text = std::fs::read_to_string(folder.join(MARKER)).ok()?;
    let mut lines = text.lines();
    if lines.next()? != HEADER {
        return None;
    }
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let p = PathBuf::from(l);
            p.components().all(|c| matches!(c, Component::Normal(_))).then_some(p)
        })
        .collect()
}

/// What `path` holds, checked entry by entry: a table kiln wrote only when every file in it is
/// one its marker lists (or kiln's own), with no symbolic link anywhere.
pub fn existing(path: &Path) -> Result<Existing> {
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Existing::Nothing),
        Err(e) => return Err(KilnError::io(path.display().to_string(), format!("cannot read the table's path: {e}"))),
        Ok(m) => m,
    };
    if meta.file_type().is_symlink() {
        return Ok(Existing::Foreign("it is a symbolic link".into()));
    }
    if !meta.is_dir() {
        return Ok(Existing::Foreign("it is a file, not a folder kiln wrote".into()));
    }
    let list = |dir: &Path| -> Result<Vec<std::fs::DirEntry>> {
        let entries = std::fs::read_dir(dir).map_err(|e| KilnError::io(dir.display().to_string(), format!("cannot list the folder: {e}")))?;
        Ok(entries.filter_map(|e| e.ok()).collect())
    };
    if list(path)?.is_empty() {
        return Ok(Existing::Empty);
    }
    let Some(files) = listed_files(path) else {
        return Ok(Existing::Foreign(format!("it holds files kiln did not write (no {MARKER} marker)")));
    };
    let listed: std::collections::HashSet<&Path> = files.iter().map(PathBuf::as_path).collect();
    let folders: std::collections::HashSet<&Path> = files.iter().flat_map(|f| f.ancestors().skip(1)).collect();
    let mut dirs = vec![PathBuf::new()];
    while let Some(rel) = dirs.pop() {
        for entry in list(&path.join(&rel))? {
            let name = entry.file_name();
            let sub = rel.join(&name);
            let kind = entry.file_type().map_err(|e| KilnError::io(entry.path().display().to_string(), e.to_string()))?;
            let ours = if kind.is_symlink() {
                false
            } else if kind.is_dir() {
                dirs.push(sub.clone());
                folders.contains(sub.as_path())
            } else {
                listed.contains(sub.as_path()) || (rel.as_os_str().is_empty() && is_kiln_file(&name.to_string_lossy()))
            };
            if !ours {
                return Ok(Existing::Foreign(format!("`{}` in it is not a file kiln wrote", sub.display())));
            }
        }
    }
    Ok(Existing::Table(files))
}

/// Deletes the table kiln wrote at `folder`: the files its marker lists, its statistics, the
/// marker, then each folder left empty. Fails, deleting nothing, when `folder` is not a kiln
/// table or a listed file is reached through a symbolic link or is not a plain file; anything
/// else in the folder stays (and so does the folder).
pub fn delete_table(folder: &Path) -> Result<()> {
    let refuse = |why: String| Err(KilnError::io(folder.display().to_string(), format!("kiln deletes only the tables it wrote: {why}")));
    match std::fs::symlink_metadata(folder) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Ok(m) if m.file_type().is_symlink() => return refuse("the table's folder is a symbolic link".into()),
        _ => {}
    }
    let Some(files) = listed_files(folder) else {
        return refuse(format!("the folder has no {MARKER} marker"));
    };
    let root = folder.canonicalize().map_err(|e| KilnError::io(folder.display().to_string(), e.to_string()))?;
    let mut doomed = vec![];
    for rel in &files {
        let path = folder.join(rel);
        match std::fs::symlink_metadata(&path) {
            Err(_) => continue,
            Ok(m) if !m.is_file() => return refuse(format!("`{}` is not a plain file", rel.display())),
            Ok(_) => {}
        }
        // A folder on the way replaced by a link would lead the deletion elsewhere.
        let inside = path.parent().and_then(|p| p.canonicalize().ok()).is_some_and(|p| p.starts_with(&root));
        if !inside {
            return refuse(format!("`{}` leads outside the table's folder", rel.display()));
        }
        doomed.push(path);
    }
    let io = |p: &Path, e: std::io::Error| KilnError::io(p.display().to_string(), format!("cannot delete a file of the table: {e}"));
    for path in &doomed {
        std::fs::remove_file(path).map_err(|e| io(path, e))?;
    }
    let stats = STATS_FILE;
    for name in [stats.to_string(), format!("{stats}.tmp"), MARKER.to_string()] {
        let path = folder.join(name);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            std::fs::remove_file(&path).map_err(|e| io(&path, e))?;
        }
    }
    // Deepest folders first; one still holding something stays.
    let mut folders: Vec<PathBuf> = files.iter().flat_map(|f| f.ancestors().skip(1).filter(|a| !a.as_os_str().is_empty()).map(Path::to_path_buf)).collect();
    folders.sort_by_key(|f| std::cmp::Reverse(f.components().count()));
    folders.dedup();
    for rel in folders.iter().map(|f| folder.join(f)).chain([folder.to_path_buf()]) {
        if std::fs::symlink_metadata(&rel).is_ok_and(|m| m.is_dir()) {
            let _ = std::fs::remove_dir(&rel);
        }
    }
    Ok(())
}

/// Deletes what a write moved aside: a table kiln wrote, or an empty folder.
pub fn delete_replaced(old: &Path) -> Result<()> {
    if is_table(old) {
        return delete_table(old);
    }
    std::fs::remove_dir(old).map_err(|e| KilnError::io(old.display().to_string(), format!("the new table is in place, but the old folder was left: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(dir: &Path, files: &[&str]) -> PathBuf {
        let t = dir.join("t");
        for f in files {
            let p = t.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "x").unwrap();
        }
        write_marker(&t, &files.iter().map(PathBuf::from).collect::<Vec<_>>()).unwrap();
        t
    }

    #[test]
    fn a_table_is_what_its_marker_lists_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let t = table(dir.path(), &["a=1/part-0.parquet", "a=2/part-0.parquet"]);
        assert!(matches!(existing(&t).unwrap(), Existing::Table(f) if f.len() == 2));
        std::fs::write(t.join("a=1/notes.txt"), "mine").unwrap();
        assert!(matches!(existing(&t).unwrap(), Existing::Foreign(why) if why.contains("notes.txt")));
        // Deleting leaves the stranger's file and its folder.
        delete_table(&t).unwrap();
        assert!(t.join("a=1/notes.txt").exists());
        assert!(!t.join("a=2").exists() && !t.join(MARKER).exists());
        assert!(matches!(existing(&dir.path().join("none")).unwrap(), Existing::Nothing));
    }

    #[test]
    fn markers_that_lead_out_or_links_on_the_way_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("part-0.parquet"), "precious").unwrap();
        let t = dir.path().join("t");
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(t.join(MARKER), format!("{HEADER}\n../outside/part-0.parquet\n")).unwrap();
        assert!(delete_table(&t).is_err());
        #[cfg(unix)]
        {
            std::fs::write(t.join(MARKER), format!("{HEADER}\np=1/part-0.parquet\n")).unwrap();
            std::os::unix::fs::symlink(&outside, t.join("p=1")).unwrap();
            let err = delete_table(&t).unwrap_err().to_string();
            assert!(err.contains("outside the table's folder"), "{err}");
            assert!(matches!(existing(&t).unwrap(), Existing::Foreign(_)));
        }
        assert!(outside.join("part-0.parquet").exists());
    }
}
