"""GPU metrics sampling for generated Nsight Systems exports (`nsys profile --gpu-metrics-devices=all`):
GPU_METRICS(rawTimestamp, timestamp, typeId, metricId, value) and TARGET_INFO_GPU_METRICS(typeId,
sourceId, typeName, metricId, metricName), the column sets of reference/nsys_expert_systems.md, added
to an export written by gen_profile.py --format nsys.

The samples follow the export's own activity, so what the importer must store is known by
construction: every `--period-us` and for every GPU of TARGET_INFO_GPU, the share of the period
covered by that GPU's kernels (busy) and host<->device copies (copy):
  SMs Active [Throughput %]            round(92 * busy)
  SM Issue [Throughput %]              round(55 * busy)
  Tensor Active [Throughput %]         round(tensor * busy), tensor = --tensor-pct (default 5)
  DRAM Read Bandwidth [Throughput %]   round(40 * busy + 10 * copy)
  PCIe RX Throughput [Throughput %]    round(80 * copy)
  GPC Clock Frequency [MHz]            1410 (busy > 0) else 210
A kernel row's GPU is its deviceId mapped through TARGET_INFO_CUDA_DEVICE (pid, cudaId) -> gpuId
when the export has that table (CUDA_VISIBLE_DEVICES per process), else deviceId itself. typeId is
0x10000 | the nsys GPU id (its low byte is what proflint reads as the GPU), metric ids count from 0
per type as nsys numbers them; rawTimestamp is the timestamp on the GPU's own clock (here + 1e9).
"""

import sqlite3

GPU_METRICS_DDL = """CREATE TABLE GPU_METRICS (
    rawTimestamp                INTEGER   NOT NULL,                    -- Raw GPU timestamp.
    timestamp                   INTEGER,                               -- Timestamp converted to the session clock (ns).
    typeId                      INTEGER   NOT NULL,                    -- REFERENCES TARGET_INFO_GPU_METRICS(typeId)
    metricId                    INTEGER   NOT NULL,                    -- REFERENCES TARGET_INFO_GPU_METRICS(metricId)
    value                       INTEGER   NOT NULL                     -- Counter data value
)"""
TARGET_DDL = """CREATE TABLE TARGET_INFO_GPU_METRICS (
    typeId                      INTEGER   NOT NULL,                    -- Type of the metric source (low byte: GPU id).
    sourceId                    INTEGER   NOT NULL,                    -- ID of the metric source.
    typeName                    TEXT      NOT NULL,                    -- Name of the metric source type.
    metricId                    INTEGER   NOT NULL,                    -- ID of the metric.
    metricName                  TEXT      NOT NULL                     -- Metric name.
)"""

METRICS = ["SMs Active [Throughput %]", "SM Issue [Throughput %]", "Tensor Active [Throughput %]",
           "DRAM Read Bandwidth [Throughput %]", "PCIe RX Throughput [Throughput %]", "GPC Clock Frequency [MHz]"]


def _covered(intervals, lo, hi):
    """Length of [lo, hi) covered by the union of `intervals` (sorted by start)."""
    t, total = lo, 0
    for s, e in intervals:
        if e <= t:
            continue
        if s >= hi:
            break
        s = max(s, t)
        e = min(e, hi)
        if e > s:
            total += e - s
            t = e
    return total


def _union(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [tuple(x) for x in out]


def values(busy, copy, tensor_pct):
    return [round(92 * busy), round(55 * busy), round(tensor_pct * busy), round(40 * busy + 10 * copy),
            round(80 * copy), 1410 if busy > 0 else 210]


def add(path, period_us=10_000, tensor_pct=5):
    """Adds GPU_METRICS and TARGET_INFO_GPU_METRICS to the export at `path`; returns the rows added."""
    db = sqlite3.connect(path)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    gpus = [(i, chip) for i, chip in db.execute("SELECT id, COALESCE(chipName, 'GPU') FROM TARGET_INFO_GPU ORDER BY id")]
    mapping = {}
    if "TARGET_INFO_CUDA_DEVICE" in tables:
        mapping = {(pid, cuda): gpu for gpu, cuda, pid in db.execute("SELECT gpuId, cudaId, pid FROM TARGET_INFO_CUDA_DEVICE")}

    def gpu_of(dev, gpid):
        return mapping.get(((gpid >> 24) & 0xFFFFFF, dev), dev)

    busy, copy = {}, {}
    for s, e, dev, gpid in db.execute("SELECT start, end, deviceId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        busy.setdefault(gpu_of(dev, gpid), []).append((s, e))
    if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables:
        for s, e, dev, gpid in db.execute("SELECT start, end, deviceId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                                          "WHERE copyKind IN (1, 2)"):
            copy.setdefault(gpu_of(dev, gpid), []).append((s, e))
    busy = {g: _union(v) for g, v in busy.items()}
    copy = {g: _union(v) for g, v in copy.items()}
    first = min(v[0][0] for v in busy.values())
    last = max(v[-1][1] for v in busy.values())
    period = period_us * 1000
    target, rows = [], []
    for gpu, chip in gpus:
        type_id = 0x10000 | gpu
        for metric_id, name in enumerate(METRICS):
            target.append((type_id, gpu, chip, metric_id, name))
        t = first - first % period
        while t < last:
            b = _covered(busy.get(gpu, []), t, t + period) / period
            c = _covered(copy.get(gpu, []), t, t + period) / period
            for metric_id, v in enumerate(values(b, c, tensor_pct)):
                rows.append((t + 1_000_000_000, t, type_id, metric_id, v))
            t += period
    rows.sort(key=lambda r: (r[1], r[2], r[3]))
    db.execute(TARGET_DDL)
    db.executemany("INSERT INTO TARGET_INFO_GPU_METRICS VALUES (?,?,?,?,?)", target)
    db.execute(GPU_METRICS_DDL)
    db.executemany("INSERT INTO GPU_METRICS VALUES (?,?,?,?,?)", rows)
    db.commit()
    db.execute("VACUUM")
    db.close()
    return len(rows) + len(target)
