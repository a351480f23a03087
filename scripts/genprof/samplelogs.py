"""Sampling logs of a simulated GPU job (issue 17): nvidia-smi --query-gpu CSV, nvidia-smi dmon and
pmon, dcgmi dmon, and the PyTorch memory timeline (export_memory_timeline raw JSON).

The job: N GPUs sampled every --interval seconds for --duration seconds; the first --lead-in and
last --tail seconds are idle (the job not started / finished), and in between every --stall-every
seconds all GPUs stall together for --stall seconds (a checkpoint save). GPU g runs at a mean
activity of --activity percent (GPU 0 at --activity0 when given: a rank doing extra host work).
Memory used is --memory-gib per GPU while the job runs. Output is a pure function of the arguments.

The truth of the job (stall count and time, per-GPU mean activity, peak memory) is printed as JSON
on stderr unless --quiet, so tests can compare proflint's numbers with the generator's.
"""

import argparse
import datetime
import gzip
import json
import random
import sys

DIALECTS = ("nvsmi-csv", "dmon", "pmon", "dcgmi", "memory-timeline", "operator-log")

NVSMI_UNITS = {
    "utilization.gpu": "%", "utilization.memory": "%", "memory.used": "MiB", "memory.total": "MiB",
    "memory.free": "MiB", "power.draw": "W", "power.limit": "W", "temperature.gpu": "", "clocks.sm": "MHz",
    "clocks.max.sm": "MHz", "fan.speed": "%", "pstate": "", "clocks_throttle_reasons.active": "",
}


def parse(argv):
    p = argparse.ArgumentParser(prog="gen_profile.py samples", description=__doc__.split("\n")[0], epilog=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dialect", choices=DIALECTS)
    p.add_argument("--gpus", type=int, default=2)
    p.add_argument("--duration", type=float, default=60.0, help="seconds sampled")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between samples")
    p.add_argument("--lead-in", type=float, default=5.0)
    p.add_argument("--tail", type=float, default=5.0)
    p.add_argument("--stall-every", type=float, default=20.0, help="0: no stalls")
    p.add_argument("--stall", type=float, default=4.0, help="seconds each stall lasts")
    p.add_argument("--activity", type=float, default=85.0, help="mean activity (%%) while running")
    p.add_argument("--activity0", type=float, default=None, help="GPU 0's mean activity (default --activity)")
    p.add_argument("--memory-gib", type=float, default=10.0, help="memory used per GPU while running")
    p.add_argument("--total-gib", type=float, default=80.0, help="device memory")
    p.add_argument("--gpu-name", default="NVIDIA A100-SXM4-80GB")
    p.add_argument("--columns", default="timestamp,index,name,utilization.gpu,memory.used,memory.total,power.draw,"
                                        "temperature.gpu",
                   help="nvsmi-csv: --query-gpu fields in order")
    p.add_argument("--nounits", action="store_true", help="nvsmi-csv: --format=csv,nounits")
    p.add_argument("--na", default="", help="nvsmi-csv: columns whose cells are [N/A] / [Not Supported]")
    p.add_argument("--split-bursts", action="store_true",
                   help="nvsmi-csv without index: let the timestamps of one burst straddle a millisecond boundary")
    p.add_argument("--timestamps", action="store_true", help="dmon/pmon: -o DT (date and time columns)")
    p.add_argument("--start", default="2025/06/01 12:00:00",
                   help="local clock time of the first sample (YYYY/MM/DD HH:MM:SS)")
    p.add_argument("--around", default=None, metavar="TRACE",
                   help="start the log --before seconds before the first event of this Kineto trace, in local time "
                        "UTC+--utc-offset hours (overrides --start)")
    p.add_argument("--before", type=float, default=10.0)
    p.add_argument("--utc-offset", type=float, default=2.0, help="hours: local time = UTC + this")
    p.add_argument("--throttle-every", type=int, default=0,
                   help="nvsmi-csv: every Nth running sample is power-capped (throttle reason 0x4, SM clock 1200 MHz, "
                        "power at the limit); 0: never")
    p.add_argument("--tensor-share", type=float, default=0.6, help="dcgmi: TENSO as a share of SMACT")
    p.add_argument("--dram-share", type=float, default=0.3, help="dcgmi: DRAMA as a share of the activity")
    p.add_argument("--spec-out", default=None, help="operator-log: also write the profiler spec (YAML) here")
    p.add_argument("--read-ms", type=float, default=3000.0, help="operator-log: time of each input-reading line")
    p.add_argument("--seed", default="0")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("-o", "--output", required=True)
    return p.parse_args(argv)


def trace_start_ns(path):
    """First event of a Kineto trace, in Unix-epoch ns (baseTimeNanoseconds + min ts)."""
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    first = min(float(e["ts"]) for e in events if isinstance(e, dict) and "ts" in e and e.get("ph") == "X")
    base = doc.get("baseTimeNanoseconds", 0) if isinstance(doc, dict) else 0
    return int(base + first * 1000)


class Job:
    def __init__(self, a):
        self.a = a
        r = random.Random("proflint-samples:%s" % a.seed)
        self.n = int(round(a.duration / a.interval))
        self.active = []   # [sample][gpu] percent
        self.mem = []      # [sample][gpu] MiB
        stalls = 0
        stall_s = 0.0
        for k in range(self.n):
            t = k * a.interval
            running = a.lead_in <= t < a.duration - a.tail
            stalled = running and a.stall_every > 0 and (t - a.lead_in) % a.stall_every >= a.stall_every - a.stall
            if stalled and (k == 0 or not self._stalled_at(k - 1)):
                stalls += 1
            if stalled:
                stall_s += a.interval
            row_a, row_m = [], []
            for g in range(a.gpus):
                mean = a.activity0 if (g == 0 and a.activity0 is not None) else a.activity
                if running and not stalled:
                    v = max(6.0, min(100.0, r.gauss(mean, 6.0)))
                else:
                    v = 0.0
                row_a.append(int(round(v)))
                row_m.append(int(a.memory_gib * 1024 * (1 if running else 0.02)) + r.randrange(8))
            self.active.append(row_a)
            self.mem.append(row_m)
        self.stalls = stalls
        self.stall_s = stall_s

    def _stalled_at(self, k):
        a = self.a
        t = k * a.interval
        return a.lead_in <= t < a.duration - a.tail and a.stall_every > 0 and \
            (t - a.lead_in) % a.stall_every >= a.stall_every - a.stall

    def truth(self):
        return {
            "samples_per_gpu": self.n, "stalls": self.stalls, "stall_s": round(self.stall_s, 6),
            "mean_active": [round(sum(row[g] for row in self.active) / self.n, 6) for g in range(self.a.gpus)],
            "peak_memory_mib": [max(row[g] for row in self.mem) for g in range(self.a.gpus)],
        }


def local_start(a):
    if a.around:
        utc_ns = trace_start_ns(a.around) - int(a.before * 1e9)
        t = datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=utc_ns // 1000)
        return t + datetime.timedelta(hours=a.utc_offset)
    return datetime.datetime.strptime(a.start, "%Y/%m/%d %H:%M:%S")


def write_nvsmi(a, job, out):
    cols = [c.strip() for c in a.columns.split(",") if c.strip()]
    na = set(c.strip() for c in a.na.split(",") if c.strip())
    start = local_start(a)
    r = random.Random("proflint-samples-jitter:%s" % a.seed)

    def head(c):
        u = NVSMI_UNITS.get(c, "")
        if c == "temperature.gpu" or a.nounits or not u:
            return c
        return "%s [%s]" % (c, u)
    out.write(", ".join(head(c) for c in cols) + "\n")
    for k in range(job.n):
        for g in range(a.gpus):
            jitter_ms = g * 1.3 + r.random() * 0.4
            if a.split_bursts and "index" not in cols and k % 3 == 1:
                jitter_ms += 0.7  # some bursts straddle a millisecond boundary
            t = start + datetime.timedelta(seconds=k * a.interval, milliseconds=jitter_ms)
            act = job.active[k][g]
            mem = job.mem[k][g]
            total = int(a.total_gib * 1024)
            cells = []
            for c in cols:
                unit = "" if a.nounits else NVSMI_UNITS.get(c, "")
                if c in na:
                    cells.append("[N/A]" if (k + g) % 2 else "[Not Supported]")
                    continue
                if c == "timestamp":
                    cells.append(t.strftime("%Y/%m/%d %H:%M:%S.") + "%03d" % (t.microsecond // 1000))
                    continue
                if c == "index":
                    cells.append(str(g))
                    continue
                if c == "name":
                    cells.append(a.gpu_name)
                    continue
                capped = a.throttle_every and act > 0 and k % a.throttle_every == 0
                v = {"utilization.gpu": act, "utilization.memory": act // 2, "memory.used": mem, "memory.total": total,
                     "memory.free": total - mem, "power.draw": "400.00" if capped else "%.2f" % (60 + 3.4 * act),
                     "power.limit": "400.00", "temperature.gpu": 35 + act // 3, "clocks.sm": 1200 if capped else 1410,
                     "clocks.max.sm": 1410, "fan.speed": 40, "pstate": "P0",
                     "clocks_throttle_reasons.active": "0x0000000000000004" if capped else
                     ("0x0000000000000001" if act == 0 else "0x0000000000000000")}.get(c, 0)
                cells.append("%s %s" % (v, unit) if unit else str(v))
            out.write(", ".join(cells) + "\n")


def write_dmon(a, job, out, pmon=False):
    start = local_start(a)
    if pmon:
        names = ["gpu", "pid", "type", "sm", "mem", "enc", "dec", "command"]
        units = ["Idx", "#", "C/G", "%", "%", "%", "%", "name"]
    else:
        names = ["gpu", "pwr", "gtemp", "mtemp", "sm", "mem", "enc", "dec", "mclk", "pclk", "fb"]
        units = ["Idx", "W", "C", "C", "%", "%", "%", "%", "MHz", "MHz", "MB"]
    if a.timestamps:
        names = ["Date", "Time"] + names
        units = ["YYYYMMDD", "HH:MM:SS"] + units
    for k in range(job.n):
        if k % 10 == 0:  # dmon repeats its header
            out.write("# " + " ".join("%6s" % x for x in names) + "\n")
            out.write("# " + " ".join("%6s" % x for x in units) + "\n")
        t = start + datetime.timedelta(seconds=k * a.interval)
        for g in range(a.gpus):
            act = job.active[k][g]
            cells = []
            if a.timestamps:
                cells += [t.strftime("%Y%m%d"), t.strftime("%H:%M:%S")]
            if pmon:
                if act == 0 and job.mem[k][g] < 1024:
                    cells += [str(g), "-", "-", "-", "-", "-", "-", "-"]
                else:
                    cells += [str(g), str(4100 + g), "C", str(act), str(act // 2), "-", "-", "python"]
            else:
                cells += [str(g), str(int(60 + 3.4 * act)), str(35 + act // 3), "-", str(act), str(act // 2), "0", "0",
                          "1593", "1410", str(job.mem[k][g])]
            out.write("  " + " ".join("%6s" % x for x in cells) + "\n")


def write_dcgmi(a, job, out):
    out.write("#Entity   GPUTL  MCUTL  POWER     SMACT  TENSO  DRAMA  FBUSD\n")
    out.write("ID                      W                              MB\n")
    for k in range(job.n):
        for g in range(a.gpus):
            act = job.active[k][g]
            out.write("GPU %-5d %-6d %-6d %-9.3f %-6.3f %-6.3f %-6.3f %d\n"
                      % (g, act, act // 2, 60 + 3.4 * act, act / 100.0 * 0.9, act / 100.0 * 0.9 * a.tensor_share,
                         act / 100.0 * a.dram_share,
                         job.mem[k][g]))


def write_memory_timeline(a, out):
    r = random.Random("proflint-memtl:%s" % a.seed)
    t0 = 1_700_000_000_000_000_000
    events = [[-1, 1, 4 << 20, 0], [-1, 1, 1 << 20, 1]]  # parameters and optimizer state before the capture
    t = t0
    for step in range(4):
        acts = []
        for layer in range(6):
            t += 1000 + r.randrange(500)
            n = (8 + layer) << 20
            events.append([t, 2, n, 4])
            acts.append(n)
        t += 2000
        events.append([t, 2, 4 << 20, 5])                 # gradients
        events.append([t, 3, -(4 << 20), 0])             # parameter update: version bump
        events.append([t, 3, 4 << 20, 0])
        for n in acts:
            t += 700
            events.append([t, 4, -n, 4])
        t += 500
        events.append([t, 4, -(4 << 20), 5])
    out.write(json.dumps(events))


def write_operator_log(a, out):
    """A Clara-style operator log: module lines '<text><KEY><text>: <ms>', the input read in two
    parts (a repeated keyword, summed), and the total under the spec's totalTimeStr."""
    r = random.Random("proflint-oplog:%s" % a.seed)
    modules = [("Readinginput", a.read_ms), ("Histogramgeneration", 120.0), ("Volumethresholding", 340.0),
               ("filtering", 410.0), ("3Dconnectedcomponentanalysis", 650.0), ("Readinginput", a.read_ms / 2),
               ("PublishingOutput", 280.0)]
    total = 0.0
    out.write("[INFO] operator roi-generator starting\n")
    for i, (key, ms) in enumerate(modules):
        v = round(ms * (0.95 + 0.1 * r.random()), 3)
        total += v
        out.write("[INFO] 2025-06-01 12:00:%02d %s elapsed time in ms: %.3f\n" % (i, key, v))
        out.write("[DEBUG] step %d done, buffers released\n" % i)
    out.write("[INFO] ROIgeneratorElapsedTime: %.3f\n" % round(total + 55.0, 3))
    if a.spec_out:
        with open(a.spec_out, "w") as f:
            f.write('profiler:\n  totalTimeStr: "ROIgeneratorElapsedTime"\n  opModules: ["Readinginput", '
                    '"Histogramgeneration", "Volumethresholding",\n    "filtering", "3Dconnectedcomponentanalysis", '
                    '"PublishingOutput"]\n  name: "roi-generator"\n')


def main(argv):
    a = parse(argv)
    job = Job(a)
    import io
    buf = io.StringIO()
    if a.dialect == "nvsmi-csv":
        write_nvsmi(a, job, buf)
    elif a.dialect in ("dmon", "pmon"):
        write_dmon(a, job, buf, pmon=a.dialect == "pmon")
    elif a.dialect == "dcgmi":
        write_dcgmi(a, job, buf)
    elif a.dialect == "operator-log":
        write_operator_log(a, buf)
    else:
        write_memory_timeline(a, buf)
    data = buf.getvalue().encode()
    if a.output.endswith(".gz"):
        data = gzip.compress(data, mtime=0)  # no file name, no time: same arguments, same bytes
    with open(a.output, "wb") as f:
        f.write(data)
    if not a.quiet:
        sys.stderr.write(json.dumps(job.truth()) + "\n")
    return 0
