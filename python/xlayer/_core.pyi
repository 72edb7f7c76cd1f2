"""Native core of xlayer (Rust, via pyo3). Use the `xlayer` package API instead."""

from typing import Any, Optional, final

__all__ = [
    "RNG_ALGORITHM",
    "ScenarioError",
    "Simulation",
    "__commit__",
    "__version__",
    "check_determinism",
    "jakes_power_samples",
    "output_columns",
    "schema",
    "uses_randomness",
    "validate",
]

__version__: str
__commit__: str
"""The git commit the extension was built from (`-dirty` for local changes); empty if unknown."""
RNG_ALGORITHM: str

class ScenarioError(ValueError):
    """A scenario failed validation; the message names the field path and what is allowed."""

@final
class Simulation:
    """One run of a scenario. Build it, advance it, finish it once."""

    def __new__(
        cls,
        scenario_json: str,
        seed: int,
        run: int,
        pcap_dir: Optional[str] = None,
        base_dir: Optional[str] = None,
    ) -> "Simulation": ...
    @property
    def duration_s(self) -> float: ...
    @property
    def now_s(self) -> float: ...
    @property
    def events(self) -> int: ...
    @property
    def scenario_hash(self) -> str: ...
    @property
    def uses_randomness(self) -> bool:
        """Whether the scenario draws any random number (else every seed gives one result)."""
    def advance(self, until_s: float) -> None:
        """Run events up to `until_s` (clamped to the duration). Releases the GIL."""
    def finish(self) -> dict[str, Any]:
        """Run to the end and return the results (see xlayer.api)."""

def validate(scenario_json: str, base_dir: Optional[str] = None) -> None:
    """Raise ScenarioError if the scenario is invalid. Relative file paths in it (link
    traces) are read from `base_dir`, else from the working folder."""

def uses_randomness(scenario_json: str, base_dir: Optional[str] = None) -> bool:
    """Whether the scenario draws any random number (a lossy link, a fading radio, a
    random start, size, on/off period or arrival); if not, every seed and run give the
    same result."""

def schema() -> str:
    """JSON Schema of the scenario format, as a JSON string."""

def output_columns() -> dict[str, list[dict[str, str]]]:
    """The flow and link tables' columns in table order, each with name, type, unit,
    applies_to and meaning (the definitions docs/outputs.md is generated from)."""

def check_determinism(
    scenario_json: str, seed: int, run: int, base_dir: Optional[str] = None
) -> Optional[dict[str, Any]]:
    """Run twice; None if identical, else the first diverging event."""

def jakes_power_samples(
    doppler_hz: float,
    generators: int,
    realisations: int,
    samples: int,
    spacing_s: float,
    seed: int = 1,
) -> list[float]:
    """Power gains of the CLAMP paper's Jakes generator (unit mean), for validation."""
