"""Kineto / PyTorch profiler Chrome-trace JSON writers.

KinetoWriter writes the current format (categories cpu_op, user_annotation, cuda_runtime, kernel,
gpu_memcpy, gpu_memset, ac2g/fwdbwd flows, cpu_instant_event [memory], gpu_user_annotation),
one event per line, streamed: records are formatted and written as they arrive.
LegacyWriter writes the Jan-2021 bare-array flavour (Operator/Runtime/Kernel/Memcpy/Memset/async,
string tids like "stream 7", lower-case "external id", cat-less [memory] events, int µs).
"""

import gzip
import io
import json

from .sim import OP, RT, KER, CPY, SET, SYNC, MEM, FLOW, GANN, NVTX, RT_API, CPY_KINDS, USER_ANN


def _open(path, gz, level):
    raw = open(path, "wb")
    if gz:
        # filename='' and mtime=0 keep the gzip header free of run-dependent bytes
        return raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=level)
    return raw, raw


def _ktail(ks, gpu):
    gx, gy, gz = ks.grid
    bx, by, bz = ks.block
    blocks = gx * gy * gz
    threads = bx * by * bz
    bpsm = blocks / gpu.sms
    wpb = (threads + 31) // 32
    wpsm = bpsm * wpb
    max_w = gpu.max_thr_sm // 32
    occ = int(min(100.0, 100.0 * min(wpsm, max_w) / max_w))
    return ('"registers per thread": %d, "shared memory": %d, "blocks per SM": %s, "warps per SM": %s, '
            '"grid": [%d, %d, %d], "block": [%d, %d, %d], "est. achieved occupancy %%": %d'
            % (ks.regs, ks.smem_static + ks.smem_dyn, _g(bpsm), _g(wpsm), gx, gy, gz, bx, by, bz, occ))


def _g(x):
    s = "%.6f" % x
    s = s.rstrip("0")
    return s + "0" if s.endswith(".") else s


class KinetoWriter:
    def __init__(self, path, cfg, gpu, sim):
        self.cfg = cfg
        self.gpu = gpu
        self.sim = sim
        self.raw, self.f = _open(path, cfg.gz, cfg.gzip_level)
        self.int_us = cfg.int_us
        self.E = cfg.epoch_base_ns
        self.count = 0
        self.rt_names = [(json.dumps(n), cb) for n, cb, _, _ in RT_API]
        self.launchers = [x[3] for x in RT_API]
        self.cpy_names = [json.dumps(k[0]) for k in CPY_KINDS]
        hdr = {"schemaVersion": 1,
               "deviceProperties": [gpu.props(i) for i in range(max(cfg.gpus, cfg.visible_gpus))]}
        if cfg.gpus > 1:
            g = cfg.gpus
            hdr["distributedInfo"] = {
                "backend": "nccl", "rank": sim.rank, "world_size": g, "pg_count": 1,
                "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl",
                               "pg_size": g, "ranks": list(range(g))}],
                "nccl_version": "2.21.5"}
        if cfg.record_shapes:
            hdr["record_shapes"] = 1
        if cfg.profile_memory:
            hdr["profile_memory"] = 1
        hdr["cupti_version"] = 24 if gpu.cc >= (9, 0) else 22
        hdr["cuda_runtime_version"] = 12040
        hdr["cuda_driver_version"] = 12080
        hdr["trace_id"] = cfg.trace_id
        hdr["displayTimeUnit"] = "ms"
        if not self.int_us:
            hdr["baseTimeNanoseconds"] = self.E
        body = json.dumps(hdr, indent=2)
        self.f.write((body[:-2] + ',\n  "traceEvents": [\n').encode())
        self.first = True

    # ------------------------------------------------------------------ time formatting
    def tsd(self, s, e):
        if self.int_us:
            a = (self.E + s) // 1000
            return str(a), str((self.E + e) // 1000 - a)
        d = e - s
        return "%d.%03d" % divmod(s, 1000), "%d.%03d" % divmod(d, 1000)

    def ts(self, s):
        if self.int_us:
            return str((self.E + s) // 1000)
        return "%d.%03d" % divmod(s, 1000)

    # ------------------------------------------------------------------ records
    def write(self, recs):
        pid = self.sim.pid
        gpu = self.gpu
        rt_names = self.rt_names
        launchers = self.launchers
        tsd = self.tsd
        ts_ = self.ts
        lines = []
        ap = lines.append
        rt_tid = {}
        for r in recs:
            k = r[0]
            if k == OP:
                _, tid, cat, o, s, e, ext, seq, bwd = r
                a, d = tsd(s, e)
                extra = ""
                if seq >= 0:
                    extra = ', "Fwd thread id": %d, "Sequence number": %d' % (1 if bwd else 0, seq)
                if o.args:
                    extra += ", " + o.args
                ap('{"ph": "X", "cat": "%s", "name": %s, "pid": %d, "tid": %d, "ts": %s, "dur": %s, '
                   '"args": {"External id": %d%s}}'
                   % ("user_annotation" if cat == USER_ANN else "cpu_op", o.jname, pid, tid, a, d, ext, extra))
            elif k == RT:
                _, tid, code, s, e, corr, ext = r
                a, d = tsd(s, e)
                nm, cb = rt_names[code]
                if ext:
                    ap('{"ph": "X", "cat": "cuda_runtime", "name": %s, "pid": %d, "tid": %d, "ts": %s, "dur": %s, '
                       '"args": {"External id": %d, "cbid": %d, "correlation": %d}}' % (nm, pid, tid, a, d, ext, cb, corr))
                else:
                    ap('{"ph": "X", "cat": "cuda_runtime", "name": %s, "pid": %d, "tid": %d, "ts": %s, "dur": %s, '
                       '"args": {"cbid": %d, "correlation": %d}}' % (nm, pid, tid, a, d, cb, corr))
                if launchers[code]:
                    ap('{"ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "ac2g", "name": "ac2g"}'
                       % (corr, pid, tid, a))
            elif k == KER:
                _, dev, st, s, e, corr, ext, ks = r
                c = ks.cache.get("kineto")
                if c is None:
                    c = ks.cache["kineto"] = (json.dumps(ks.name), _ktail(ks, gpu))
                a, d = tsd(s, e)
                ap('{"ph": "X", "cat": "kernel", "name": %s, "pid": %d, "tid": %d, "ts": %s, "dur": %s, '
                   '"args": {"External id": %d, "queued": 0, "device": %d, "context": 1, "stream": %d, "correlation": %d, %s}}'
                   % (c[0], dev, st, a, d, ext, dev, st, corr, c[1]))
                ap('{"ph": "f", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "ac2g", "name": "ac2g", "bp": "e"}'
                   % (corr, dev, st, a))
            elif k == MEM:
                _, tid, t, nb, tot, res, addr, dev = r
                ap('{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": %d, "tid": %d, "ts": %s, '
                   '"args": {"Total Reserved": %d, "Total Allocated": %d, "Bytes": %d, "Addr": %d, "Device Id": %d, "Device Type": 1}}'
                   % (pid, tid, ts_(t), res, tot, nb, addr, dev))
            elif k == CPY:
                _, dev, st, s, e, corr, ext, kind, nb = r
                a, d = tsd(s, e)
                bw = nb / max(1, e - s)
                ap('{"ph": "X", "cat": "gpu_memcpy", "name": %s, "pid": %d, "tid": %d, "ts": %s, "dur": %s, '
                   '"args": {"External id": %d, "device": %d, "context": 1, "stream": %d, "correlation": %d, "bytes": %d, '
                   '"memory bandwidth (GB/s)": %s}}' % (self.cpy_names[kind], dev, st, a, d, ext, dev, st, corr, nb, _g(bw)))
                ap('{"ph": "f", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "ac2g", "name": "ac2g", "bp": "e"}'
                   % (corr, dev, st, a))
            elif k == SET:
                _, dev, st, s, e, corr, ext, nb = r
                a, d = tsd(s, e)
                ap('{"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": %d, "tid": %d, "ts": %s, "dur": %s, '
                   '"args": {"External id": %d, "device": %d, "context": 1, "stream": %d, "correlation": %d, "bytes": %d, '
                   '"memory bandwidth (GB/s)": %s}}' % (dev, st, a, d, ext, dev, st, corr, nb, _g(nb / max(1, e - s))))
                ap('{"ph": "f", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "ac2g", "name": "ac2g", "bp": "e"}'
                   % (corr, dev, st, a))
            elif k == FLOW:
                _, tid, t, fid, start = r
                if start:
                    ap('{"ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "fwdbwd", "name": "fwdbwd"}'
                       % (fid, pid, tid, ts_(t)))
                else:
                    ap('{"ph": "f", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"}'
                       % (fid, pid, tid, ts_(t)))
            elif k == GANN:
                _, dev, st, s, e, o, ext = r
                a, d = tsd(s, e)
                ap('{"ph": "X", "cat": "gpu_user_annotation", "name": %s, "pid": %d, "tid": %d, "ts": %s, "dur": %s, '
                   '"args": {"External id": %d}}' % (o.jname, dev, st, a, d, ext))
            # SYNC and NVTX records have no Kineto counterpart (sync is visible as the runtime call)
        if lines:
            self.count += len(lines)
            text = ",\n".join(lines)
            if self.first:
                self.first = False
            else:
                text = ",\n" + text
            self.f.write(text.encode())

    def finish(self, t_start, t_end, streams):
        sim = self.sim
        pid = sim.pid
        ts = self.ts(t_start)
        pname = "python3"
        meta = []
        ap = meta.append
        ap({"name": "process_name", "ph": "M", "ts": ts, "pid": pid, "tid": 0, "args": {"name": pname}})
        ap({"name": "process_labels", "ph": "M", "ts": ts, "pid": pid, "tid": 0, "args": {"labels": "CPU"}})
        ap({"name": "process_sort_index", "ph": "M", "ts": ts, "pid": pid, "tid": 0, "args": {"sort_index": pid}})
        dev = sim.dev
        ap({"name": "process_name", "ph": "M", "ts": ts, "pid": dev, "tid": 0, "args": {"name": pname}})
        ap({"name": "process_labels", "ph": "M", "ts": ts, "pid": dev, "tid": 0, "args": {"labels": "GPU %d" % dev}})
        ap({"name": "process_sort_index", "ph": "M", "ts": ts, "pid": dev, "tid": 0, "args": {"sort_index": 16777216 + dev}})
        for st in streams:
            ap({"name": "thread_name", "ph": "M", "ts": ts, "pid": dev, "tid": st, "args": {"name": "stream %d " % st}})
            ap({"name": "thread_sort_index", "ph": "M", "ts": ts, "pid": dev, "tid": st, "args": {"sort_index": st}})
        for th in (sim.main, sim.bwdth):
            ap({"name": "thread_name", "ph": "M", "ts": ts, "pid": pid, "tid": th.tid,
                "args": {"name": "thread %d (%s)" % (th.tid, pname)}})
            ap({"name": "thread_sort_index", "ph": "M", "ts": ts, "pid": pid, "tid": th.tid, "args": {"sort_index": th.tid}})
        a, d = self.tsd(t_start, t_end)
        lines = []
        for m in meta:
            s = json.dumps(m)
            lines.append(s.replace('"ts": "%s"' % ts, '"ts": %s' % ts))
        lines.append('{"ph": "X", "cat": "Trace", "ts": %s, "dur": %s, "pid": "Spans", "tid": "PyTorch Profiler", '
                     '"name": "PyTorch Profiler (0)", "args": {"Op count": 0}}' % (a, d))
        lines.append('{"name": "process_sort_index", "ph": "M", "ts": %s, "pid": "Spans", "tid": 0, "args": {"sort_index": 536870912}}' % a)
        lines.append('{"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces", '
                     '"tid": "Trace PyTorch Profiler", "ts": %s}' % a)
        lines.append('{"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": %s}' % self.ts(t_end + 1000))
        self.count += len(lines)
        text = (",\n" if not self.first else "") + ",\n".join(lines)
        text += '\n  ],\n  "traceName": %s\n}\n' % json.dumps(self.cfg.trace_name)
        self.f.write(text.encode())
        self.f.close()
        if self.raw is not self.f:
            self.raw.close()


class LegacyWriter:
    """Jan-2021 Kineto: bare JSON array, legacy categories, int µs, string tids."""

    def __init__(self, path, cfg, gpu, sim):
        self.cfg = cfg
        self.gpu = gpu
        self.sim = sim
        self.raw, self.f = _open(path, cfg.gz, cfg.gzip_level)
        self.E = cfg.epoch_base_ns
        self.count = 0
        self.rt_names = [(json.dumps(n), cb) for n, cb, _, _ in RT_API]
        self.launchers = [x[3] for x in RT_API]
        self.cpy_names = [json.dumps(k[0]) for k in CPY_KINDS]
        self.op_ts = {}
        self.legacy_names = {}
        # pthread-style thread ids, as the 2021 profiler printed them
        self.tid_str = {sim.main.tid: str(139800000000000 % 4294967296 + sim.main.tid * 4096),
                        sim.bwdth.tid: str(2660000000 + sim.bwdth.tid * 4096)}
        self.f.write(b"[\n")
        self.first = True

    def us(self, s):
        return (self.E + s) // 1000

    def write(self, recs):
        pid = self.sim.pid
        lines = []
        ap = lines.append
        us = self.us
        for r in recs:
            k = r[0]
            if k == OP:
                _, tid, cat, o, s, e, ext, seq, bwd = r
                a = us(s)
                self.op_ts[ext] = a
                jn = self.legacy_names.get(o.jname)
                if jn is None:
                    # PyTorch 1.8 named backward nodes without the trailing 0 (AddmmBackward)
                    jn = self.legacy_names[o.jname] = o.jname.replace("Backward0", "Backward")
                ap('{"ph": "X", "cat": "Operator", "name": %s, "pid": %d, "tid": "%s", "ts": %d, "dur": %d, '
                   '"args": {%s, "Device": 0, "External id": %d, "Extra arguments": [], "Trace name": "PyTorch Profiler", '
                   '"Trace iteration": 0}}' % (jn, pid, self.tid_str[tid], a, us(e) - a, o.legacy, ext))
            elif k == RT:
                _, tid, code, s, e, corr, ext = r
                a = us(s)
                nm, cb = self.rt_names[code]
                ap('{"ph": "X", "cat": "Runtime", "name": %s, "pid": %d, "tid": "%s", "ts": %d, "dur": %d, '
                   '"args": {"cbid": %d, "correlation": %d, "external id": %d, "external ts": %d}}'
                   % (nm, pid, self.tid_str[tid], a, us(e) - a, cb, corr, ext, self.op_ts.get(ext, a)))
                if self.launchers[code]:
                    ap('{"ph": "s", "id": %d, "pid": %d, "tid": %s, "ts": %d, "cat": "async", "name": "launch"}'
                       % (corr, pid, self.tid_str[tid], a))
            elif k in (KER, CPY, SET):
                dev, st, s, e, corr, ext = r[1:7]
                a = us(s)
                d = us(e) - a
                if k == KER:
                    ks = r[7]
                    gx, gy, gz = ks.grid
                    bx, by, bz = ks.block
                    w = gx * gy * gz * ((bx * by * bz + 31) // 32) / self.gpu.sms
                    ap('{"ph": "X", "cat": "Kernel", "name": %s, "pid": %d, "tid": "stream %d", "ts": %d, "dur": %d, '
                       '"args": {"queued": 0, "device": %d, "context": 1, "stream": %d, "correlation": %d, "external id": %d, '
                       '"registers per thread": %d, "shared memory": %d, "warps per SM": %s, "grid": [%d, %d, %d], "block": [%d, %d, %d]}}'
                       % (json.dumps(ks.name), dev, st, a, d, dev, st, corr, ext, ks.regs, ks.smem_static + ks.smem_dyn,
                          _g(w), gx, gy, gz, bx, by, bz))
                else:
                    nb = r[8] if k == CPY else r[7]
                    name = self.cpy_names[r[7]] if k == CPY else '"Memset (Device)"'
                    ap('{"ph": "X", "cat": "%s", "name": %s, "pid": %d, "tid": "stream %d", "ts": %d, "dur": %d, '
                       '"args": {"device": %d, "context": 1, "stream": %d, "correlation": %d, "external id": %d, "bytes": %d, '
                       '"memory bandwidth (GB/s)": %s}}' % ("Memcpy" if k == CPY else "Memset", name, dev, st, a, d, dev, st,
                                                            corr, ext, nb, _g(nb / max(1, e - s))))
                ap('{"ph": "f", "id": %d, "pid": %d, "tid": "stream %d", "ts": %d, "cat": "async", "name": "launch", "bp": "e"}'
                   % (corr, dev, st, a))
            elif k == MEM:
                _, tid, t, nb, tot, res, addr, dev = r
                ap('{"ph": "i", "s": "t", "name": "[memory]", "pid": %d, "tid": %s, "ts": %d, '
                   '"args": {"Device Type": 1, "Device Id": %d, "Bytes": %d}}' % (pid, self.tid_str[tid], us(t), dev, nb))
        if lines:
            self.count += len(lines)
            text = ",\n".join(lines)
            text = text if self.first else ",\n" + text
            self.first = False
            self.f.write(text.encode())

    def finish(self, t_start, t_end, streams):
        sim = self.sim
        pid = sim.pid
        a = self.us(t_start)
        lines = ['{"name": "process_name", "ph": "M", "ts": %d, "pid": %d, "tid": 0, "args": {"name": "python"}}' % (a, pid),
                 '{"name": "process_labels", "ph": "M", "ts": %d, "pid": %d, "tid": 0, "args": {"labels": "CPU"}}' % (a, pid)]
        for th in (sim.main, sim.bwdth):
            lines.append('{"name": "thread_name", "ph": "M", "ts": %d, "pid": %d, "tid": "%s", "args": {"name": "thread %d (python)"}}'
                         % (a, pid, self.tid_str[th.tid], 0 if th is sim.main else 1))
        lines.append('{"name": "process_name", "ph": "M", "ts": %d, "pid": %d, "tid": 0, "args": {"name": "python"}}' % (a, sim.dev))
        lines.append('{"name": "process_labels", "ph": "M", "ts": %d, "pid": %d, "tid": 0, "args": {"labels": "GPU %d"}}' % (a, sim.dev, sim.dev))
        for st in streams:
            lines.append('{"name": "thread_name", "ph": "M", "ts": %d, "pid": %d, "tid": "stream %d", "args": {"name": "stream %d"}}'
                         % (a, sim.dev, st, st))
        lines.append('{"ph": "X", "cat": "Trace", "ts": %d, "dur": %d, "pid": "Traces", "tid": "PyTorch Profiler", '
                     '"name": "PyTorch Profiler (0)", "args": {"Op count": 0}}' % (a, self.us(t_end) - a))
        lines.append('{"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces", '
                     '"tid": "Trace PyTorch Profiler", "ts": %d}' % a)
        self.count += len(lines)
        text = (",\n" if not self.first else "") + ",\n".join(lines) + "\n]\n"
        self.f.write(text.encode())
        self.f.close()
        if self.raw is not self.f:
            self.raw.close()
