//! Scenarios: parse (TOML or JSON) into the schema, check what serde cannot, and build
//! the world. Every error a scenario author can cause names the field path.

mod budget;
mod builder;
pub mod dist;
mod expand;
pub mod pgmcc;
pub mod radio;
mod registry;
pub mod rudp;
mod schema;
pub mod tfmcc;
mod topology;
pub mod units;
mod validate;

pub use budget::DEFAULT_MEMORY_BUDGET_BYTES;
pub use builder::build;
pub use dist::{Cdf, SizeDist, SizeSpec, TimeDist, TimeSpec};
pub use schema::*;

use sha2::{Digest, Sha256};

/// A scenario the author got wrong; `path` is like `link[2].rate`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() || self.path == "." {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}
impl std::error::Error for ScenarioError {}

impl ScenarioError {
    pub fn at(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError { path: path.into(), message: message.into() }
    }
}

fn from_serde<E: std::fmt::Display>(e: serde_path_to_error::Error<E>) -> ScenarioError {
    let path = e.path().to_string();
    // serde's own messages already say what was expected ("unknown field `x`, expected
    // one of ..."); keep them as they are.
    ScenarioError::at(path, e.into_inner().to_string())
}

impl Scenario {
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        Self::from_json_in(text, None)
    }

    pub fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
        Self::from_toml_in(text, None)
    }

    /// Parse JSON whose relative file paths are relative to `base_dir`.
    pub fn from_json_in(text: &str, base_dir: Option<&std::path::Path>) -> Result<Scenario, ScenarioError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        Self::resolved(serde_path_to_error::deserialize(de).map_err(from_serde)?, base_dir)
    }

    /// Parse TOML whose relative file paths are relative to `base_dir`.
    pub fn from_toml_in(text: &str, base_dir: Option<&std::path::Path>) -> Result<Scenario, ScenarioError> {
        let de = toml::Deserializer::parse(text).map_err(|e| ScenarioError::at("", e.to_string()))?;
        Self::resolved(serde_path_to_error::deserialize(de).map_err(from_serde)?, base_dir)
    }

    fn resolved(mut s: Scenario, base_dir: Option<&std::path::Path>) -> Result<Scenario, ScenarioError> {
        s.base_dir = base_dir.map(|d| d.to_path_buf());
        // Parsing grew these by doubling; the scenario is kept for the run.
        s.flows.shrink_to_fit();
        s.links.shrink_to_fit();
        s.nodes.shrink_to_fit();
        s.validate()?;
        Ok(s)
    }

    /// Canonical JSON of the resolved scenario (defaults filled in).
    pub fn canonical_json(&self) -> String {
        serde_json::to_string(self).expect("scenarios always serialize")
    }

    /// First 16 hex digits of the SHA-256 of the canonical JSON, followed (if the
    /// scenario uses link traces) by the SHA-256 of each trace file's contents, so the
    /// hash changes when a trace file does.
    pub fn hash(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.canonical_json().as_bytes());
        for path in self.trace_paths() {
            match self.load_trace(path) {
                Ok(t) => h.update(format!("\ntrace {}", t.sha256_hex()).as_bytes()),
                Err(e) => h.update(format!("\ntrace error {e}").as_bytes()),
            }
        }
        for path in self.flows.iter().filter_map(|f| f.file_size()?.file()) {
            match std::fs::read(self.resolve(path)) {
                Ok(bytes) => h.update(format!("\ncdf {:x}", Sha256::digest(bytes)).as_bytes()),
                Err(e) => h.update(format!("\ncdf error {e}").as_bytes()),
            }
        }
        h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// Trace files named by links, in link order (a→b before b→a).
    fn trace_paths(&self) -> impl Iterator<Item = &String> {
        self.links.iter().filter_map(|l| l.trace.as_ref()).flat_map(|t| t.a_to_b.iter().chain(&t.b_to_a))
    }

    /// Read a trace file named in the scenario (relative to `base_dir`).
    pub fn load_trace(&self, path: &str) -> Result<crate::link::trace::Trace, String> {
        crate::link::trace::Trace::load(self.resolve(path))
    }

    /// Read an empirical CDF file named in the scenario (relative to `base_dir`).
    pub fn load_cdf(&self, path: &str) -> Result<Cdf, String> {
        let full = self.resolve(path);
        let text = std::fs::read_to_string(&full).map_err(|e| format!("cannot read {}: {e}", full.display()))?;
        Cdf::parse(&text).map_err(|e| format!("{}: {e}", full.display()))
    }

    /// A path named in the scenario, relative paths resolved against `base_dir`.
    fn resolve(&self, path: &str) -> std::path::PathBuf {
        let p = std::path::Path::new(path);
        match &self.base_dir {
            Some(dir) if p.is_relative() => dir.join(p),
            _ => p.to_path_buf(),
        }
    }

    /// Read a scenario file (TOML, or JSON if it ends in `.json`); relative paths in it
    /// are resolved against its folder.
    pub fn from_file(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ScenarioError::at("", format!("cannot read {}: {e}", path.display())))?;
        let dir = path.parent();
        if path.extension().is_some_and(|x| x == "json") {
            Self::from_json_in(&text, dir)
        } else {
            Self::from_toml_in(&text, dir)
        }
    }

    /// JSON Schema of the format.
    pub fn json_schema() -> String {
        serde_json::to_string_pretty(&schemars::schema_for!(Scenario)).expect("schema serializes")
    }
}
