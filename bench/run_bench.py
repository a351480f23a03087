#!/usr/bin/env python3
"""proflint's performance benchmark (issue 7): synthetic profiles of 10^5..10^7 events in both formats.

    bench/run_bench.py [--sizes 1e5,1e6,1e7] [--formats json,json.gz,sqlite] [--repeat 3]
                       [--build build-perf] [--dir /tmp/proflint-bench] [--out bench/results.json]

For each format and size it generates the input once (scripts/gen_profile.py, seed 7, 2 ranks of
DDP, planted problems; cached in --dir, never in the repository), then measures, each as the median
of --repeat processes:
  * the read-only floor of that file (build/proflint_floor): gzip inflate alone (the build's
    inflater: ISA-L igzip where built with it; `proflint_floor inflate-zlib` measures zlib), inflate + the
    importer's scanner + simdjson parse of every event with no store (JSON), or a scan of every
    column of the kernel/runtime/memcpy/memset/sync/NVTX/StringIds tables (nsys SQLite);
  * `proflint analyze FILE --format json` (ingest + derive + every detector and shipped Lua rule):
    import and derive seconds from PROFLINT_TIMINGS=1, end-to-end seconds and peak RSS from
    /usr/bin/time; analyze seconds = end-to-end - import - derive (so it includes process start
    and writing the report, a few ms).
It writes every figure to --out (JSON) and a CSV next to it, and prints a markdown table for
docs/benchmarks.md. Not a test: timings depend on the machine and its load (printed with the table).
"""
import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def parse_size(s):
    return int(float(s))


def generate(dirname, fmt, n):
    os.makedirs(dirname, exist_ok=True)
    tag = "e%d" % round(__import__("math").log10(n)) if n in (10**5, 10**6, 10**7) else "n%d" % n
    path = os.path.join(dirname, "%s.%s" % (tag, fmt))
    if os.path.exists(path):
        return path
    gen = [sys.executable, os.path.join(ROOT, "scripts", "gen_profile.py"), "--events", str(n), "--gpus", "2",
           "--seed", "7", "--plant", "host_sync,small_kernels,pageable_memcpy", "--quiet"]
    t0 = time.time()
    if fmt == "json.gz":
        plain = generate(dirname, "json", n)
        with open(path + ".tmp", "wb") as out:  # same bytes as --format kineto-gz would give, faster
            subprocess.run(["gzip", "-6", "-n", "-c", plain], check=True, stdout=out)
        os.rename(path + ".tmp", path)
    else:
        sh(gen + ["--format", "nsys" if fmt == "sqlite" else "kineto", "-o", path + ".tmp." + fmt])
        os.rename(path + ".tmp." + fmt, path)
    print("generated %s in %.1f s (%.1f MiB)" % (path, time.time() - t0, os.path.getsize(path) / 2**20), file=sys.stderr)
    return path


def floor(build, mode, path):
    out = sh([os.path.join(build, "proflint_floor"), mode, path]).stdout.split()
    return int(out[2]), float(out[3])


def proflint(build, path):
    res = "/tmp/proflint_bench_out.json"
    p = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M %U %S", os.path.join(build, "proflint"), "analyze", path,
                        "--format", "json", "-o", res], env=dict(os.environ, PROFLINT_TIMINGS="1"),
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit("proflint failed on %s:\n%s" % (path, p.stderr))
    t = {}
    for line in p.stderr.splitlines():
        f = line.split()
        if line.startswith("timing "):
            t[f[1]] = t.get(f[1], 0.0) + float(f[2]) / 1000
        elif line.startswith("TIME "):
            t["total"] = float(f[1])
            t["rss_kib"] = int(f[2])
            t["cpu"] = float(f[3]) + float(f[4])  # user + system, all threads
    return t


def machine(build=None):
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem = int(open("/proc/meminfo").readline().split()[1]) / 2**20
    except OSError:
        mem = 0
    cxx = ""
    try:
        cxx = sh(["c++", "--version"]).stdout.splitlines()[0]
    except Exception:
        pass
    libs = ""
    if build:
        try:  # the simdjson kernel and gzip inflater this binary picks on this CPU
            libs = "; ".join(sh([os.path.join(build, "proflint"), "--version"]).stdout.splitlines()[1:])
        except Exception:
            pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem, 1), "kernel": platform.release(),
            "compiler": cxx, "libraries": libs}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1e5,1e6")
    ap.add_argument("--formats", default="json,json.gz,sqlite")
    ap.add_argument("--repeat", type=int, default=3, help="processes per measurement (median); 1 for 10^7")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--dir", default="/tmp/proflint-bench")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results.json"))
    ap.add_argument("--report", metavar="RESULTS_JSON", help="only print the table of an earlier run")
    a = ap.parse_args()
    if a.report:
        report(json.load(open(a.report)))
        return
    sizes = [parse_size(s) for s in a.sizes.split(",")]
    formats = a.formats.split(",")
    rows = []
    load_before = os.getloadavg()
    for n in sizes:
        for fmt in formats:
            path = generate(a.dir, fmt, n)
            reps = a.repeat if n < 10**7 else 1
            runs = [proflint(a.build, path) for _ in range(reps)]
            med = lambda k: statistics.median(r.get(k, 0.0) for r in runs)  # noqa: E731
            if fmt == "sqlite":
                fl = [floor(a.build, "scan", path) for _ in range(reps)]
                inflate_s = None
            else:
                fl = [floor(a.build, "parse", path) for _ in range(reps)]
                inflate_s = statistics.median(floor(a.build, "inflate", path)[1] for _ in range(reps)) if fmt == "json.gz" else None
            events = fl[0][0]
            floor_s = statistics.median(x[1] for x in fl)
            row = {"format": fmt, "size": n, "file": os.path.basename(path), "file_mib": round(os.path.getsize(path) / 2**20, 1),
                   "events": events, "import_s": round(med("import"), 3), "derive_s": round(med("derive"), 3),
                   "total_s": round(med("total"), 3), "cpu_s": round(med("cpu"), 2), "rss_mib": round(med("rss_kib") / 1024, 1),
                   "floor_s": round(floor_s, 3), "inflate_s": round(inflate_s, 3) if inflate_s is not None else None}
            row["analyze_s"] = round(max(0.0, row["total_s"] - row["import_s"] - row["derive_s"]), 3)
            row["ingest_ev_per_s"] = int(events / row["import_s"]) if row["import_s"] else 0
            row["rss_bytes_per_event"] = int(med("rss_kib") * 1024 / events) if events else 0
            row["import_over_floor"] = round(row["import_s"] / floor_s, 2) if floor_s else None
            row["total_over_floor"] = round(row["total_s"] / floor_s, 2) if floor_s else None
            if inflate_s:
                row["import_over_inflate"] = round(row["import_s"] / inflate_s, 2)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    result = {"machine": machine(a.build), "load_before": [round(x, 2) for x in load_before],
              "load_after": [round(x, 2) for x in os.getloadavg()], "date": time.strftime("%Y-%m-%d"), "rows": rows}
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(os.path.splitext(a.out)[0] + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    report(result)


def report(result):
    rows = result["rows"]
    m = result["machine"]
    print("Machine: %s, %d cores, %.0f GiB, Linux %s, %s. Load average %s before, %s after." %
          (m["cpu"], m["cores"], m["memory_gib"], m["kernel"], m["compiler"], result["load_before"][0], result["load_after"][0]))
    if m.get("libraries"):
        print("Input libraries: %s." % m["libraries"])
    print()
    print("| format | events | MiB | import s | ingest ev/s | derive s | analyze s | total s | CPU s | peak RSS MiB | B/event "
          "| floor s | import/floor | total/floor | import/inflate |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %s | %s | %.3f | %s | %.3f | %.3f | %.2f | %s | %.1f | %d | %.3f | %.2f | %.2f | %s |" % (
            r["format"], format(r["events"], ","), r["file_mib"], r["import_s"], format(r["ingest_ev_per_s"], ","), r["derive_s"],
            r["analyze_s"], r["total_s"], ("%.2f" % r["cpu_s"]) if "cpu_s" in r else "—", r["rss_mib"], r["rss_bytes_per_event"], r["floor_s"], r["import_over_floor"],
            r["total_over_floor"], ("%.2f (inflate %.3f s)" % (r["import_over_inflate"], r["inflate_s"])) if r.get("inflate_s") else "—"))
    by = {(r["format"], r["size"]): r for r in rows}
    for fmt in sorted({r["format"] for r in rows}):
        if (fmt, 10**6) in by and (fmt, 10**7) in by:
            print("\n%s: 10^7 / 10^6 end-to-end time = %.1fx" % (fmt, by[(fmt, 10**7)]["total_s"] / by[(fmt, 10**6)]["total_s"]))

if __name__ == "__main__":
    main()
