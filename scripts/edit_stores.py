#!/usr/bin/env python3
"""Edits the links of saved stores and runs proflint on each edited copy (docs/fuzzing.md).

A saved store is an input like any profile, and someone may edit it: the numbers are swept by
scripts/fuzz_extremes.py (kind `stores`); this sweep changes the columns that link rows to each
other instead (ids, parent_id, iteration, depth, ...), which random bytes and extreme numbers seldom
turn into something still readable: every row its own parent, ids in reverse, a link to row 1, to
no row, -1, NULL. Each edited store goes through `analyze`, `analyze --iter-start 1` (which reads
the rows back into models and derives them again) and `report --reports all`. Any exit status
other than 0, 1 and 2, any death by a signal, a run past --timeout seconds, and any sanitizer
report (run it with a build-sanitize binary) is printed with the edit that caused it, and the
edited store is kept in --work. Exit status 1 when anything was found.

    scripts/edit_stores.py [--proflint build/proflint] [--work /tmp/proflint-edit-stores]
                           [--timeout 60] [FIXTURE...]

Without fixtures it uses a set of the project's own that together fill most tables (op trees
with source locations, modules, CUDA graphs, compiled regions, an nsys export, a DDP rank).
"""
import argparse
import os
import shutil
import sqlite3
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_FIXTURES = ['item_in_logging_with_stack.json.gz', 'slow_module_with_modules.json.gz', 'sample_train.json.gz',
                    'compile_graph_break.json.gz', 'cuda_graph_nodes.nsys.sqlite', 'cuda_graph_replayed.json.gz',
                    'host_cpu.nsys.sqlite', 'ddp2_rank0.json.gz', 'hpc_alloc_churn.json.gz', 'sample_train.nsys.sqlite']
LINK_COLUMNS = ('parent', 'depth', 'iteration', 'node', 'replay', 'seq', 'rank', 'number')


def edits_of(db):
    """The edits for every link column of every table that has rows."""
    out = []
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid"):
        cols = [r[0] for r in db.execute('SELECT name FROM pragma_table_info(?)', (table,))]
        if db.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] == 0:
            continue
        for c in cols:
            if not (c.endswith('_id') or c in LINK_COLUMNS):
                continue
            if 'id' in cols and c != 'id':
                out.append(f'UPDATE "{table}" SET {c} = id')
                out.append(f'UPDATE "{table}" SET {c} = (SELECT max(id) FROM "{table}") - id + (SELECT min(id) FROM "{table}")')
            out += [f'UPDATE "{table}" SET {c} = {v}' for v in ('NULL', '-1', '1', '1000000000')]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--proflint', default=os.path.join(ROOT, 'build', 'proflint'))
    ap.add_argument('--work', default='/tmp/proflint-edit-stores', help='edited stores that showed a problem stay here')
    ap.add_argument('--timeout', type=int, default=60, help='seconds one run may take')
    ap.add_argument('fixtures', nargs='*', help='profiles to save as stores (default: a set of fixtures/)')
    args = ap.parse_args()
    fixtures = args.fixtures or [os.path.join(ROOT, 'fixtures', f) for f in DEFAULT_FIXTURES]
    os.makedirs(args.work, exist_ok=True)
    env = dict(os.environ, ASAN_OPTIONS='detect_leaks=0:' + os.environ.get('ASAN_OPTIONS', ''))
    found, tried = [], 0
    for fixture in fixtures:
        name = os.path.basename(fixture)
        base = os.path.join(args.work, name + '.db')
        if os.path.exists(base):
            os.remove(base)
        r = subprocess.run([args.proflint, 'analyze', fixture, '--db', base, '--format', 'json'], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, env=env)
        if r.returncode not in (0, 1) or not os.path.exists(base):
            sys.exit(f'edit_stores: cannot save {fixture} as a store: {r.stderr.strip()}')
        with sqlite3.connect(base) as db:
            edits = edits_of(db)
        for k, edit in enumerate(edits):
            store = os.path.join(args.work, f'{name}.{k}.db')
            shutil.copy(base, store)
            db = sqlite3.connect(store)
            try:
                db.execute(edit)
                db.commit()
            except sqlite3.Error:  # NOT NULL, UNIQUE: an edit the schema itself refuses
                db.close()
                os.remove(store)
                continue
            db.close()
            tried += 1
            bad = False
            reports = os.path.join(args.work, 'reports')
            for cmd in (['analyze', store, '--format', 'json'], ['analyze', store, '--iter-start', '1', '--format', 'json'],
                        ['report', store, '--reports', 'all', '--output-path', reports]):
                try:
                    r = subprocess.run([args.proflint] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                       timeout=args.timeout, env=env)
                    status, err = r.returncode, r.stderr
                except subprocess.TimeoutExpired:
                    status, err = 'timeout', ''
                shutil.rmtree(reports, ignore_errors=True)
                sanitizer = 'runtime error' in err or 'AddressSanitizer' in err
                if status in (0, 1, 2) and not sanitizer:
                    continue
                bad = True
                what = f'signal {-status}' if isinstance(status, int) and status < 0 else f'status {status}'
                tail = ' | '.join(err.strip().splitlines()[-3:])
                print(f'{name}: {edit}: proflint {cmd[0]} {" ".join(cmd[2:3])}: {what} {tail[:300]}', flush=True)
                found.append((name, edit, cmd[0]))
            if not bad:
                os.remove(store)
        os.remove(base)
    print(f'edit_stores: {tried} edited stores, {len(found)} problem(s)')
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
