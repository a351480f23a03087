"""Errors: the CLI's message (file and place) as Python exceptions."""

import gzip

import proflint
import pytest
from conftest import SAMPLE_TRAIN


def truncated(tmp_path):
    path = tmp_path / "cut.json"
    path.write_bytes(gzip.open(SAMPLE_TRAIN).read()[:5000])
    return str(path)


def test_truncated_file_names_file_and_place(tmp_path):
    path = truncated(tmp_path)
    with pytest.raises(proflint.InputError) as info:
        proflint.analyze(path)
    e = info.value
    assert e.exit_code == 2
    assert e.message.startswith(f"{path}: byte 5000 ")
    assert "truncated" in e.message
    assert str(e) == e.message and f"proflint: error: {e.message}" in e.log


def test_message_is_the_clis(tmp_path, cli):
    path = truncated(tmp_path)
    with pytest.raises(proflint.InputError) as info:
        proflint.query(path, "SELECT 1")
    done = cli("query", path, "SELECT 1")
    assert done.returncode == 2
    assert done.stderr.strip() == f"proflint: error: {info.value.message}"


def test_missing_file(tmp_path):
    missing = str(tmp_path / "nope.json")
    with pytest.raises(proflint.InputError, match="nope.json"):
        proflint.load(missing)


def test_bad_argument_value_is_refused():
    with pytest.raises(proflint.InputError, match="--fail-on"):
        proflint.analyze(SAMPLE_TRAIN, fail_on="sometimes")
    with pytest.raises(proflint.InputError, match=r"--iter-stop \(1\) must be at least --iter-start \(3\)"):
        proflint.analyze(SAMPLE_TRAIN, iter_range=(3, 1))


def test_missing_rules_folder(tmp_path):
    with pytest.raises(proflint.InputError, match="no_rules_here"):
        proflint.analyze(SAMPLE_TRAIN, rules=str(tmp_path / "no_rules_here"))


def test_engine_warnings_become_python_warnings():
    with pytest.warns(proflint.ProflintWarning, match="NoSuchStepMarker"):
        a = proflint.analyze(SAMPLE_TRAIN, key_node="NoSuchStepMarker")
    assert any("NoSuchStepMarker" in line for line in a.log)


def test_exception_hierarchy():
    assert issubclass(proflint.InputError, proflint.ProflintError)
    assert issubclass(proflint.FindingsError, proflint.ProflintError)
    assert issubclass(proflint.ProflintError, Exception)
