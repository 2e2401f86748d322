"""Structured pruning benchmark: params, MACs and latency of torchvision models, dense vs pruned.

For resnet18 and mobilenet_v2 (weights=None: latency and counts do not depend on the weights)
it prints one line per figure: parameters, multiply-accumulates (MACs, counted by
`fasterai.analyze.counter.count_flops_params` for one image) and the median latency over
`--repeats` timed forward passes at batch 1 and batch 32, for the dense model and after
`Pruner(model, ratio, context='local').prune_model()` at 30% and 50%.

    python bench/prune_bench.py --device cpu --repeats 5
"""
from __future__ import annotations
import argparse, os, platform, statistics, time
from machine import cpu_model, load          # bench/machine.py: shared by the bench scripts
import torch
import torchvision.models as tvm
from fasterai.prune.pruner import Pruner
from fasterai.analyze.counter import count_flops_params, format_count


def sync(device: str):
    if device.startswith('cuda'): torch.cuda.synchronize()


@torch.inference_mode()
def latency_ms(model, x, repeats: int, device: str, warmup: int = 2) -> tuple:
    "(median, min) wall time of one forward pass in milliseconds, after `warmup` untimed passes."
    for _ in range(warmup): model(x)
    sync(device)
    times = []
    for _ in range(repeats):
        t = time.perf_counter(); model(x); sync(device)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--device', default='cpu', help="torch device, e.g. cpu or cuda")
    ap.add_argument('--repeats', type=int, default=5, help="timed forward passes per figure (median reported)")
    ap.add_argument('--size', type=int, default=224, help="input image size")
    ap.add_argument('--threads', type=int, default=None, help="torch intra-op threads (default: torch's choice)")
    ap.add_argument('--models', default='resnet18,mobilenet_v2', help="comma-separated torchvision model names")
    ap.add_argument('--ratios', default='30,50', help="comma-separated pruning percents")
    ap.add_argument('--round-to', type=int, default=None, help="keep channel counts multiples of this (Pruner round_to)")
    ap.add_argument('--warmup', type=int, default=2, help="untimed forward passes before timing")
    args = ap.parse_args()
    if args.threads: torch.set_num_threads(args.threads)
    dev = args.device
    print(f"machine: {cpu_model()}, {os.cpu_count()} logical cores, torch {torch.__version__}, "
          f"{torch.get_num_threads()} torch threads, device {dev}, input 3x{args.size}x{args.size}, repeats {args.repeats}, "
          f"load average {os.getloadavg()[0]:.2f}")
    ratios = [0.] + [float(r) for r in args.ratios.split(',')]
    for name in args.models.split(','):
        for ratio in ratios:
            torch.manual_seed(0)
            model = getattr(tvm, name)(weights=None).eval().to(dev)
            x1 = torch.randn(1, 3, args.size, args.size, device=dev)
            label = 'dense' if ratio == 0 else f'pruned {ratio:g}% local' + (f' round_to={args.round_to}' if args.round_to else '')
            if ratio:
                t = time.perf_counter()
                Pruner(model, ratio, context='local', example_inputs=x1, round_to=args.round_to).prune_model()
                print(f"{name} {label}: pruning time {time.perf_counter() - t:.2f} s")
            macs, params, _ = count_flops_params(model, x1)
            print(f"{name} {label}: params {params:,} ({format_count(params)})")
            print(f"{name} {label}: MACs per image {macs:,} ({format_count(macs)})")
            for bs in (1, 32):
                x = torch.randn(bs, 3, args.size, args.size, device=dev)
                med, best = latency_ms(model, x, args.repeats, dev, args.warmup)
                print(f"{name} {label}: latency batch {bs} {med:.1f} ms (median of {args.repeats}; min {best:.1f} ms; {dev})")


if __name__ == '__main__':
    main()
