#!/usr/bin/env python3
"""Builds the seed corpora of the libFuzzer targets (tests/fuzz/, docs/fuzzing.md).

Seeds are derived at run time, never committed: small Kineto traces sampled from fixtures/ and
from scripts/gen_profile.py, nsys exports shrunk to a few rows per table, saved stores made by
`proflint ingest` on those, the configurations and Lua rules of the repository. Everything is
cut small (a few KB to a few tens of KB) because libFuzzer mutates small inputs much faster.

usage: fuzz_seeds.py OUT_DIR PROFLINT_BINARY
  writes OUT_DIR/{kineto,nsys,store,config,lua_rule,pipeline}/
"""

import glob
import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_json(path):
    opener = gzip.open if open(path, 'rb').read(2) == b'\x1f\x8b' else open
    with opener(path, 'rt', encoding='utf-8') as f:
        return json.load(f)


def sample_events(events, per_kind=3):
    """Up to per_kind events of every (ph, cat) pair and every metadata name: every shape of
    event the trace has, in a few KB, in the original order."""
    seen, kept = {}, []
    for ev in events:
        if not isinstance(ev, dict):
            continue
        key = (ev.get('ph'), ev.get('cat'), ev.get('name') if ev.get('ph') == 'M' else None)
        if seen.get(key, 0) < per_kind:
            seen[key] = seen.get(key, 0) + 1
            kept.append(ev)
    return kept


def small_kineto(trace, per_kind=3):
    if isinstance(trace, list):  # the legacy bare-array flavour
        return sample_events(trace, per_kind)
    out = {k: v for k, v in trace.items() if k != 'traceEvents'}
    out['traceEvents'] = sample_events(trace.get('traceEvents', []), per_kind)
    return out


def shrink_sqlite(src, dst, rows=6):
    """A copy of an SQLite file with at most `rows` rows per table (string tables keep more, so
    that the kept rows' names resolve) and small pages; header fields survive VACUUM."""
    shutil.copyfile(src, dst)
    db = sqlite3.connect(dst)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
    for t in tables:
        keep = 400 if t in ('StringIds', 'string') else rows
        try:
            db.execute(f'DELETE FROM "{t}" WHERE rowid NOT IN (SELECT rowid FROM "{t}" ORDER BY rowid LIMIT {keep})')
        except sqlite3.DatabaseError:
            pass  # WITHOUT ROWID tables stay whole
    db.commit()
    db.execute('PRAGMA page_size=512')
    db.execute('VACUUM')
    db.close()


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = 'wb' if isinstance(data, bytes) else 'w'
    with open(path, mode) as f:
        f.write(data)


def gen_profile(args, out):
    subprocess.run([sys.executable, os.path.join(ROOT, 'scripts/gen_profile.py'), *args, '-o', out],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out, proflint = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    for d in ('kineto', 'nsys', 'store', 'config', 'lua_rule', 'pipeline'):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix='proflint-seeds-')
    try:
        # ---- Kineto JSON: sampled fixtures and generated traces ----
        sources = sorted(glob.glob(os.path.join(ROOT, 'fixtures', '*.json')) +
                         glob.glob(os.path.join(ROOT, 'fixtures', '*.json.gz')) +
                         glob.glob(os.path.join(ROOT, 'fixtures', 'compare', '*.json*')))
        generated = [
            ('gen_logreg', ['--format', 'kineto', '--model', 'logreg', '--steps', '3', '--seed', '1']),
            ('gen_mlp_2gpu', ['--format', 'kineto', '--model', 'mlp', '--steps', '2', '--gpus', '2', '--seed', '2',
                              '--plant', 'host_sync,pageable_memcpy,dataloader_gap']),
            ('gen_legacy', ['--format', 'kineto-legacy', '--model', 'logreg', '--steps', '2', '--int-us', '--seed', '3']),
            ('gen_fp32', ['--format', 'kineto', '--model', 'mlp', '--steps', '2', '--plant', 'fp32_gemm,small_kernels',
                          '--gpu-name', 'Tesla V100-SXM2-16GB', '--cc', '7.0', '--seed', '4']),
        ]
        for name, args in generated:
            path = os.path.join(tmp, name + '.json')
            gen_profile(args, path)
            sources.append(path)
        kineto_seeds = []
        for src in sources:
            name = os.path.basename(src).split('.')[0]
            text = json.dumps(small_kineto(load_json(src)), separators=(',', ':'))
            path = os.path.join(out, 'kineto', name + '.json')
            write(path, text)
            kineto_seeds.append(path)
        write(os.path.join(out, 'kineto', 'gen_logreg.json.gz'),
              gzip.compress(open(os.path.join(out, 'kineto', 'gen_logreg.json'), 'rb').read(), mtime=0))
        write(os.path.join(out, 'kineto', 'empty_events.json'), '{"traceEvents":[]}')
        write(os.path.join(out, 'kineto', 'bare_array.json'), '[{"ph":"X","cat":"kernel","name":"k","pid":0,'
              '"tid":7,"ts":1,"dur":2,"args":{"correlation":1,"device":0,"stream":7}}]')

        # ---- nsys SQLite exports, a few rows per table ----
        nsys_sources = sorted(glob.glob(os.path.join(ROOT, 'fixtures', '*.nsys.sqlite')))
        for name, args in [('gen_logreg', ['--model', 'logreg', '--steps', '2', '--seed', '1']),
                           ('gen_mlp_2gpu', ['--model', 'mlp', '--steps', '2', '--gpus', '2', '--seed', '2',
                                             '--plant', 'host_sync,pageable_memcpy'])]:
            path = os.path.join(tmp, name + '.nsys.sqlite')
            gen_profile(['--format', 'nsys', *args], path)
            nsys_sources.append(path)
        # Host and GPU sampling tables in one export (OSRT_API, COMPOSITE_EVENTS + SAMPLING_CALLCHAINS,
        # GPU_METRICS + TARGET_INFO_GPU_METRICS), and a rank export whose process sees its GPU as
        # device 0 (TARGET_INFO_CUDA_DEVICE) with every GPU's metrics.
        host_metrics = os.path.join(tmp, 'gen_host_metrics.nsys.sqlite')
        subprocess.run([sys.executable, os.path.join(ROOT, 'scripts/gen_profile.py'), 'host-activity', '--kind', 'cpu',
                        '--steps', '2', '-q', '-o', host_metrics], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([sys.executable, os.path.join(ROOT, 'scripts/gen_profile.py'), 'gpu-metrics', '-q',
                        '--period-us', '500', host_metrics], check=True, stdout=subprocess.DEVNULL)
        nsys_sources.append(host_metrics)
        nsys_sources.append(os.path.join(ROOT, 'fixtures', 'jobs', 'nsys_per_rank_cvd', 'rank1.sqlite'))
        nsys_seeds = []
        for src in nsys_sources:
            base = os.path.basename(src).split('.')[0]
            if base.startswith('rank'):  # a job's rank export: name it by its job folder
                base = os.path.basename(os.path.dirname(src)) + '_' + base
            path = os.path.join(out, 'nsys', base + '.sqlite')
            shrink_sqlite(src, path)
            nsys_seeds.append(path)

        # ---- saved stores: `proflint ingest` of small seeds, and variants the loader treats differently ----
        for src in [os.path.join(out, 'kineto', 'gen_mlp_2gpu.json'), os.path.join(out, 'kineto', 'dataparallel_2gpu.json'),
                    nsys_seeds[0]]:
            name = os.path.basename(src).split('.')[0]
            raw = os.path.join(tmp, name + '.db')
            subprocess.run([proflint, 'ingest', src, '--db', raw], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            store = os.path.join(out, 'store', name + '.db')
            shrink_sqlite(raw, store, rows=40)
            underived = os.path.join(out, 'store', name + '_underived.db')
            shutil.copyfile(store, underived)
            db = sqlite3.connect(underived)
            db.execute('UPDATE trace SET iteration_source = NULL')  # the loader derives it again
            db.commit()
            db.close()

        # ---- proflint.toml ----
        cfg = 0
        for src in sorted(glob.glob(os.path.join(ROOT, '**', 'proflint.toml'), recursive=True)):
            if '/build' in src:
                continue
            shutil.copyfile(src, os.path.join(out, 'config', f'repo_{cfg}.toml'))
            cfg += 1
        for md in sorted(glob.glob(os.path.join(ROOT, 'docs', '**', '*.md'), recursive=True)):
            text = open(md, encoding='utf-8').read()
            for block in text.split('```toml')[1:]:
                write(os.path.join(out, 'config', f'doc_{cfg}.toml'), block.split('```')[0])
                cfg += 1
        dump = subprocess.run([proflint, 'config', 'dump'], check=True, capture_output=True, text=True,
                              cwd=tmp).stdout
        write(os.path.join(out, 'config', 'defaults.toml'), dump)

        # ---- Lua rules ----
        for src in sorted(glob.glob(os.path.join(ROOT, 'rules', '*.lua')) +
                          glob.glob(os.path.join(ROOT, 'rules', 'examples', '*.lua')) +
                          glob.glob(os.path.join(ROOT, 'tests', 'lua', '**', '*.lua'), recursive=True)):
            shutil.copyfile(src, os.path.join(out, 'lua_rule', os.path.basename(src)))

        # ---- end to end: the smallest traces of both formats ----
        for src in kineto_seeds + nsys_seeds:
            if os.path.getsize(src) <= 64 * 1024:
                shutil.copyfile(src, os.path.join(out, 'pipeline', os.path.basename(src)))
        # the sampling logs (nvidia-smi CSV, dmon/pmon, dcgmi, memory timeline) reach the same
        # sniffing and readers through the pipeline (docs/samples.md)
        for src in sorted(glob.glob(os.path.join(ROOT, 'fixtures', 'samples', '*'))):
            if os.path.getsize(src) <= 16 * 1024 and not src.endswith(('.log', '.yaml')):
                shutil.copyfile(src, os.path.join(out, 'pipeline', 'samples_' + os.path.basename(src)))
    finally:
        shutil.rmtree(tmp)
    for d in sorted(os.listdir(out)):
        files = glob.glob(os.path.join(out, d, '*'))
        print(f'fuzz_seeds: {d}: {len(files)} seeds, {sum(os.path.getsize(f) for f in files) // 1024} KiB')


if __name__ == '__main__':
    main()
