"""proflint.analyze on the project's fixtures: the CLI's findings, as objects and tables."""

import json

import proflint
import pytest
from conftest import SAMPLE_TRAIN, cli_json


def test_same_json_as_the_cli(cli):
    # The package runs the CLI's own analyze in-process: the JSON is the same document.
    a = proflint.analyze(SAMPLE_TRAIN)
    code, expected = cli_json(cli, "analyze", SAMPLE_TRAIN, "--format", "json")
    assert code == 0 and a.exit_code == 0
    assert json.loads(a.to_json()) == expected
    assert [(f.id, f.estimate) for f in a.findings] == [(f["id"], f["estimated_savings_ns"]) for f in expected["findings"]]


def test_finding_objects_carry_the_json_fields():
    a = proflint.analyze(SAMPLE_TRAIN)
    assert a.findings, "sample_train has findings (dataloader-stall, amp-not-used, ...)"
    top = a.findings[0]
    assert top.id == "dataloader-stall" and top.severity == "high"
    assert top.fix == top.raw["recommendation"] and top.fix
    assert top.problem == top.raw["problem"]
    assert top.estimate == top.raw["estimated_savings_ns"] > 0
    assert top.scope["trace_id"] == 1
    assert isinstance(top.evidence, dict) and top.evidence
    assert str(top).startswith("[high] dataloader-stall: ")
    ids = {c.id for c in a.below_threshold}
    assert ids and all(isinstance(c.value, (int, float)) for c in a.below_threshold)
    assert a.diagnostics == []
    assert a.traces[0]["path"] == SAMPLE_TRAIN


def test_dataframe_has_one_ranked_row_per_finding():
    a = proflint.analyze(SAMPLE_TRAIN)
    df = a.to_dataframe()
    assert list(df.columns) == ["rank", "id", "severity", "title", "estimated_savings_ms", "savings_share", "confidence",
                                "trace_id", "device_id", "problem", "recommendation", "source"]
    assert len(df) == len(a.findings)
    assert list(df["rank"]) == list(range(1, len(a.findings) + 1))
    assert list(df["id"]) == [f.id for f in a.findings]
    assert df["estimated_savings_ms"].iloc[0] == pytest.approx(a.findings[0].estimate / 1e6)


def test_summary_and_query_reuse_the_store():
    a = proflint.analyze(SAMPLE_TRAIN)
    trace = a.summary["traces"][0]
    # Counted by hand in the raw file (python3, json): 1188 events of cat "kernel", 18 "gpu_memcpy",
    # and ProfilerStep#2..#7 (each twice: CPU and GPU annotation) = 6 iterations.
    assert trace["counts"]["kernel"] == 1188
    assert trace["counts"]["memcpy"] == 18
    assert trace["iterations"]["count"] == 6
    assert a.query("SELECT count(*) AS n FROM kernel")["n"].tolist() == [1188]


def test_summary_is_the_clis(cli):
    # Read from the kept store, it is the document `proflint summary` makes from the profile.
    a = proflint.analyze(SAMPLE_TRAIN)
    assert cli_json(cli, "summary", SAMPLE_TRAIN, "--format", "json")[1] == a.summary


def test_html_report_and_notebook_view(tmp_path):
    a = proflint.analyze(SAMPLE_TRAIN)
    page = a.to_html(tmp_path / "report.html")
    assert page.lstrip().lower().startswith("<!doctype html")
    assert "dataloader-stall" in page
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == page
    view = a._repr_html_()
    assert "<table>" in view and all(f.id in view for f in a.findings)


def test_only_and_skip_reach_the_engine():
    only = proflint.analyze(SAMPLE_TRAIN, only=["host-sync"])
    assert {f.id for f in only.findings} == {"host-sync"}
    skipped = proflint.analyze(SAMPLE_TRAIN, skip=["dataloader-stall"])
    assert "dataloader-stall" not in {f.id for f in skipped.findings}
    assert skipped.findings


def test_a_store_is_analysed_like_its_profile():
    direct = proflint.analyze(SAMPLE_TRAIN)
    with proflint.load(SAMPLE_TRAIN) as store:
        stored = proflint.analyze(store)
    assert [(f.id, f.estimate) for f in stored.findings] == [(f.id, f.estimate) for f in direct.findings]


def test_fail_on_raises_with_the_analysis():
    with pytest.raises(proflint.FindingsError) as info:
        proflint.analyze(SAMPLE_TRAIN, fail_on="high")
    e = info.value
    assert e.exit_code == 1 and e.path == SAMPLE_TRAIN
    assert e.findings and all(f.severity == "high" for f in e.findings)
    assert e.analysis.findings[0].id == "dataloader-stall"
