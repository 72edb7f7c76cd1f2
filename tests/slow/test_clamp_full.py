"""The full CLAMP reproduction (Andrew & Hanly): every check under the primary readings,
all figures, the readings section. Minutes long."""

from __future__ import annotations

import re

import pytest

from xlayer.papers import clamp

FIGURES = ["fig2_deterministic_link", "fig4_throughput_per_flow", "fig5_total_and_download",
           "fig6_windows_30ms_flow", "fig7_buffer_and_a", "fig8_low_rate_per_flow", "vh_short_flows",
           "sens_margin_readings"]
# Checks that fail under the primary readings, and why (docs/reproductions/clamp.md).
FAILING = {
    "C6m": "the literal residual-loss rule leaves the 10 m/s margin at 0 dB (15 consecutive failures never "
           "happen), below the 0.1 m/s margin: fast fading loses throughput to failed slots, not to the "
           "larger margin §V-B and §VI name",
}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("clamp_full")
    clamp.reproduce(out, quick=False, workers=2)
    return out


@pytest.mark.slow
def test_figures_and_sections(report):
    text = (report / "report.md").read_text()
    for f in FIGURES:
        assert (report / f"{f}.png").stat().st_size > 10_000, f
        assert (report / f"{f}.svg").stat().st_size > 10_000, f
    for heading in ("## Readings and sensitivity", "## Achieved radio loss", "## Reported without a threshold",
                    "## Sensitivity: the queue-average time constant T"):
        assert heading in text, heading
    assert re.search(r"commit [0-9a-f]{7,}", text)


@pytest.mark.slow
@pytest.mark.parametrize("check", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=FAILING[c])) if c in FAILING else c
    for c in ("C1", "C2", "C3", "C4", "C5", "C6", "C6m", "C7")])
def test_check_under_the_primary_readings(report, check):
    row = next(line for line in (report / "report.md").read_text().splitlines() if line.startswith(f"| {check} |"))
    assert "**PASS**" in row, row
