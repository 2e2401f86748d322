"""Overhead of SparsifyCallback over a dense fastai fit, and Sparsifier.sparsify_model time.

Prints one line per figure (on a machine shared with other jobs, fit times are noisy: the time spent
inside the callback's own events is the steadier figure, and `--threads 1` avoids oversubscribing the cores):
- the machine (CPU model, cores, torch version and threads, device);
- digits CNN (real data): fit with SparsifyCallback(50) vs the same dense fit (same epochs, same seed,
  same batch order), median over repeats, the ratio of the medians, and the time spent inside the callback;
- torchvision resnet18 (weights=None) on random 3x64x64 images: the same comparison;
- resnet18's fixed costs: one mask update (done about `n_updates` times per fit, 10 by default) and one mask
  application (after every optimizer step), to extrapolate to other fit lengths;
- torchvision resnet50 (weights=None): `Sparsifier(model, context='global').sparsify_model(50)` time.

Usage: python bench/sparsify_bench.py [--device cpu] [--repeats 3] [--threads N]
"""
import argparse, os, platform, random, statistics, time, warnings
from machine import cpu_model, load          # bench/machine.py: shared by the bench scripts

import torch
import torch.nn as nn
import torchvision
from fastai.data.core import DataLoaders
from fastai.learner import Learner
from fastai.torch_core import set_seed
from fastai.callback.schedule import *  # noqa: F401,F403  (fit_one_cycle)

from fasterai.demo.digits import digits_dls, digits_cnn
from fasterai.sparse.sparsifier import Sparsifier
from fasterai.sparse.sparsify_callback import SparsifyCallback


class TimedSparsifyCallback(SparsifyCallback):
    "SparsifyCallback that adds up the time spent in its own events (its direct cost)."
    spent = 0.
    def __call__(self, event_name):
        t0 = time.perf_counter()
        try: return super().__call__(event_name)
        finally: type(self).spent += time.perf_counter() - t0


def time_fit(make_learner, epochs, lr, sparse, seed=0):
    "Wall-clock seconds of one `fit_one_cycle`, with or without SparsifyCallback(50), and the callback's own time."
    set_seed(seed)
    learn = make_learner()
    learn.dls.train.rng = random.Random(seed)                 # same batch order in both runs
    TimedSparsifyCallback.spent = 0.
    cbs = [TimedSparsifyCallback(50)] if sparse else []
    with learn.no_bar(), learn.no_logging():
        t0 = time.perf_counter()
        learn.fit_one_cycle(epochs, lr, cbs=cbs)
        return time.perf_counter() - t0, TimedSparsifyCallback.spent


def compare(name, make_learner, epochs, lr, repeats):
    "Dense and sparse fit times (interleaved runs after one untimed warm-up each): medians, best-of, ratios."
    time_fit(make_learner, 1, lr, False); time_fit(make_learner, 1, lr, True)
    dense, sparse, own = [], [], []
    for r in range(repeats):
        dense.append(time_fit(make_learner, epochs, lr, False, seed=r)[0])
        t, c = time_fit(make_learner, epochs, lr, True, seed=r)
        sparse.append(t); own.append(c)
    d, s, c = statistics.median(dense), statistics.median(sparse), statistics.median(own)
    ratios = ', '.join(f'{b / a:.3f}' for a, b in zip(dense, sparse))
    print(f"{name}: dense fit {d:.2f}s, SparsifyCallback(50) fit {s:.2f}s (medians of {repeats}); "
          f"median overhead {s / d:.3f}x, best-of-{repeats} {min(sparse) / min(dense):.3f}x (per-run {ratios})", flush=True)
    print(f"{name}: time inside SparsifyCallback {c:.3f}s = {100 * c / d:.1f}% of the dense fit "
          f"(direct cost, insensitive to other load on the machine)", flush=True)


def random_image_dls(n_train, n_valid, bs, device, size=64, n_classes=10, seed=0):
    "fastai DataLoaders over random 3 x size x size images (the timing does not depend on the pixels)."
    g = torch.Generator().manual_seed(seed)
    def ds(n): return list(zip(torch.randn(n, 3, size, size, generator=g), torch.randint(0, n_classes, (n,), generator=g)))
    return DataLoaders.from_dsets(ds(n_train), ds(n_valid), bs=bs, device=device, num_workers=0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--device', default='cpu', help="torch device, e.g. cpu or cuda")
    p.add_argument('--repeats', type=int, default=3, help="timed runs per configuration (median reported)")
    p.add_argument('--digits-epochs', type=int, default=6)
    p.add_argument('--resnet-epochs', type=int, default=6)
    p.add_argument('--resnet-batches', type=int, default=8, help="training batches per epoch for resnet18")
    p.add_argument('--bs', type=int, default=64, help="resnet18 batch size")
    p.add_argument('--threads', type=int, default=None, help="torch threads (default: torch's choice)")
    args = p.parse_args()
    if args.threads: torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    warnings.filterwarnings('ignore')
    t_start = time.perf_counter()
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, torch {torch.__version__} "
          f"({torch.get_num_threads()} threads), device {device}", flush=True)

    dls = digits_dls().to(device)
    compare(f"digits_cnn ({args.digits_epochs} epochs x {len(dls.train)} batches of 64)",
            lambda: Learner(dls, digits_cnn(), loss_func=nn.CrossEntropyLoss()), args.digits_epochs, 1e-2, args.repeats)

    rdls = random_image_dls(args.resnet_batches * args.bs, args.bs, args.bs, device)
    compare(f"resnet18 ({args.resnet_epochs} epochs x {args.resnet_batches} batches of {args.bs} random 3x64x64)",
            lambda: Learner(rdls, torchvision.models.resnet18(weights=None, num_classes=10),
                            loss_func=nn.CrossEntropyLoss()),
            args.resnet_epochs, 1e-3, args.repeats)

    torch.manual_seed(0)
    m = torchvision.models.resnet18(weights=None, num_classes=10).to(device)
    sp = Sparsifier(m)
    sp.sparsify_model(25)
    upd, app = [], []
    for pct in [30, 35, 40, 45, 50]:                  # rising levels, as during training
        t0 = time.perf_counter(); sp.sparsify_model(pct); upd.append(time.perf_counter() - t0)
        t0 = time.perf_counter(); sp.apply_masks(); app.append(time.perf_counter() - t0)
    sp.remove()
    print(f"resnet18 fixed costs: one mask update (sparsify_model, local) {1000 * statistics.median(upd):.1f}ms, "
          f"one mask application (apply_masks, after each step) {1000 * statistics.median(app):.2f}ms", flush=True)

    torch.manual_seed(0)
    m = torchvision.models.resnet50(weights=None).to(device)
    times = []
    for _ in range(args.repeats):
        sp = Sparsifier(m, context='global')
        if device.type == 'cuda': torch.cuda.synchronize()
        t0 = time.perf_counter()
        sp.sparsify_model(50)
        if device.type == 'cuda': torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        total = sp.sparsity_report().iloc[-1]
        sp.remove()
    print(f"resnet50 Sparsifier(context='global').sparsify_model(50): {statistics.median(times):.3f}s "
          f"(median of {args.repeats}; {int(total.params):,} weights, {total.sparsity:.2f}% zero)", flush=True)
    print(f"total bench time {time.perf_counter() - t_start:.0f}s", flush=True)


if __name__ == '__main__':
    main()
