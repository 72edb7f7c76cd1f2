//! Provenance at build time: the git commit of the checkout the extension is built from
//! (`-dirty` when tracked files differ from it) becomes `xlayer._core.__commit__`, so a
//! `pip install .` records it in every manifest. `XLAYER_COMMIT` in the environment
//! takes its place (builds from a source archive, which has no git history); without
//! either the value is empty and the Python side falls back to what the installer saw.

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=XLAYER_COMMIT");
    let commit = std::env::var("XLAYER_COMMIT").ok().filter(|c| !c.is_empty()).or_else(|| {
        let dir = Path::new(&std::env::var("CARGO_MANIFEST_DIR").ok()?).to_path_buf();
        let head = git(&dir, &["rev-parse", "HEAD"]).filter(|h| !h.is_empty())?;
        // Rebuild when the commit or the staged state moves.
        if let Some(git_dir) = git(&dir, &["rev-parse", "--absolute-git-dir"]) {
            for f in ["HEAD", "index"] {
                println!("cargo:rerun-if-changed={git_dir}/{f}");
            }
            if let Some(r) = git(&dir, &["symbolic-ref", "-q", "HEAD"]) {
                println!("cargo:rerun-if-changed={git_dir}/{r}");
            }
        }
        let dirty = git(&dir, &["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        Some(if dirty { format!("{head}-dirty") } else { head })
    });
    println!("cargo:rustc-env=XLAYER_COMMIT={}", commit.unwrap_or_default());
}
