#!/usr/bin/env python3
# scripts/tc_eligible_kineto.py TRACE.json.gz — hand check (independent of proflint) of the
# Tensor-Core-eligible figures tests/report/report_tc_eligible_test.cpp expects: eligible ops counted
# once at the outermost eligible op, and the kernel time under them.
import gzip, json, re, sys, bisect, collections
ELIG = set("""mm bmm addmm addmv addr addbmm baddbmm matmul linear mv chain_matmul linalg_multi_dot einsum tensordot
_addmm_activation _scaled_mm _int_mm conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d
convolution _convolution _convolution_mode cudnn_convolution cudnn_convolution_transpose convolution_backward
cudnn_convolution_backward cudnn_convolution_backward_input cudnn_convolution_backward_weight
MmBackward AddmmBackward BmmBackward ConvolutionBackward CudnnConvolutionBackward LinearBackward
scaled_dot_product_attention lstm gru""".split())
NO = {"double","long int","long","int","bool","unsigned char","short int","short","int64","int32","float64"}
def norm(n):
    n = n.split('::')[-1].split('.')[0]
    if n.endswith('_') and not n.startswith('_'): n = n[:-1]
    n = re.sub(r'\d+$', '', n) if 'Backward' in n else n
    return n
def eligible(e):
    if norm(e['name']) not in ELIG: return False
    for t in e.get('args', {}).get('Input type', []) or []:
        if t in NO: return False
        if t in ('float','c10::Half','c10::BFloat16'): return True
    return True
d = json.load(gzip.open(sys.argv[1]))
ev = d['traceEvents']
ops = [e for e in ev if e.get('ph') == 'X' and e.get('cat') in ('Operator', 'cpu_op')]
rt = {e['args']['correlation']: e for e in ev if e.get('ph') == 'X' and e.get('cat') in ('Runtime', 'cuda_runtime') and 'correlation' in e.get('args', {})}
ks = [e for e in ev if e.get('ph') == 'X' and e.get('cat') in ('Kernel', 'kernel')]
by_thread = collections.defaultdict(list)
for o in ops: by_thread[(o['pid'], o['tid'])].append(o)
for v in by_thread.values(): v.sort(key=lambda o: (o['ts'], -o['dur']))
def chain(pid, tid, ts):  # ops containing ts on that thread, outermost first
    return [o for o in by_thread.get((pid, tid), []) if o['ts'] <= ts < o['ts'] + o['dur']]
root_time = collections.Counter(); roots = {}
for k in ks:
    r = rt.get(k['args'].get('correlation'))
    if not r: continue
    c = chain(r['pid'], r['tid'], r['ts'])
    root = next((o for o in c if eligible(o)), None)
    if root is None: continue
    key = (root['pid'], root['tid'], root['ts'], root['name'])
    roots[key] = root
    root_time[key] += k['dur']
steps = sorted([(e['ts'], e['ts'] + e['dur']) for e in ev if e.get('ph') == 'X' and e.get('name', '').startswith('ProfilerStep#')])
per_step = collections.Counter()
for key in roots:
    s = [i for i, (a, b) in enumerate(steps) if a <= key[2] < b]
    per_step[s[0] if s else None] += 1
print("eligible op instances (outermost) with kernels:", len(roots))
print("their kernel time (ns):", sum(root_time.values()) * 1000)
print("per step:", sorted(per_step.items(), key=lambda x: (x[0] is None, x[0])))
print("by name:", collections.Counter(norm(r['name']) for r in roots.values()))
