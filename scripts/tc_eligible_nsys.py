#!/usr/bin/env python3
# scripts/tc_eligible_nsys.py EXPORT.sqlite — hand check (independent of proflint) of the
# Tensor-Core-eligible figures tests/report/report_tc_eligible_test.cpp expects for an nsys export
# of a torch emit_nvtx run.
import sqlite3, sys, re, collections
ELIG = set("""mm bmm addmm addmv addr addbmm baddbmm matmul linear mv einsum tensordot _addmm_activation _scaled_mm
conv1d conv2d conv3d convolution _convolution cudnn_convolution convolution_backward scaled_dot_product_attention
MmBackward AddmmBackward BmmBackward ConvolutionBackward LinearBackward""".split())
def norm(n):
    n = n.split(',')[0].split('::')[-1].split('.')[0]
    if n.endswith('_') and not n.startswith('_'): n = n[:-1]
    return re.sub(r'\d+$', '', n) if 'Backward' in n else n
db = sqlite3.connect(sys.argv[1])
nv = collections.defaultdict(list)
for s, e, text, tid in db.execute("SELECT start, end, text, globalTid FROM NVTX_EVENTS WHERE end IS NOT NULL AND text IS NOT NULL"):
    nv[tid].append((s, e, text))
rt = {}
for s, corr, tid in db.execute("SELECT start, correlationId, globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
    rt[(tid >> 24, corr)] = (s, tid)  # globalTid: pid in bits 24..
roots = collections.Counter(); names = {}
per_dev = collections.Counter()
for dur, corr, gpid, dev in db.execute("SELECT end - start, correlationId, globalPid, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL"):
    r = rt.get((gpid >> 24, corr))
    if not r: continue
    s, tid = r
    chain = sorted([x for x in nv[tid] if x[0] <= s < x[1]], key=lambda x: (x[0], -x[1]))
    root = next((x for x in chain if norm(x[2]) in ELIG), None)
    if root is None: continue
    roots[(tid, root)] += dur; per_dev[dev] += dur
print("eligible op instances (outermost) with kernels:", len(roots))
print("their kernel time (ns):", sum(roots.values()), "per device", dict(per_dev))
print("by name:", collections.Counter(norm(k[1][2]) for k in roots))
# Every outermost eligible range, with or without kernels (each is one op node: no iterations here).
outer = collections.Counter()
for tid, rs in nv.items():
    rs = sorted(rs, key=lambda x: (x[0], -x[1]))
    open_eligible = []  # ends of the eligible ranges enclosing the current one
    for s, e, text in rs:
        open_eligible = [end for end in open_eligible if end > s]
        if norm(text) in ELIG:
            if not open_eligible: outer[tid >> 24] += 1
            open_eligible.append(e)
print("outermost eligible ranges, with or without kernels, per process:", sorted(outer.values()))
