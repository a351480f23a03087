"""on_trace_ready with the real PyTorch profiler (Debian python3-torch, CPU): a small model,
a few steps, analysed as the capture ends (scripts/capture/torch_cpu_steps.py trains it)."""

import importlib.util
import io
import json
import os
import re
import shutil

import proflint
import pytest
from conftest import ROOT

torch = pytest.importorskip("torch", reason="torch is not installed for this Python (Debian: python3-torch)")

spec = importlib.util.spec_from_file_location("torch_cpu_steps", ROOT / "scripts" / "capture" / "torch_cpu_steps.py")
capture = importlib.util.module_from_spec(spec)
spec.loader.exec_module(capture)


def budget_rule(tmp_path, max_step_ms):
    """rules/examples/step-time-budget, for any device, with this budget (a team's step budget)."""
    rules = tmp_path / "rules"
    rules.mkdir()
    shutil.copy(ROOT / "rules" / "examples" / "step_time_budget.lua", rules)
    config = tmp_path / "proflint.toml"
    config.write_text(f'[rules.step-time-budget]\ngpu = ""\nmax_step_ms = {max_step_ms}\n')
    return str(rules), str(config)


def profiler_steps(path):
    with open(path, encoding="utf-8") as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    return {e["name"] for e in events if str(e.get("name", "")).startswith("ProfilerStep#")}, events


def test_capture_is_written_analysed_and_printed(tmp_path):
    rules, config = budget_rule(tmp_path, 10000)  # a budget no step reaches: the rule runs, silent
    printed = io.StringIO()
    handler = proflint.on_trace_ready(tmp_path / "traces", worker_name="w", rules=rules, config=config, file=printed)
    capture.train(handler, active=3)
    assert len(handler.traces) == 1 and len(handler.analyses) == 1
    path = handler.traces[0]
    assert re.fullmatch(r"w\.\d+\.pt\.trace\.json", os.path.basename(path)) and os.path.isfile(path)
    assert os.path.dirname(path) == str(tmp_path / "traces")
    steps, events = profiler_steps(path)
    a = handler.analysis
    # The raw trace holds the 3 active steps (3 ProfilerStep# names) and no GPU event at all.
    assert len(steps) == 3
    assert a.summary["traces"][0]["iterations"]["count"] == 3
    assert a.traces[0]["iterations"] == 3 and a.traces[0]["devices"] == []
    assert "no-gpu-activity" in {d.id for d in a.diagnostics}
    assert "step-time-budget" not in {f.id for f in a.findings}
    # One DataLoader fetch annotation per recorded step in the raw trace, and in the store.
    fetches = [e for e in events if str(e.get("name", "")).startswith("enumerate(DataLoader)#")]
    assert len(fetches) == 3
    sql = "SELECT count(*) AS n FROM range WHERE name LIKE 'enumerate(DataLoader)#%'"
    assert a.query(sql)["n"].tolist() == [3]
    out = printed.getvalue()
    assert out.startswith(f"proflint: {path}: {len(a.findings)} finding")
    assert "note: no-gpu-activity" in out


def test_fail_on_stops_the_training_loop(tmp_path):
    rules, config = budget_rule(tmp_path, 0.001)  # 1 µs: every step is over it
    printed = io.StringIO()
    handler = proflint.on_trace_ready(tmp_path / "traces", fail_on="high", rules=rules, config=config, file=printed)
    with pytest.raises(proflint.FindingsError) as info:
        capture.train(handler, active=2)
    e = info.value
    assert e.path == handler.traces[0] and os.path.isfile(e.path)
    assert [f.id for f in e.findings] == ["step-time-budget"]
    assert e.findings[0].severity == "high" and e.findings[0].evidence["steps_over_budget"] == 2
    assert e.analysis is handler.analysis
    assert "1. [high] step-time-budget" in printed.getvalue()


def test_gzip_trace(tmp_path):
    handler = proflint.on_trace_ready(tmp_path, use_gzip=True, print_findings=False)
    capture.train(handler, active=2)
    assert handler.traces[0].endswith(".pt.trace.json.gz") and os.path.isfile(handler.traces[0])
    assert handler.analysis.summary["traces"][0]["iterations"]["count"] == 2


def test_fail_on_is_checked_early(tmp_path):
    with pytest.raises(ValueError, match="fail_on"):
        proflint.on_trace_ready(tmp_path, fail_on="info")
