//! The git commit a build comes from, for `gaos --version`: shared by the
//! build script and the test that checks it (`tests/version.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The commit of the checkout around `dir`, or `None` outside a git
/// checkout (a source tarball) or without a `git` command.
pub struct Commit {
    /// The full object id of `HEAD`.
    pub id: String,
    /// The commit date, `YYYY-MM-DD`.
    pub date: String,
    /// The files whose change means `HEAD` moved (the build script reruns
    /// when one changes): `HEAD` itself, the branch it names, packed refs.
    pub watch: Vec<PathBuf>,
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

/// What `git` says about `HEAD` of the checkout that holds `dir`.
pub fn describe(dir: &Path) -> Option<Commit> {
    let id = git(dir, &["rev-parse", "--verify", "HEAD^{commit}"])?;
    let date = git(dir, &["log", "-1", "--format=%cs", "HEAD"]).unwrap_or_default();
    // Paths are relative to `dir` unless git answers absolute ones (worktrees).
    let path = |p: String| dir.join(p);
    let mut watch = vec![git(dir, &["rev-parse", "--git-path", "HEAD"]).map(path)];
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        watch.push(git(dir, &["rev-parse", "--git-path", &branch]).map(path));
    }
    watch.push(git(dir, &["rev-parse", "--git-path", "packed-refs"]).map(path));
    // A missing file would make cargo rerun the script on every build.
    let watch = watch.into_iter().flatten().filter(|p| p.exists()).collect();
    Some(Commit { id, date, watch })
}

/// The words `gaos --version` puts after the version number.
pub fn version_note(commit: Option<&Commit>, override_id: Option<&str>) -> String {
    match (override_id, commit) {
        (Some(id), _) => format!("commit {id}"),
        (None, Some(commit)) if commit.date.is_empty() => format!("commit {}", commit.id),
        (None, Some(commit)) => format!("commit {}, {}", commit.id, commit.date),
        (None, None) => "commit unknown: built outside a git checkout".to_owned(),
    }
}
