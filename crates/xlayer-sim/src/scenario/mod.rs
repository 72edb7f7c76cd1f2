//! Scenarios: parse (TOML or JSON) into the schema, check what serde cannot, and build
//! the world. Every error a scenario author can cause names the field path.

mod builder;
pub mod radio;
mod schema;
pub mod units;
mod validate;

pub use builder::build;
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
        let de = &mut serde_json::Deserializer::from_str(text);
        let s: Scenario = serde_path_to_error::deserialize(de).map_err(from_serde)?;
        s.validate()?;
        Ok(s)
    }

    pub fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
        let de = toml::Deserializer::new(text);
        let s: Scenario = serde_path_to_error::deserialize(de).map_err(from_serde)?;
        s.validate()?;
        Ok(s)
    }

    /// Canonical JSON of the resolved scenario (defaults filled in).
    pub fn canonical_json(&self) -> String {
        serde_json::to_string(self).expect("scenarios always serialize")
    }

    /// First 16 hex digits of the SHA-256 of the canonical JSON.
    pub fn hash(&self) -> String {
        let digest = Sha256::digest(self.canonical_json().as_bytes());
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// JSON Schema of the format.
    pub fn json_schema() -> String {
        serde_json::to_string_pretty(&schemars::schema_for!(Scenario)).expect("schema serializes")
    }
}
