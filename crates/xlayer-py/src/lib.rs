//! Python bindings: thin wrappers over `xlayer-sim`. Errors are mapped in `errors`,
//! results are converted in `report`.

mod errors;
mod report;

use errors::{finish_error, scenario_error, ScenarioError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use xlayer_sim::channel::fading::JakesPath;
use xlayer_sim::{Scenario, SimDur, SimTime, World};

/// One run of a scenario: build it, advance it (optionally in steps, for progress
/// display), finish it once.
#[pyclass(module = "xlayer._core")]
struct Simulation {
    world: Option<World>,
    duration_s: f64,
    scenario_hash: String,
    wall_time_s: f64,
}

/// Parse a scenario; relative file paths in it (link traces) are relative to
/// `base_dir` (the scenario file's folder), else to the working folder.
fn parse(scenario_json: &str, base_dir: Option<&std::path::Path>) -> PyResult<Scenario> {
    Scenario::from_json_in(scenario_json, base_dir).map_err(scenario_error)
}

impl Simulation {
    fn world(&self) -> PyResult<&World> {
        self.world.as_ref().ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("this simulation has finished"))
    }
}

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (scenario_json, seed, run, pcap_dir=None, base_dir=None))]
    fn new(
        scenario_json: &str,
        seed: u64,
        run: u64,
        pcap_dir: Option<PathBuf>,
        base_dir: Option<PathBuf>,
    ) -> PyResult<Self> {
        let s = parse(scenario_json, base_dir.as_deref())?;
        let world = xlayer_sim::build(&s, seed, run, pcap_dir.as_deref()).map_err(scenario_error)?;
        Ok(Simulation {
            duration_s: world.end().as_secs_f64(),
            scenario_hash: world.scenario_hash().to_string(),
            world: Some(world),
            wall_time_s: 0.0,
        })
    }

    #[getter]
    fn duration_s(&self) -> f64 {
        self.duration_s
    }
    #[getter]
    fn now_s(&self) -> PyResult<f64> {
        Ok(self.world()?.now().as_secs_f64())
    }
    #[getter]
    fn events(&self) -> PyResult<u64> {
        Ok(self.world()?.events())
    }
    #[getter]
    fn scenario_hash(&self) -> &str {
        &self.scenario_hash
    }
    /// Whether the scenario draws any random number (else every seed gives one result).
    #[getter]
    fn uses_randomness(&self) -> PyResult<bool> {
        Ok(self.world()?.uses_randomness())
    }

    /// Run events up to `until_s` (clamped to the duration). Releases the GIL.
    fn advance(&mut self, py: Python<'_>, until_s: f64) -> PyResult<()> {
        let world = self
            .world
            .as_mut()
            .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("this simulation has finished"))?;
        let until = SimTime::ZERO + SimDur::from_secs_f64(until_s);
        let started = std::time::Instant::now();
        py.allow_threads(|| world.run_until(until));
        self.wall_time_s += started.elapsed().as_secs_f64();
        Ok(())
    }

    /// Run to the end and return the results as plain Python containers.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let world = self
            .world
            .take()
            .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("this simulation has finished"))?;
        let started = std::time::Instant::now();
        let result = py.allow_threads(move || world.finish());
        self.wall_time_s += started.elapsed().as_secs_f64();
        let rep = result.map_err(finish_error)?;
        report::to_dict(py, &rep, self.wall_time_s)
    }
}

/// Raise ScenarioError if the scenario is invalid.
#[pyfunction]
#[pyo3(signature = (scenario_json, base_dir=None))]
fn validate(scenario_json: &str, base_dir: Option<PathBuf>) -> PyResult<()> {
    parse(scenario_json, base_dir.as_deref()).map(|_| ())
}

/// Whether the scenario draws any random number (a lossy link, a fading radio, a random
/// start, size, on/off period or arrival); when it does not, every seed and run give the
/// same result. Builds the world once (seed 1, run 0) without running it.
#[pyfunction]
#[pyo3(signature = (scenario_json, base_dir=None))]
fn uses_randomness(scenario_json: &str, base_dir: Option<PathBuf>) -> PyResult<bool> {
    let s = parse(scenario_json, base_dir.as_deref())?;
    Ok(xlayer_sim::build(&s, 1, 0, None).map_err(scenario_error)?.uses_randomness())
}

/// JSON Schema of the scenario format, as a JSON string.
#[pyfunction]
fn schema() -> String {
    Scenario::json_schema()
}

/// The flow and link tables' columns with unit, applies-to and meaning, in table order.
#[pyfunction]
fn output_columns(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    report::column_docs(py)
}

/// Run twice; None if identical, else the first diverging event.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed, run, base_dir=None))]
fn check_determinism<'py>(
    py: Python<'py>,
    scenario_json: &str,
    seed: u64,
    run: u64,
    base_dir: Option<PathBuf>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let s = parse(scenario_json, base_dir.as_deref())?;
    let result = py.allow_threads(|| xlayer_sim::check_determinism(&s, seed, run)).map_err(scenario_error)?;
    result.map(|d| report::divergence_to_dict(py, &d)).transpose()
}

/// Power gains of the CLAMP paper's Jakes generator (Dent's corrected form with random
/// per-realisation phases; Andrew & Hanly §V-B, protocol-notes §6.1): `realisations`
/// independent generators, each sampled `samples` times `spacing_s` apart. Unit mean.
#[pyfunction]
#[pyo3(signature = (doppler_hz, generators, realisations, samples, spacing_s, seed=1))]
fn jakes_power_samples(
    py: Python<'_>,
    doppler_hz: f64,
    generators: usize,
    realisations: usize,
    samples: usize,
    spacing_s: f64,
    seed: u64,
) -> PyResult<Vec<f64>> {
    let bad = |what: &str| Err(pyo3::exceptions::PyValueError::new_err(what.to_string()));
    if !(doppler_hz.is_finite() && doppler_hz > 0.0) {
        return bad("doppler_hz must be a positive number");
    }
    if generators == 0 || realisations == 0 || samples == 0 {
        return bad("generators, realisations and samples must be at least 1");
    }
    if !(spacing_s.is_finite() && spacing_s > 0.0) {
        return bad("spacing_s must be a positive number of seconds");
    }
    Ok(py.allow_threads(|| {
        (0..realisations)
            .flat_map(|i| {
                let mut rng = xlayer_sim::engine::stream(seed, i as u64, "jakes_power_samples");
                let path = JakesPath::new(doppler_hz, generators, &mut rng);
                (0..samples).map(move |k| path.gain(k as f64 * spacing_s))
            })
            .collect()
    }))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Set by build.rs: the checkout's commit at build time, empty when unknown.
    m.add("__commit__", env!("XLAYER_COMMIT"))?;
    m.add("RNG_ALGORITHM", xlayer_sim::engine::RNG_ALGORITHM)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(uses_randomness, m)?)?;
    m.add_function(wrap_pyfunction!(output_columns, m)?)?;
    m.add_function(wrap_pyfunction!(check_determinism, m)?)?;
    m.add_function(wrap_pyfunction!(jakes_power_samples, m)?)?;
    Ok(())
}
