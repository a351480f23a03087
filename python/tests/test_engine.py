"""The extension module: version, and the GIL released while the engine works."""

import re
import sys
import threading
import time

import proflint
import pytest
from proflint import _core
from conftest import ROOT, SAMPLE_TRAIN


def test_version_is_the_clis(cli):
    project = re.search(r"project\(proflint VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    assert proflint.__version__ == project
    assert proflint.version_text().splitlines()[0] == f"proflint {project}"
    assert cli("--version").stdout.splitlines()[0] == f"proflint {project}"


def test_other_threads_run_while_the_engine_works():
    # The main thread counts while a second thread is inside the engine (analyze, with the store
    # written); held GIL would stop the count for a whole call. The largest pause between two
    # counts is compared with the shortest call. One call of the sample takes ~50 ms on a 2-core
    # machine, close to what can be told apart from scheduling: the thread calls until 0.3 s have
    # gone by (a single call was sometimes under the 50 ms this test asked for, and it failed).
    inside = threading.Event()
    done = threading.Event()
    span = {}

    def work():
        inside.set()
        calls = []
        try:
            while sum(calls) < 0.3:
                start = time.perf_counter()
                n = len(calls)
                code, _, err = _core.run_cli(["analyze", SAMPLE_TRAIN, "--format", "json", "-o", f"out{n}.json",
                                              "--db", f"store{n}.pflt"])
                calls.append(time.perf_counter() - start)
                span["codes"] = span.get("codes", []) + [(code, err)]
            span["call"] = min(calls)
        finally:
            done.set()

    t = threading.Thread(target=work)
    t.start()
    inside.wait()
    last = time.perf_counter()
    longest, ticks = 0.0, 0
    while not done.is_set():
        now = time.perf_counter()
        longest = max(longest, now - last)
        last = now
        ticks += 1
    t.join()
    assert all(code == 0 for code, _ in span["codes"]), span["codes"]
    assert span["call"] > 0.02, "a call is long enough to tell"
    assert ticks > 1000
    assert longest < span["call"] / 2, f"main thread paused {longest:.3f} s of a {span['call']:.3f} s engine call"


def test_calls_from_several_threads_all_succeed():
    results = []

    def one():
        results.append(proflint.query(SAMPLE_TRAIN, "SELECT count(*) AS n FROM kernel")["n"].tolist())

    threads = [threading.Thread(target=one) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [[1188]] * 3


def test_progress_reaches_a_callback(capfd):
    seen = []
    a = proflint.analyze(SAMPLE_TRAIN, progress=lambda file, percent: seen.append((file, percent)))
    # The importer reports every 10% of the file's bytes (engine/import/progress.cpp), up to 100%.
    assert seen and all(file == "sample_train.json.gz" for file, _ in seen)
    percents = [p for _, p in seen]
    assert percents == sorted(percents) and percents[-1] == 100
    assert not any(line.startswith("proflint: reading ") for line in a.log)
    assert "proflint: reading" not in capfd.readouterr().err  # taken off stderr, not printed


def test_a_failing_progress_callback_does_not_stop_the_engine(monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: reported.append(info.exc_value))

    def broken(file, percent):
        raise RuntimeError("callback bug")

    a = proflint.analyze(SAMPLE_TRAIN, progress=broken)
    assert a.findings
    assert reported and all(str(e) == "callback bug" for e in reported)


def test_progress_true_draws_tqdm_bars(capfd):
    pytest.importorskip("tqdm", reason="tqdm is not installed (Debian: python3-tqdm): progress=True bars not checked")
    proflint.analyze(SAMPLE_TRAIN, progress=True)
    err = capfd.readouterr().err
    # One bar for the file, driven to 100% from the engine's progress lines, which stay off stderr.
    assert "sample_train.json.gz: 100%" in err
    assert "proflint: reading" not in err


def test_progress_does_not_wait_for_processes_that_inherited_stderr():
    # A process started during the call inherits file descriptor 2 (the progress pipe) and may
    # outlive the call: the call must still return when the engine is done.
    import subprocess

    children = []

    def start_child(file, percent):
        if not children:
            children.append(subprocess.Popen(["sleep", "30"]))

    start = time.perf_counter()
    try:
        a = proflint.analyze(SAMPLE_TRAIN, progress=start_child)
        elapsed = time.perf_counter() - start
        assert children and children[0].poll() is None, "the child still runs"
    finally:
        for child in children:
            child.kill()
            child.wait()
    assert a.findings and elapsed < 15
