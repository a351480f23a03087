#!/usr/bin/env python3
"""Before/after timing of whole commands, interleaved, medians of N (not a test: run by hand).

    bench/ab.py '{"before": ["old/proflint", "analyze", "F", "--format", "json", "-o", "/tmp/a.json"],
                  "after":  {"env": {"PROFLINT_JSON_KERNEL": "generic"}, "cmd": ["build/proflint", ...]}}' [N]

Each label's command runs N times (default 3), the labels taking turns so that a change in the
machine's load hits both sides alike. For each label it prints the medians of wall seconds, CPU
seconds (user + system of all threads, /usr/bin/time), peak RSS, the import and derive stages of
PROFLINT_TIMINGS (wall and CPU), `timing nsys_reader_thread_cpu`, and proflint_floor's seconds.
On a shared machine CPU seconds are the figure to compare: wall time follows other people's load.
"""
import json
import os
import statistics
import subprocess
import sys


def run(cmd, env=None):
    p = subprocess.run(["/usr/bin/time", "-f", "TIME %e %U %S %M"] + cmd, capture_output=True, text=True,
                       env=dict(os.environ, PROFLINT_TIMINGS="1", **(env or {})))
    r = {}
    for line in (p.stderr + p.stdout).splitlines():
        f = line.split()
        if line.startswith("TIME "):
            r["wall"] = float(f[1])
            r["cpu"] = float(f[2]) + float(f[3])
            r["rss_mib"] = int(f[4]) / 1024
        elif line.startswith("timing ") and f[1] in ("import", "derive") and len(f) > 5:
            r[f[1]] = r.get(f[1], 0) + float(f[2]) / 1000
            r[f[1] + "_cpu"] = r.get(f[1] + "_cpu", 0) + float(f[5]) / 1000
        elif line.startswith("timing nsys_reader_thread_cpu "):
            r["reader_thread_cpu"] = r.get("reader_thread_cpu", 0) + float(f[2]) / 1000
        elif line.startswith("floor "):
            r["floor_s"] = float(f[3])
    return r


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    cases = json.loads(sys.argv[1])
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    res = {k: [] for k in cases}
    for _ in range(reps):
        for k, cmd in cases.items():
            env = None
            if isinstance(cmd, dict):
                env, cmd = cmd["env"], cmd["cmd"]
            res[k].append(run(cmd, env))
    for k, rs in res.items():
        keys = sorted(set().union(*rs))
        med = {kk: round(statistics.median(r.get(kk, 0) for r in rs), 3) for kk in keys}
        print(k, json.dumps(med), "wall of each run:", [round(r.get("wall", 0), 2) for r in rs])
    print("load average after:", [round(x, 1) for x in os.getloadavg()])


if __name__ == "__main__":
    main()
