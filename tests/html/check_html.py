#!/usr/bin/env python3
"""tests/html/check_html.py — the HTML report in real browsers (headless Chromium and Firefox).

For each case, proflint writes the report; Chromium opens it from disk with `#pf-selftest`, which
makes the page (engine/report/html/report.js) click every finding, measure every chart and write
what it saw into the DOM; Chromium's `--dump-dom` hands that back, and Firefox (ESR) gives it over
WebDriver BiDi (tests/html/bidi.py). The expectations are computed here from
the data block embedded in the same file, so a page that drops a series, draws an empty canvas or
highlights the wrong window fails:
  - no script error, no Content-Security-Policy violation, no resource fetched (no network);
  - every chart exists with the expected number of series and has painted pixels;
  - clicking a finding selects it, switches the timeline to the window holding its evidence,
    draws the evidence band and outlines every evidence event that window holds;
  - tables hold every row of the data; the timeline canvas is painted.

Usage: check_html.py --proflint BUILD/proflint [--browser all|chromium|firefox] [--source-dir DIR]
                     [--realdata DIR] [--keep DIR]
Every case runs in each browser found (a missing one is named as skipped); exit 77 (ctest
SKIP_RETURN_CODE) when neither is installed: scripts/setup.sh installs both.
"""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bidi  # noqa: E402

CATEGORIES = ["kernel_tc", "kernel_other", "communication", "memcpy", "memset", "runtime", "dataloader", "cpu", "idle"]


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def embedded_data(page):
    m = re.search(r'<script type="application/json" id="pf-data">(.*?)</script>', page, re.S)
    if not m:
        raise AssertionError("no embedded data block")
    return json.loads(m.group(1))


def run_browser(chromium, path, profile_dir):
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
           "--user-data-dir=" + profile_dir, "--virtual-time-budget=15000", "--window-size=1400,1000",
           "--enable-logging=stderr", "--v=0", "--dump-dom", "file://" + os.path.abspath(path) + "#pf-selftest"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="pf-selftest">(.*?)</pre>', proc.stdout, re.S)
    if not m:
        raise AssertionError("the page wrote no self-test result (script failed to run?); browser stderr:\n" +
                         proc.stderr[-3000:])
    # Console messages Chromium logs itself (an exception before the page's hooks were installed).
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line]
    return json.loads(html.unescape(m.group(1))), console


def expected_analysis_charts(data):
    charts = {}
    summary = data["summary"]["traces"]
    devs = [d.get("breakdown_ns", {}) for t in summary for d in t["devices"]]
    if devs:
        charts["breakdown-gpus"] = sum(1 for c in CATEGORIES if any(d.get(c, 0) > 0 for d in devs))
    with_iters = []
    for t in data["traces"]:
        it = t["iterations"]
        if it["ordinal"]:
            with_iters.append(t)
            for b in it["breakdown"]:
                charts["breakdown-iter-t%d-d%d" % (t["trace_id"], b["device_id"])] = sum(
                    1 for c in CATEGORIES if any(v > 0 for v in b["categories"].get(c, [])))
            charts["steps-t%d" % t["trace_id"]] = 3
        se = t["series"]
        if se["devices"]:
            charts["util-t%d" % t["trace_id"]] = 2 * len(se["devices"])
        groups = {}
        for s in se["samples"]:
            key = "memory" if s["unit"] == "bytes" else s["name"]
            groups.setdefault(key, 0)
            groups[key] += 1
        for g, n in enumerate(groups.values()):
            charts["samples-t%d-%d" % (t["trace_id"], g)] = n
    if len(with_iters) > 1:
        charts["steps-ranks"] = len(with_iters)
        charts["waits-ranks"] = len(with_iters)
    for name, labels in expected_evidence_charts(data).items():
        charts[name] = len(labels)
    return charts


HOST_CATEGORIES = [("io", "blocked in I/O"), ("wait", "blocked waiting (poll, futex, locks)"), ("sleep", "sleeping"),
                   ("other", "idle, launching threads not blocked")]


def expected_evidence_charts(data):
    """The charts of the sections drawn only when a trace has their facts, with their series labels
    in drawing order: the system view of sampling logs (one chart per sampled GPU), the host threads
    during GPU idle time, torch.compile regions (stacked bars draw the last category first)."""
    charts = {}
    for t in data["traces"]:
        for g in (t.get("system") or {}).get("gpus", []):
            labels = []
            if g["activity"]:
                labels.append("GPU activity (%s)" % g["activity"]["metric"])
            if g["sm_active"]:
                labels.append("SM active")
            if g["memory"]:
                labels.append(g["memory"]["metric"])  # the label names the metric; matched as a substring
            charts["system-t%d-d%d" % (t["trace_id"], g["device_id"])] = labels
    for t in data["summary"]["traces"]:
        h = t.get("host_activity")
        if h and h["os_calls_recorded"] > 0 and h["devices"]:
            def val(d, k):
                return max(0, d["gpu_idle_ns"] - d["blocked_ns"]) if k == "other" else d["blocked_by_category_ns"].get(k, 0)
            cats = [label for k, label in HOST_CATEGORIES if any(val(d, k) > 0 for d in h["devices"])]
            if cats:
                charts["host-t%d" % t["trace_id"]] = list(reversed(cats))
        c = t.get("torch_compile")
        if c and c["by_region"]:
            charts["compiled-t%d" % t["trace_id"]] = ["fallback / library kernels", "Triton kernels"]
    return charts


def expected_evidence_tables(data):
    """Rows of the tables of the same sections, from the data block."""
    tables = {}
    for t in data["summary"]["traces"]:
        tid = t["trace_id"]
        v = t.get("system_view")
        if v and v["operators"]:
            tables["table-operators-t%d" % tid] = len(v["operators"])
        h = t.get("host_activity")
        if h and h["devices"]:
            if h["os_calls_recorded"] > 0:
                tables["table-oscalls-t%d" % tid] = sum(len(d["os_calls"]) for d in h["devices"])
            if h["cpu_samples_recorded"] > 0:
                tables["table-hotspots-t%d" % tid] = sum(len(d["cpu_hotspots"]) for d in h["devices"])
        if t.get("cuda_graphs"):
            tables["table-graphs-t%d" % tid] = len(t["cuda_graphs"])
        if t.get("torch_compile") and t["torch_compile"]["by_region"]:
            tables["table-regions-t%d" % tid] = len(t["torch_compile"]["by_region"])
    return tables


def check_system_drawn(data, got, fail):
    """What the system-view charts drew (the largest value of each series, read back from the chart)
    is the data block's: a page that scales or drops the values it was given fails."""
    for t in data["traces"]:
        for g in (t.get("system") or {}).get("gpus", []):
            c = got.get("system-t%d-d%d" % (t["trace_id"], g["device_id"]))
            if not c:
                continue
            sent = [max(v for v in s["values"] if v is not None) for s in (g["activity"], g["sm_active"], g["memory"]) if s]
            drawn = c.get("maxes", [])
            if any(abs(a - b) > 1e-9 * max(1.0, abs(a)) for a, b in zip(sent, drawn)) or len(sent) != len(drawn):
                fail("chart system-t%d-d%d drew maxima %s, the data has %s" % (t["trace_id"], g["device_id"], drawn, sent))


def check_system_series(data, fail):
    """The downsampled system-view series agree with the summary's figures of the same samples: the
    peak memory bin is the peak sample (peak per bin), the activity bins average to the samples'
    mean within the unevenness of bins (mean per bin), and iteration starts are drawn only when aligned."""
    for t in data["traces"]:
        sys_ = t.get("system")
        if not sys_:
            continue
        sm = next(q for q in data["summary"]["traces"] if q["trace_id"] == t["trace_id"])
        gpus = {g["device_id"]: g for g in sm["system_view"]["gpus"]}
        for g in sys_["gpus"]:
            s = gpus[g["device_id"]]
            act = [v for v in (g["activity"] or {}).get("values", []) if v is not None]
            if act and s["gpu_active_percent"] and abs(sum(act) / len(act) - s["gpu_active_percent"]["mean"]) > 5:
                fail("trace %d GPU %d: binned activity averages %.1f%%, the samples %.1f%%" % (
                    t["trace_id"], g["device_id"], sum(act) / len(act), s["gpu_active_percent"]["mean"]))
            mem = [v for v in (g["memory"] or {}).get("values", []) if v is not None]
            if mem and s["memory_used_bytes"]:
                peak = s["memory_used_bytes"]["max"]
                if g["memory"]["unit"] == "%":
                    peak = 100.0 * peak / s["memory_total_bytes"]
                if abs(max(mem) - peak) > 1e-3 * max(1.0, peak):
                    fail("trace %d GPU %d: peak memory bin %s, peak sample %s" % (t["trace_id"], g["device_id"], max(mem), peak))
        if sys_["iteration_starts_ns"] and not sys_["aligned"]:
            fail("trace %d: iteration starts drawn over samples not aligned with the trace" % t["trace_id"])


def run_firefox(ff, path):
    ff.log.clear()
    ff.navigate("file://" + os.path.abspath(path) + "#pf-selftest")
    text = ff.wait_for("(document.getElementById('pf-selftest') || {}).textContent || ''", timeout=60)
    return json.loads(text), ff.console_errors()


def check_case(name, page_path, result, console, failures, must=()):
    def fail(msg):
        failures.append("%s: %s" % (name, msg))

    with open(page_path, encoding="utf-8") as f:
        page = f.read()
    data = embedded_data(page)
    if "Content-Security-Policy" not in page or "default-src 'none'" not in page:
        fail("the page has no Content-Security-Policy forbidding fetches")
    if result["errors"]:
        fail("script errors: %s" % result["errors"][:3])
    if console:
        fail("console messages: %s" % console[:3])
    if result["csp"]:
        fail("blocked fetches (CSP violations): %s" % result["csp"][:3])
    if result["resources"]:
        fail("resources fetched: %s" % result["resources"][:3])
    if data["kind"] == "compare":
        sides = [s for s in data["sides"] if s["steps_ns"]]
        expected = {"distributions": len(sides)} if sides else {}
    else:
        expected = expected_analysis_charts(data)
    got = result["charts"]
    if set(got) != set(expected):
        fail("charts %s, expected %s" % (sorted(got), sorted(expected)))
    labels = expected_evidence_charts(data) if data["kind"] == "analysis" else {}
    for cid, n in expected.items():
        c = got.get(cid)
        if not c:
            continue
        if c["series"] != n:
            fail("chart %s has %d series, expected %d" % (cid, c["series"], n))
        for want, have in zip(labels.get(cid, []), c.get("labels", [])):
            if want not in have:
                fail("chart %s: series %r, expected %r" % (cid, have, want))
        if c["with_data"] == 0 or c["pixels"] == 0:
            fail("chart %s is empty (%d series with data, %d painted pixels)" % (cid, c["with_data"], c["pixels"]))
    if data["kind"] == "analysis":
        check_system_drawn(data, got, fail)
    if "waits-ranks" in got:
        # Ranks of a job aligned on their collectives show the measured wait for the last rank;
        # other traces side by side show the communication + idle proxy.
        its = [t["iterations"] for t in data["traces"] if t["iterations"]["ordinal"]]
        aligned = all("collective" in it for it in its)
        if aligned != ("clocks aligned" in got["waits-ranks"].get("title", "")):
            fail("waits chart title %r for %s ranks" % (got["waits-ranks"].get("title"), "aligned" if aligned else "unaligned"))
        if name.endswith("_job") and not aligned:
            fail("the ranks of this job were expected to be aligned")
    tables = {t["id"]: t["rows"] for t in result["tables"]}
    if data["kind"] == "compare":
        if tables.get("table-metrics") != len(data["compare"]["metrics"]):
            fail("metric table rows %s, expected %d" % (tables.get("table-metrics"), len(data["compare"]["metrics"])))
        return 0
    if tables.get("table-kernels") != len(data["kernels"]["rows"]) or tables.get("table-ops") != len(data["op_types"]["rows"]):
        fail("table rows %s, expected %d kernels and %d op types" % (tables, len(data["kernels"]["rows"]), len(data["op_types"]["rows"])))
    want_tables = expected_evidence_tables(data)
    extra = {k: v for k, v in tables.items() if k not in ("table-kernels", "table-ops")}
    if extra != want_tables:
        fail("section tables %s, expected %s" % (extra, want_tables))
    check_system_series(data, fail)
    for section in must:
        if not any(k.startswith(section) for k in list(got) + list(tables)):
            fail("no %s chart or table: the case is there to show it" % section)
    tl = result.get("timeline")
    if data["timeline"]["views"] and (not tl or tl["pixels"] == 0):
        fail("the timeline canvas is empty")
    n_findings = len(data["analysis"]["findings"]) + len(data["analysis"]["diagnostics"])
    if len(result["findings"]) != n_findings:
        fail("%d findings clicked, the analysis has %d" % (len(result["findings"]), n_findings))
    outlined = 0
    for f, h in zip(result["findings"], data["highlights"]):
        if not f["selected"]:
            fail("finding %d (%s) not selected by a click" % (f["index"], f["id"]))
        if h["view"] is None:
            continue
        d = f["draw"] or {}
        if f["view"] != h["view"] or d.get("view") != h["view"]:
            fail("finding %d (%s): timeline shows window %s, its evidence is in %s" % (f["index"], f["id"], f["view"], h["view"]))
        if not d.get("band"):
            fail("finding %d (%s): no evidence band drawn" % (f["index"], f["id"]))
        if d.get("outlined") != len(h["events"]):
            fail("finding %d (%s): %s evidence events outlined, %d in the window" % (f["index"], f["id"], d.get("outlined"), len(h["events"])))
        outlined += d.get("outlined", 0)
    return outlined


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proflint", required=True)
    ap.add_argument("--source-dir", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--realdata", default=None)
    ap.add_argument("--keep", default=None, help="folder to keep the HTML files in")
    ap.add_argument("--browser", default="all", choices=["all", "chromium", "firefox"])
    args = ap.parse_args()
    src = os.path.abspath(args.source_dir)
    chromium = find_chromium() if args.browser in ("all", "chromium") else None
    firefox = bidi.find_firefox() if args.browser in ("all", "firefox") else None
    for name, path, package in (("Chromium", chromium, "chromium"), ("Firefox", firefox, "firefox-esr")):
        if not path and args.browser in ("all", package.split("-")[0]):
            print("SKIPPED (visible): no %s found (scripts/setup.sh installs Debian's `%s`)" % (name, package))
    if not chromium and not firefox:
        print("SKIPPED: no browser found; the HTML report was not checked in a browser")
        return 77
    realdata = args.realdata or os.path.join(src, "..", "shared", "realdata")
    fx = lambda p: os.path.join(src, "fixtures", p)
    rd = lambda p: os.path.join(realdata, p)
    cases = [
        ("sample_train", ["analyze", fx("sample_train.json.gz")]),
        ("sample_amp", ["analyze", fx("sample_amp.json.gz")]),
        ("sample_train_nsys", ["analyze", fx("sample_train.nsys.sqlite")]),
        ("ddp2_two_ranks", ["analyze", fx("ddp2_rank0.json.gz"), fx("ddp2_rank1_slow30.json.gz")]),
        ("ddp4_dataloader_job", ["analyze"] + [fx("jobs/ddp4_dataloader_r2/rank%d.json.gz" % r) for r in range(4)]),
        ("compare_slow10", ["compare", fx("compare/base.json.gz"), fx("compare/slow10_outlier.json.gz")]),
        # Sections drawn only when a trace has their facts (generated fixtures, scripts/gen_profile.py).
        # The last item names the charts/tables the case must show, so that a page dropping a section fails.
        # nvsmi_epoch_mlp_utc+2.csv, checked by hand with python3's csv module: 40 samples, utilization.gpu max
        # 97 % (mean 75.8 %), memory.used peak 10247 MiB of 81920 MiB = 12.5085 %: the chart's drawn maxima.
        ("samples_beside_trace", ["analyze", fx("samples/epoch_mlp_trace.json.gz"), fx("samples/nvsmi_epoch_mlp_utc+2.csv")],
         ["system-t1-d0"]),
        ("samples_dcgmi_alone", ["analyze", fx("samples/dcgmi_2gpu.txt")], ["system-t1-d0", "system-t1-d1"]),
        ("samples_operator_log", ["analyze", "--operator-spec", fx("samples/roi_generator_spec.yaml"),
                                  fx("samples/roi_generator_operator.log")], ["table-operators-t1"]),
        ("host_io", ["analyze", fx("host_io.nsys.sqlite")], ["host-t1", "table-oscalls-t1"]),
        ("host_cpu", ["analyze", fx("host_cpu.nsys.sqlite")], ["table-hotspots-t1"]),
        ("cuda_graph_captured", ["analyze", fx("cuda_graph_captured.json.gz")], ["table-graphs-t1"]),
        ("cuda_graph_replayed", ["analyze", fx("cuda_graph_replayed.json.gz")], ["table-graphs-t1"]),
        ("compile_graph_break", ["analyze", fx("compile_graph_break.json.gz")], ["compiled-t1", "table-regions-t1"]),
    ]
    real = [
        ("real_kineto_training_resnet50", ["analyze", rd("kineto/tb_resnet50_v100_workers0.pt.trace.json.gz")]),
        ("real_nsys_h100_2gpu", ["analyze", rd("nsys/nsys2026_h100_2gpu_1s.sqlite")]),
        ("real_kineto_inference_alexnet", ["analyze", rd("kineto/hta_alexnet_a100_inference.json.gz")]),
    ]
    if os.path.isdir(realdata):
        cases += real
    else:
        print("SKIPPED (visible): %s is absent: the three real-profile cases did not run" % realdata)
    failures = []
    outlined_total = 0
    work = tempfile.mkdtemp(prefix="proflint-html-")
    out_dir = args.keep or work
    os.makedirs(out_dir, exist_ok=True)
    ff = None
    try:
        if firefox:
            try:
                ff = bidi.Firefox(firefox, os.path.join(work, "profile-firefox"))
            except (AssertionError, OSError) as e:
                failures.append("firefox: %s" % e)
        for case in cases:
            name, cmd, must = case[0], case[1], (case[2] if len(case) > 2 else [])
            page = os.path.join(out_dir, name + ".html")
            t0 = time.time()
            proc = subprocess.run([args.proflint] + cmd + ["--format", "html", "-o", page], capture_output=True, text=True,
                                  timeout=300, cwd=src)
            if proc.returncode not in (0, 1) or not os.path.exists(page):
                failures.append("%s: proflint exited %d: %s" % (name, proc.returncode, proc.stderr[-500:]))
                continue
            t_proflint = time.time() - t0
            runners = []
            if chromium:
                runners.append(("chromium", lambda: run_browser(chromium, page, os.path.join(work, "profile-" + name))))
            if ff:
                runners.append(("firefox", lambda: run_firefox(ff, page)))
            for browser, run in runners:
                t1 = time.time()
                label = "%s [%s]" % (name, browser)
                try:
                    result, console = run()
                    outlined_total += check_case(label, page, result, console, failures, must)
                except (AssertionError, subprocess.TimeoutExpired, json.JSONDecodeError, OSError) as e:
                    failures.append("%s: %s" % (label, e))
                    continue
                draws = (result.get("timeline") or {}).get("draws", [])
                slowest = max(draws, key=lambda d: d["ms"]) if draws else None
                print("ok %-42s %8.1f KiB  proflint %.1f s, browser %.1f s%s" % (
                    label, os.path.getsize(page) / 1024, t_proflint, time.time() - t1,
                    ", timeline redraw %.1f ms for %d events" % (slowest["ms"], slowest["events"]) if slowest else ""))
        if outlined_total == 0:
            failures.append("no case outlined any evidence event in the timeline")
    finally:
        if ff:
            ff.__exit__(None, None, None)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
