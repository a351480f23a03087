#!/usr/bin/env python3
"""Capture a small CPU DDP training job (gloo backend) under torch.profiler, one trace per rank.

Used to make the real multi-rank fixtures under fixtures/captured/ (see the README there). Every
rank runs the same tiny MLP on random data for --steps steps; torch.profiler records the steps
after a wait/warm-up step. With --late-rank R, rank R is made late before the step's collective
(the DDP gradient all-reduce that runs inside loss.backward()) in one of three ways:

  compute     R does extra matrix products in its forward pass (more CPU compute per step)
  dataloader  R's Dataset sleeps in __getitem__ (a slow input pipeline: the time is spent inside
              the DataLoader's __next__ annotation)
  sleep       R sleeps between the forward pass and loss.backward() (a plain host gap, no op)

The other ranks then wait for R inside the all-reduce. Output: OUT/rank<r>.json.gz (gzip mtime 0).

Example (Debian python3-torch, CPU only):
  /usr/bin/python3 scripts/capture/ddp_gloo.py --world 3 --late-rank 1 --late-by sleep --late-ms 30 \
      --out fixtures/captured/gloo3_sleep_r1
"""

import argparse
import gzip
import os
import shutil
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


class Batches(torch.utils.data.Dataset):
    """Random samples; the late rank's __getitem__ sleeps when the input pipeline is the cause."""

    def __init__(self, n, features, classes, sleep_s, seed):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, features, generator=g)
        self.y = torch.randint(0, classes, (n,), generator=g)
        self.sleep_s = sleep_s

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if self.sleep_s:
            time.sleep(self.sleep_s)
        return self.x[i], self.y[i]


class Mlp(torch.nn.Module):
    def __init__(self, features, hidden, classes, extra_mm):
        super().__init__()
        self.l1 = torch.nn.Linear(features, hidden)
        self.l2 = torch.nn.Linear(hidden, hidden)
        self.l3 = torch.nn.Linear(hidden, classes)
        self.extra_mm = extra_mm
        # a plain tensor, not a buffer: DDP broadcasts buffers, and only this rank has it
        self.work = torch.randn(hidden, hidden) if extra_mm else None

    def forward(self, x):
        h = torch.relu(self.l1(x))
        for _ in range(self.extra_mm):
            # extra compute on the late rank only (no parameters: DDP stays consistent)
            h = torch.tanh(h @ self.work) + h
        h = torch.relu(self.l2(h))
        return self.l3(h)


def run(rank, a):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(a.port)
    torch.set_num_threads(1)
    torch.manual_seed(1234)  # same initial weights on every rank
    dist.init_process_group("gloo", rank=rank, world_size=a.world)
    late = rank == a.late_rank
    extra_mm = a.extra_mm if late and a.late_by == "compute" else 0
    sleep_s = a.late_ms / 1000.0 / a.batch if late and a.late_by == "dataloader" else 0.0
    model = DDP(Mlp(a.features, a.hidden, a.classes, extra_mm))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = Batches(a.batch * (a.steps + 2), a.features, a.classes, sleep_s, seed=100 + rank)
    loader = torch.utils.data.DataLoader(data, batch_size=a.batch, num_workers=0)
    sched = torch.profiler.schedule(wait=1, warmup=1, active=a.steps - 2, repeat=1)
    out = os.path.join(a.out, "rank%d.json" % rank)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], schedule=sched,
                                on_trace_ready=lambda p: p.export_chrome_trace(out)) as prof:
        it = iter(loader)
        for _ in range(a.steps):
            x, y = next(it)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            if late and a.late_by == "sleep":
                time.sleep(a.late_ms / 1000.0)
            loss.backward()
            opt.step()
            prof.step()
    dist.barrier()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--world", type=int, default=3, help="processes (ranks), 2..4")
    p.add_argument("--steps", type=int, default=8, help="training steps (the first two are not recorded)")
    p.add_argument("--late-rank", type=int, default=-1, help="rank made late (-1: balanced job)")
    p.add_argument("--late-by", choices=["compute", "dataloader", "sleep"], default="sleep")
    p.add_argument("--late-ms", type=float, default=30.0, help="lateness for dataloader/sleep (ms per step)")
    p.add_argument("--extra-mm", type=int, default=60, help="extra 'hidden x hidden' products for compute")
    p.add_argument("--features", type=int, default=128)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--port", type=int, default=29541)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if not 2 <= a.world <= 8 or a.late_rank >= a.world:
        sys.exit("ddp_gloo.py: --world must be 2..8 and --late-rank < --world")
    os.makedirs(a.out, exist_ok=True)
    mp.spawn(run, args=(a,), nprocs=a.world, join=True)
    for r in range(a.world):
        src = os.path.join(a.out, "rank%d.json" % r)
        with open(src, "rb") as f, open(src + ".gz", "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as g:
                shutil.copyfileobj(f, g)
        os.remove(src)
    print("torch %s, world %d, late rank %d by %s -> %s" % (torch.__version__, a.world, a.late_rank,
                                                            a.late_by, a.out))


if __name__ == "__main__":
    main()
