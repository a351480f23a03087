#!/usr/bin/env python3
"""Profile a small CPU training loop with torch.profiler and proflint.on_trace_ready.

The capture the Python package's tests make (python/tests/test_torch.py imports train()), and
the one kept under fixtures/captured/torch_cpu_mlp/ as a real CPU-side input (Python stacks,
nn.Module names, DataLoader annotations). A three-layer MLP (64 -> 128 -> 128 -> 10) is trained
with SGD on random data through a DataLoader (batch 32, one worker process unless --workers says
otherwise); torch.profiler records `--active` steps after one wait and one warm-up step, with
shapes, stacks and module names. The handler writes the trace as tensorboard_trace_handler would
and prints proflint's ranked findings.

  PYTHONPATH=build-python/python /usr/bin/python3 scripts/capture/torch_cpu_steps.py --out DIR

Debian's python3-torch 1.13 is built without Kineto: its Chrome export is the autograd profiler's
bare JSON array (docs/formats.md).
"""

import argparse
import sys
import time

import torch

import proflint


class RandomSamples(torch.utils.data.Dataset):
    def __init__(self, n, features, classes, sleep_s=0.0):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, features, generator=g)
        self.y = torch.randint(0, classes, (n,), generator=g)
        self.sleep_s = sleep_s

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if self.sleep_s:
            time.sleep(self.sleep_s)  # a slow input pipeline, when asked for
        return self.x[i], self.y[i]


def train(handler, *, active=3, workers=0, sample_sleep_s=0.0, batch=32):
    """Runs 2 + `active` steps under torch.profiler with `handler` as on_trace_ready."""
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 128),
                                torch.nn.ReLU(), torch.nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = torch.utils.data.DataLoader(RandomSamples(batch * (active + 2), 64, 10, sample_sleep_s),
                                       batch_size=batch, num_workers=workers)
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=active, repeat=1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], schedule=schedule,
                                on_trace_ready=handler, record_shapes=True, with_stack=True,
                                with_modules=True) as prof:
        for x, y in data:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            prof.step()
    return handler


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for the trace")
    ap.add_argument("--active", type=int, default=3, help="profiled steps")
    ap.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    ap.add_argument("--sample-sleep-ms", type=float, default=0.0, help="sleep per sample in the Dataset")
    ap.add_argument("--gzip", action="store_true", help="write .pt.trace.json.gz")
    args = ap.parse_args()
    handler = proflint.on_trace_ready(args.out, worker_name="cpu_mlp", use_gzip=args.gzip)
    train(handler, active=args.active, workers=args.workers, sample_sleep_s=args.sample_sleep_ms / 1000)
    print(f"torch {torch.__version__}, Python {sys.version.split()[0]}, proflint {proflint.__version__}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
