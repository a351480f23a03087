"""proflint.compare: the regression gate's verdict, metrics and exit code, as the CLI gives them."""

import json

import proflint
from conftest import SAMPLE_AMP, SAMPLE_TRAIN, cli_json


def test_improvement_and_regression_on_fixtures():
    # docs/compare.md: sample_train -> sample_amp is an improvement (iteration time -85.1%).
    better = proflint.compare(SAMPLE_TRAIN, SAMPLE_AMP)
    assert (better.verdict, better.exit_code, bool(better)) == ("improvement", 0, True)
    worse = proflint.compare(SAMPLE_AMP, SAMPLE_TRAIN)
    assert (worse.verdict, worse.exit_code, bool(worse)) == ("regression", 1, False)
    m = worse.metrics
    assert list(m.columns) == ["name", "scope", "unit", "baseline", "candidate", "delta", "relative", "status",
                               "gating", "budget", "p_value", "reason"]
    assert len(m) == len(worse.data["metrics"])
    step = m[m["name"] == "iteration_time"].iloc[0]
    assert step["status"] == "regression" and step["candidate"] > step["baseline"]
    assert step["delta"] == step["candidate"] - step["baseline"]
    assert {"change": "new", "id": "amp-not-used"}.items() <= next(
        f for f in worse.findings if f["id"] == "amp-not-used").items()


def test_same_as_the_cli(cli):
    c = proflint.compare(SAMPLE_AMP, SAMPLE_TRAIN)
    code, expected = cli_json(cli, "compare", SAMPLE_AMP, SAMPLE_TRAIN, "--format", "json")
    assert c.exit_code == code == 1
    assert json.loads(c.to_json()) == expected


def test_stores_and_lists_as_sides():
    base, cand = proflint.load(SAMPLE_TRAIN), proflint.load(SAMPLE_AMP)
    assert proflint.compare(base, cand).verdict == "improvement"
    # Two runs per side (the same capture twice: the gate pools their steps).
    pooled = proflint.compare([SAMPLE_TRAIN, SAMPLE_TRAIN], [SAMPLE_AMP, SAMPLE_AMP])
    assert pooled.verdict == "improvement"
    assert pooled.data["baseline"]["paths"] == [SAMPLE_TRAIN, SAMPLE_TRAIN]


def test_html_and_notebook_view():
    c = proflint.compare(SAMPLE_TRAIN, SAMPLE_AMP)
    assert "improvement" in c._repr_html_() and "iteration_time" in c._repr_html_()
    assert c.to_html().lstrip().lower().startswith("<!doctype html")


def test_resnet50_workers_pair_matches_the_cli(realdata, cli):
    base = str(realdata / "kineto" / "tb_resnet50_v100_workers0.pt.trace.json.gz")
    cand = str(realdata / "kineto" / "tb_resnet50_v100_workers4.pt.trace.json.gz")
    for a, b, verdict, exit_code in ((base, cand, "improvement", 0), (cand, base, "regression", 1)):
        c = proflint.compare(a, b)
        code, expected = cli_json(cli, "compare", a, b, "--format", "json")
        assert (c.verdict, c.exit_code) == (expected["verdict"], code) == (verdict, exit_code)
