#!/usr/bin/env python3
"""A sweep of extreme numbers through the whole pipeline under ASan + UBSan (docs/fuzzing.md).

libFuzzer mutates bytes and rarely turns a readable number into 9223372036854775807 or 1e308 while
keeping the rest of a file readable; the checks downstream of the importers (detectors, summary,
ranking) saw such values only when a file said so on purpose. This sweep writes copies of the
project's fixtures with numbers replaced by extreme ones, in four kinds of input:

  samples  sampling logs (nvidia-smi CSV, dmon/pmon, dcgmi, memory timeline): numeric cells
  kineto   small Kineto traces: JSON numbers
  nsys     nsys exports: random cells of random tables (SQL UPDATE)
  stores   saved stores (`proflint analyze --db`) of a few fixtures: random cells, as an edited store

and runs each copy through tests/fuzz's pipeline target (import, derivation, every detector and
shipped rule, JSON and SARIF output), the binary scripts/fuzz.sh builds. Each distinct sanitizer
report is printed once with the input that showed it; those inputs are kept in
BUILD/artifacts/extremes/ (replay one with BUILD/fuzz_pipeline FILE; a fixed one goes to
tests/fuzz/regressions/pipeline/). Exit status 1 when anything was reported. Deterministic for a seed.

    scripts/fuzz_extremes.py [--build build-fuzz] [--proflint build/proflint]
                             [--kinds samples,kineto,nsys,stores] [--per-file 20] [--seed 1]
"""
import argparse
import glob
import gzip
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TEXT_EXTREMES = ['1e308', '-1e308', '9223372036854775807', '-9223372036854775808', '18446744073709551616',
                 '4611686018427387904', '2305843009213693951', '-2305843009213693952', '4294967296', '2147483648',
                 '-2147483649', '1e30', '1e19', '4.2e18', '-1', '0', '-0', '1e-320', '5e-324']
CELL_EXTRAS = ['nan', 'inf', '-inf', '0x7fffffffffffffff', '0xffffffffffffffff', '1e300 MiB', '1e300 %', '1e300 W',
               '1e300 MHz', '[N/A]', '-', '']
SQL_EXTREMES = [2**63 - 1, -2**63, 2**62, -2**62, 2**61, 2**32, 2**31, -1, 0, 1e308, -1e308, None]

SAMPLE_NUMBER = re.compile(r'-?\d+(\.\d+)?([eE][-+]?\d+)?')
JSON_NUMBER = re.compile(r'(?<=[:\[, ])-?\d+(\.\d+)?([eE][-+]?\d+)?(?=[,\]} \n])')


def read_text(path):
    data = open(path, 'rb').read()
    if path.endswith('.gz'):
        data = gzip.decompress(data)
    return data.decode('utf-8', 'replace')


def mutate_text(rng, text, pattern, choices, rates):
    rate = rng.choice(rates)
    return pattern.sub(lambda m: rng.choice(choices) if rng.random() < rate else m.group(0), text)


def sample_inputs(rng, out, per_file):
    for path in sorted(glob.glob(os.path.join(ROOT, 'fixtures/samples/*'))):
        name = os.path.basename(path).removesuffix('.gz')
        if name.endswith('.json') and 'memory_timeline' not in name:
            continue  # a trace beside the logs: the kineto kind's
        text = read_text(path)
        for k in range(per_file):
            lines = mutate_text(rng, text, SAMPLE_NUMBER, TEXT_EXTREMES + CELL_EXTRAS, [0.05, 0.2, 0.5]).split('\n')
            if len(lines) > 3 and rng.random() < 0.3:
                lines.insert(rng.randrange(len(lines)), lines[rng.randrange(len(lines))])
            if len(lines) > 3 and rng.random() < 0.3:
                del lines[rng.randrange(2, len(lines))]
            yield os.path.join(out, f'samples_{name}.{k}'), '\n'.join(lines)


def kineto_inputs(rng, out, per_file):
    paths = sorted(glob.glob(os.path.join(ROOT, 'fixtures/*.json*')) +
                   glob.glob(os.path.join(ROOT, 'fixtures/captured/**/*.json*'), recursive=True))
    for path in paths:
        if os.path.getsize(path) > 120_000:
            continue
        text = read_text(path)
        name = os.path.relpath(path, ROOT).replace('/', '_').removesuffix('.gz')
        for k in range(per_file):
            yield (os.path.join(out, f'kineto_{name}.{k}'),
                   mutate_text(rng, text, JSON_NUMBER, TEXT_EXTREMES, [0.001, 0.005, 0.02, 0.1]))


def mutate_sqlite(rng, src, dst, skip_columns):
    shutil.copyfile(src, dst)
    con = sqlite3.connect(dst)
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    for _ in range(rng.choice([1, 2, 5, 10])):
        table = rng.choice(tables)
        columns = [r[1] for r in con.execute(f'PRAGMA table_info("{table}")') if r[1] not in skip_columns]
        if not columns:
            continue
        try:
            con.execute(f'UPDATE "{table}" SET "{rng.choice(columns)}" = ? WHERE rowid IN '
                        f'(SELECT rowid FROM "{table}" ORDER BY random() LIMIT ?)',
                        (rng.choice(SQL_EXTREMES), rng.choice([1, 3, 1000])))
        except sqlite3.Error:
            pass  # a constraint: another cell next time
    con.commit()
    con.close()


def nsys_inputs(rng, out, per_file):
    for path in sorted(glob.glob(os.path.join(ROOT, 'fixtures/*.nsys.sqlite'))):
        for k in range(per_file):
            dst = os.path.join(out, f'nsys_{os.path.basename(path)}.{k}')
            mutate_sqlite(rng, path, dst, set())
            yield dst, None


def store_inputs(rng, out, per_file, proflint):
    sources = ['sample_train.json.gz', 'sample_train.nsys.sqlite', 'small_fp32_mlp.json.gz', 'hpc_alloc_churn.json.gz',
               'cuda_graph_replayed.json.gz', 'compile_graph_break.json.gz', 'ddp2_rank0.json.gz ddp2_rank1_slow30.json.gz']
    for source in sources:
        store = os.path.join(out, 'store_' + source.split()[0] + '.db')
        files = [os.path.join(ROOT, 'fixtures', f) for f in source.split()]
        subprocess.run([proflint, 'analyze', '--db', store] + files, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        for k in range(per_file):
            dst = f'{store}.{k}'
            mutate_sqlite(rng, store, dst, {'id'})
            yield dst, None
        os.remove(store)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default=os.environ.get('FUZZ_BUILD_DIR', 'build-fuzz'))
    ap.add_argument('--proflint', default='build/proflint', help='writes the saved stores the stores kind mutates')
    ap.add_argument('--kinds', default='samples,kineto,nsys,stores', help='samples, kineto, nsys, stores')
    ap.add_argument('--per-file', type=int, default=20)
    ap.add_argument('--seed', type=int, default=1)
    args = ap.parse_args()
    os.chdir(ROOT)
    target = os.path.join(args.build, 'fuzz_pipeline')
    if not os.access(target, os.X_OK):
        sys.exit(f'{target} not found: build it with scripts/fuzz.sh pipeline 1')
    rng = random.Random(args.seed)
    kinds = args.kinds.split(',')
    keep = os.path.join(args.build, 'artifacts', 'extremes')
    reports = {}
    count = 0
    with tempfile.TemporaryDirectory(prefix='proflint_extremes_') as out:
        generators = {'samples': lambda: sample_inputs(rng, out, args.per_file),
                      'kineto': lambda: kineto_inputs(rng, out, args.per_file),
                      'nsys': lambda: nsys_inputs(rng, out, args.per_file),
                      'stores': lambda: store_inputs(rng, out, args.per_file, args.proflint)}
        for kind in kinds:
            if kind not in generators:
                sys.exit(f'unknown kind {kind!r} (samples, kineto, nsys, stores)')
            for path, text in generators[kind]():
                if text is not None:
                    with open(path, 'w') as f:
                        f.write(text)
                run = subprocess.run([target, '-runs=0', path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, errors='replace', timeout=300)
                count += 1
                for line in run.stdout.splitlines():
                    if 'runtime error:' in line or 'ERROR: AddressSanitizer' in line or 'ERROR: libFuzzer' in line:
                        where = line.split(' runtime error:')[0] if 'runtime error:' in line else line
                        if where not in reports:
                            os.makedirs(keep, exist_ok=True)
                            kept = os.path.join(keep, os.path.basename(path))
                            shutil.copyfile(path, kept)
                            reports[where] = (line.strip(), kept)
                            print(f'{line.strip()}\n    input: {kept}', flush=True)
                os.remove(path)
    print(f'fuzz_extremes: {count} inputs ({", ".join(kinds)}), {len(reports)} distinct report(s)')
    return 1 if reports else 0


if __name__ == '__main__':
    sys.exit(main())
