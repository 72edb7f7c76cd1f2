"""The full CLAMP reproduction (Andrew & Hanly): every check, all figures. Minutes long."""

from __future__ import annotations

import pytest

from xlayer.papers import clamp

FIGURES = ["fig2_deterministic_link.png", "fig4_throughput_per_flow.png", "fig5_total_and_download.png",
           "fig6_windows_30ms_flow.png", "fig7_buffer_and_a.png", "fig8_low_rate_per_flow.png", "vh_short_flows.png"]


@pytest.mark.slow
def test_full_reproduction(tmp_path):
    failed = clamp.reproduce(tmp_path, quick=False, workers=2)
    report = (tmp_path / "report.md").read_text()
    for f in FIGURES:
        assert (tmp_path / f).stat().st_size > 10_000, f
    for c in ("C1", "C2", "C3", "C4", "C5", "C6", "C7"):
        assert f"| {c} |" in report
    assert failed == 0, report.split("## The paper's numbers")[0]
