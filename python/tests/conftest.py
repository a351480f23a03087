"""Shared paths and helpers of the Python package's tests (ctest -L python, python/test.sh).

The package under test is the one on sys.path: build/python (ctest in the normal build),
build-python/python (python/test.sh) or an installed one. Parity tests run the CLI binary named by PROFLINT_BINARY (else build/proflint) and
skip, saying so, where it is missing; realdata tests skip where ../shared/realdata is absent.
"""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
REALDATA = ROOT.parent / "shared" / "realdata"
SAMPLE_TRAIN = str(FIXTURES / "sample_train.json.gz")
SAMPLE_AMP = str(FIXTURES / "sample_amp.json.gz")


@pytest.fixture(autouse=True)
def _own_folder(tmp_path, monkeypatch):
    # The engine reads ./proflint.toml like the CLI: run every test where there is none.
    monkeypatch.chdir(tmp_path)


# Resolved now: the tests themselves run in temporary folders.
BINARY = os.path.abspath(os.environ.get("PROFLINT_BINARY") or str(ROOT / "build" / "proflint"))


def cli_binary():
    return BINARY if os.access(BINARY, os.X_OK) else None


@pytest.fixture
def cli():
    """Runs the CLI binary: cli(*args) -> CompletedProcess (text)."""
    binary = cli_binary()
    if binary is None:
        pytest.skip("no CLI binary (set PROFLINT_BINARY or build build/proflint): parity with the CLI not checked")

    def run(*args):
        return subprocess.run([binary, *map(str, args)], capture_output=True, text=True)

    return run


def cli_json(cli, *args):
    """The JSON a CLI command writes to stdout."""
    done = cli(*args)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.fixture
def realdata():
    if not REALDATA.is_dir():
        pytest.skip(f"{REALDATA} is absent: tests on real profiles skipped")
    return REALDATA
