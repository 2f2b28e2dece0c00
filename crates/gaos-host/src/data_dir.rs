//! The data directory of one `gaos serve`: an exclusive lock, so one host
//! owns it, and owner-only file modes, so its secrets and every seat's hidden
//! state are readable by the host's user only.
//!
//! The lock is an advisory `flock` on `DIR/lock`, taken before anything in
//! the directory is read: a second host on the same directory stops before
//! it rehydrates a single session from a database another process is
//! writing. The lock file holds the owner's pid, so the refusal can name
//! it; the kernel drops the lock when the process ends, however it ends, so
//! a stale file from a crash never blocks a restart.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The name of the lock file in the data directory.
pub const LOCK_FILE: &str = "lock";

/// The held lock of a data directory; released when dropped (or when the
/// process exits).
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
    path: PathBuf,
}

impl DataDirLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Create the data directory (mode 0700) if needed, tighten an existing
/// one to 0700, and take its lock. Refuses with a message naming the other
/// host's pid when another process holds it.
pub fn open_and_lock(dir: &Path) -> Result<DataDirLock, String> {
    create_private_dir(dir).map_err(|e| format!("cannot create the data directory {}: {e}", dir.display()))?;
    let path = dir.join(LOCK_FILE);
    let mut file =
        private_file(&path, false).map_err(|e| format!("cannot open the lock file {}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let who = match holder.trim().parse::<u32>() {
                Ok(pid) => format!("process {pid}"),
                Err(_) => "another process".to_owned(),
            };
            return Err(format!(
                "the data directory {} is in use by {who} (another gaos serve holds {}); stop it first or use another --data directory",
                dir.display(),
                path.display()
            ));
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(format!("cannot lock {}: {e}", path.display())),
    }
    let write_pid = |file: &mut File| -> std::io::Result<()> {
        file.set_len(0)?;
        file.seek(SeekFrom::Start(0))?;
        writeln!(file, "{}", std::process::id())?;
        file.sync_all()
    };
    write_pid(&mut file).map_err(|e| format!("cannot write the lock file {}: {e}", path.display()))?;
    Ok(DataDirLock { _file: file, path })
}

/// Make sure `path` exists with mode 0600 before a library (SQLite) opens
/// it, and tighten it if it exists. SQLite creates its `-wal` and `-shm`
/// files with the mode of the database file, so they follow.
pub fn prepare_private_file(path: &Path) -> std::io::Result<()> {
    private_file(path, false).map(drop)
}

/// Tighten `path` to 0600 if it exists (files a library created earlier,
/// e.g. a WAL from before this rule).
pub fn tighten_if_present(path: &Path) -> std::io::Result<()> {
    match std::fs::metadata(path) {
        Ok(_) => set_mode(path, 0o600),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if !dir.exists() {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    }
    set_mode(dir, 0o700)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(unix)]
fn private_file(path: &Path, truncate: bool) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = OpenOptions::new().read(true).write(true).create(true).truncate(truncate).mode(0o600).open(path)?;
    set_mode(path, 0o600)?;
    Ok(file)
}

#[cfg(not(unix))]
fn private_file(path: &Path, truncate: bool) -> std::io::Result<File> {
    OpenOptions::new().read(true).write(true).create(true).truncate(truncate).open(path)
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_directory_is_refused_with_the_holders_pid() {
        let dir = std::env::temp_dir().join(format!("gaos-data-dir-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let held = open_and_lock(&dir).expect("the first lock");
        let refused = open_and_lock(&dir).expect_err("a second lock is refused");
        assert!(refused.contains(&format!("process {}", std::process::id())), "{refused}");
        drop(held);
        let again = open_and_lock(&dir).expect("free again once released");
        assert_eq!(again.path(), dir.join(LOCK_FILE));
        drop(again);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
