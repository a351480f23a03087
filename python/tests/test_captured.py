"""The CPU captures kept under fixtures/captured/torch_cpu_mlp/ (made by on_trace_ready)."""

import gzip
import json

import proflint
import pytest
from conftest import FIXTURES

CAPTURES = FIXTURES / "captured" / "torch_cpu_mlp"


def raw_totals(path):
    """Step and DataLoader-fetch time (µs) and counts, straight from the raw events."""
    events = json.load(gzip.open(path))
    steps = [e for e in events if e["name"].startswith("ProfilerStep#")]
    fetches = [e for e in events if e["name"].startswith("enumerate(DataLoader)#")]
    return len(steps), sum(e["dur"] for e in steps), len(fetches), sum(e["dur"] for e in fetches)


@pytest.mark.parametrize("name", ["mlp_4steps", "mlp_slow_loader_4steps"])
def test_capture_imports_as_recorded(name):
    path = str(CAPTURES / f"{name}.pt.trace.json.gz")
    steps, step_us, fetches, fetch_us = raw_totals(path)
    assert (steps, fetches) == (4, 4)
    a = proflint.analyze(path)
    assert a.traces[0]["iterations"] == 4 and a.traces[0]["devices"] == []
    assert "no-gpu-activity" in {d.id for d in a.diagnostics}
    q = a.query("SELECT sum(CASE WHEN name LIKE 'ProfilerStep#%' THEN dur_ns END) AS step_ns, "
                "sum(CASE WHEN name LIKE 'enumerate(DataLoader)#%' THEN dur_ns END) AS fetch_ns FROM range")
    assert q["step_ns"].iloc[0] == step_us * 1000 and q["fetch_ns"].iloc[0] == fetch_us * 1000
    if name == "mlp_slow_loader_4steps":
        assert fetch_us / step_us > 0.9  # the Dataset's sleep dominates every step
