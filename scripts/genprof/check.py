#!/usr/bin/env python3
"""Sanity checker for generated (or real) profiles: `python3 scripts/genprof/check.py FILE...`.

Kineto JSON: parses, every GPU activity has its runtime call (same correlation, starting after it),
ac2g/fwdbwd flows pair up, ProfilerSteps don't overlap, CPU ops nest per thread, a stream never runs
two activities at once. nsys SQLite: tables/row counts, kernel<->runtime correlation per process,
'step N' ranges don't overlap. Prints a short expert-style summary; exit code 1 on a failed check.
"""

import collections
import gzip
import json
import re
import sqlite3
import sys

TC = re.compile(r"(xmma_gemm_(bf16|f16|tf32)|_(bf16|f16)bf16|tensorop|s16816|s1688|s884|h884|nvjet|wgmma|tensor16x8|"
                r"fp16_s\d|_implicit_gemm_(bf16|f16|tf32))", re.I)
NOT_TC = re.compile(r"(sgemm|ffma|simt|scudnn|implicit_convolve|wgrad_alg0|dgrad_engine)", re.I)


def is_tc(name):
    return bool(TC.search(name)) and not NOT_TC.search(name)


def fail(errs, msg):
    errs.append(msg)


def check_kineto(path):
    op = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with op(path, "rb") as f:
        d = json.load(f)
    ev = d if isinstance(d, list) else d["traceEvents"]
    errs = []
    cats = collections.Counter(e.get("cat") for e in ev)
    gpu_cats = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
    rt_cats = {"cuda_runtime", "cuda_driver", "Runtime"}
    rts = {}
    for e in ev:
        if e.get("cat") in rt_cats:
            rts[e["args"]["correlation"]] = e
    gpu = [e for e in ev if e.get("cat") in gpu_cats and e.get("ph") == "X"]
    for e in gpu:
        r = rts.get(e["args"].get("correlation"))
        if r is None:
            fail(errs, "GPU activity without runtime correlation: %s" % e["name"][:60])
        elif float(e["ts"]) < float(r["ts"]):
            fail(errs, "GPU activity starts before its launch: corr %s" % e["args"]["correlation"])
    flows = collections.defaultdict(lambda: [0, 0])
    for e in ev:
        if e.get("ph") in ("s", "f"):
            flows[(e.get("cat"), e["id"])][0 if e["ph"] == "s" else 1] += 1
    bad = [k for k, v in flows.items() if v != [1, 1]]
    if bad:
        fail(errs, "%d unpaired flow ids, e.g. %s" % (len(bad), bad[:3]))
    steps = sorted((float(e["ts"]), float(e["ts"]) + float(e["dur"]), e["name"]) for e in ev
                   if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")
                   and e.get("cat") in ("user_annotation", "cpu_op", "Operator"))
    for a, b in zip(steps, steps[1:]):
        if b[0] < a[1]:
            fail(errs, "steps overlap: %s %s" % (a[2], b[2]))
    # nesting of CPU ops per thread
    by_thread = collections.defaultdict(list)
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation", "Operator", "cuda_runtime", "Runtime"):
            by_thread[(e["pid"], e["tid"])].append((float(e["ts"]), -float(e["dur"]), e["name"]))
    nest_bad = 0
    for k, lst in by_thread.items():
        lst.sort()
        stack = []
        for ts, nd, name in lst:
            end = ts - nd
            while stack and stack[-1] <= ts:
                stack.pop()
            if stack and end > stack[-1] + 1e-6:
                nest_bad += 1
            stack.append(end)
    if nest_bad:
        fail(errs, "%d CPU events partially overlap their parent" % nest_bad)
    by_stream = collections.defaultdict(list)
    for e in gpu:
        by_stream[(e["pid"], e["tid"])].append((float(e["ts"]), float(e["ts"]) + float(e["dur"])))
    ov = 0
    for lst in by_stream.values():
        lst.sort()
        for x, y in zip(lst, lst[1:]):
            if y[0] < x[1] - 1e-6:
                ov += 1
    if ov:
        fail(errs, "%d overlapping activities on one stream" % ov)
    # summary
    kern = [e for e in gpu if e.get("cat") in ("kernel", "Kernel")]
    kt = sum(float(e["dur"]) for e in kern) or 1.0
    tc = sum(float(e["dur"]) for e in kern if is_tc(e["name"]))
    fp32 = sum(float(e["dur"]) for e in kern if NOT_TC.search(e["name"]))
    nccl = [e for e in kern if e["name"].startswith("nccl")]
    span = (max(float(e["ts"]) + float(e["dur"]) for e in gpu) - min(float(e["ts"]) for e in gpu)) if gpu else 1
    busy = union([(float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in gpu if e["tid"] in (7, "stream 7")])
    dl = [e for e in ev if "DataLoader" in str(e.get("name", "")) and e.get("ph") == "X"]
    dls = sum(float(e["dur"]) for e in dl)
    stt = sum(b - a for a, b, _ in steps) or 1
    cpy = collections.Counter(e["name"] for e in gpu if e.get("cat") in ("gpu_memcpy", "Memcpy"))
    syncs = collections.Counter(e["name"] for e in ev if e.get("cat") in rt_cats and "Synchronize" in e["name"])
    dev = d.get("deviceProperties", [{}])[0] if isinstance(d, dict) else {}
    print("%s: %d events %s" % (path, len(ev), dict(cats.most_common(12))))
    print("  device %s cc%s.%s; steps %d (%s..%s), median step %.2f ms; kernels %d" % (
        dev.get("name"), dev.get("computeMajor"), dev.get("computeMinor"), len(steps),
        steps[0][2] if steps else "-", steps[-1][2] if steps else "-",
        sorted(b - a for a, b, _ in steps)[len(steps) // 2] / 1000 if steps else 0, len(kern)))
    print("  stream-7 busy %.1f%% of GPU span; TC-named %.0f%%, FP32-SIMT %.0f%% of kernel time; NCCL kernels %d (%.1f/step)"
          % (100 * busy / span, 100 * tc / kt, 100 * fp32 / kt, len(nccl), len(nccl) / max(1, len(steps))))
    print("  DataLoader %.1f%% of step time; memcpy %s; syncs %s" % (100 * dls / stt, dict(cpy), dict(syncs)))
    tiny = sum(1 for e in kern if float(e["dur"]) < 5)
    print("  kernels < 5 us: %d (%.0f%%)" % (tiny, 100 * tiny / max(1, len(kern))))
    return errs


def union(iv):
    iv.sort()
    tot = 0.0
    cs = ce = None
    for a, b in iv:
        if cs is None or a > ce:
            if cs is not None:
                tot += ce - cs
            cs, ce = a, b
        else:
            ce = max(ce, b)
    if cs is not None:
        tot += ce - cs
    return tot


def check_nsys(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    errs = []
    tables = [r[0] for r in db.execute("select name from sqlite_master where type='table' order by name")]
    counts = {t: db.execute("select count(*) from %s" % t).fetchone()[0] for t in tables}
    main = {k.replace("CUPTI_ACTIVITY_KIND_", "K."): v for k, v in counts.items()
            if k.startswith("CUPTI") or k in ("NVTX_EVENTS", "StringIds")}
    print("%s: %d tables; %s" % (path, len(tables), main))
    meta = dict(db.execute("select name, value from META_DATA_EXPORT"))
    print("  nsys %s, export schema %s" % (meta.get("EXPORT_PRODUCT_VERSION"), meta.get("EXPORT_SCHEMA_VERSION")))
    rt = {}
    for corr, gtid, start in db.execute("select correlationId, globalTid, start from CUPTI_ACTIVITY_KIND_RUNTIME"):
        rt[(corr, (gtid >> 24) << 24)] = start
    for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        if t not in tables:
            continue
        bad = 0
        for corr, gpid, start in db.execute("select correlationId, globalPid, start from %s" % t):
            r = rt.get((corr, gpid))
            if r is None or r > start:
                bad += 1
        if bad:
            fail(errs, "%d rows of %s without an earlier runtime call in their process" % (bad, t))
    bad_ids = db.execute("""select count(*) from CUPTI_ACTIVITY_KIND_KERNEL where shortName not in (select id from StringIds)
        or demangledName not in (select id from StringIds)""").fetchone()[0]
    if bad_ids:
        fail(errs, "%d kernel names not in StringIds" % bad_ids)
    if "NVTX_EVENTS" in tables:
        steps = db.execute("select globalTid, start, end, text from NVTX_EVENTS where text like 'step %' order by globalTid, start").fetchall()
        for x, y in zip(steps, steps[1:]):
            if x[0] == y[0] and y[1] < x[2]:
                fail(errs, "step ranges overlap: %s / %s" % (x[3], y[3]))
        print("  'step N' ranges: %d; emit_nvtx ranges: %d" % (len(steps), counts["NVTX_EVENTS"] - len(steps)))
    gpus = db.execute("select id, name, computeMajor, computeMinor, smCount from TARGET_INFO_GPU").fetchall() if "TARGET_INFO_GPU" in tables else []
    print("  GPUs %s" % gpus)
    rows = db.execute("""select s.value, sum(k.end-k.start), count(*) from CUPTI_ACTIVITY_KIND_KERNEL k
        join StringIds s on s.id = k.demangledName group by 1""").fetchall()
    tot = sum(r[1] for r in rows) or 1
    tc = sum(r[1] for r in rows if is_tc(r[0]))
    f32 = sum(r[1] for r in rows if NOT_TC.search(r[0]))
    print("  kernel time TC-named %.0f%%, FP32-SIMT %.0f%%, distinct kernels %d" % (100 * tc / tot, 100 * f32 / tot, len(rows)))
    cp = db.execute("""select e.name, m.srcKind, count(*), sum(bytes) from CUPTI_ACTIVITY_KIND_MEMCPY m
        join ENUM_CUDA_MEMCPY_OPER e on e.id = m.copyKind group by 1, 2""").fetchall() if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables else []
    print("  memcpy (kind, srcKind, n, bytes): %s" % cp)
    sy = db.execute("""select s.value, count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id = r.nameId
        group by 1 order by 2 desc""").fetchall()
    print("  runtime: %s" % sy)
    return errs


def main(paths):
    rc = 0
    for p in paths:
        with open(p, "rb") as f:
            head = f.read(16)
        errs = check_nsys(p) if head.startswith(b"SQLite format 3") else check_kineto(p)
        for e in errs:
            print("  FAIL: " + e)
        if errs:
            rc = 1
        else:
            print("  OK")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
