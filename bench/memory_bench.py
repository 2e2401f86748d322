"""Peak memory and time of each analysis beyond the model itself, on CNNs and transformers.

Each (model, compression) runs in a fresh process, so its peak resident memory (ru_maxrss) is its own.
The process builds the model and one random batch, runs eval_fn once, and records its resident memory:
that is the baseline (Python, torch, the model, the batch). Then it runs one analysis (one level) and
reports the peak above the baseline, in MB and as a multiple of the model's parameter + buffer bytes, with
the absolute peak and the seconds spent evaluating and recording the cost model (`Timing`).

    OMP_NUM_THREADS=1 python bench/memory_bench.py                       # resnet50, swin_t, vit12 at 64x64
    OMP_NUM_THREADS=1 python bench/memory_bench.py --models swin_t --compressions pruning

Models are torchvision's with random weights (weights=None); `vit12` is torchvision's VisionTransformer
with ViT-B/16's widths (12 layers, 12 heads, 768 wide, 86 M parameters) on 64x64 inputs in 8x8 patches.
eval_fn is mean |output| of one forward pass on a random batch of 2 under no_grad.
"""
import argparse, json, os, subprocess, sys, time
from machine import cpu_model, load

MODELS = ('resnet50', 'swin_t', 'vit12')
LEVELS = {'sparsity': 50, 'pruning': 30, 'quantization': 8}


def build(name):
    import torch, torchvision.models as tvm
    torch.manual_seed(0)
    if name == 'vit12':
        from torchvision.models import VisionTransformer
        return VisionTransformer(image_size=64, patch_size=8, num_layers=12, num_heads=12, hidden_dim=768,
                                 mlp_dim=3072, num_classes=1000).eval()
    return tvm.get_model(name, weights=None).eval()


def child(name, comp, size):
    "Run one analysis in this process; print one JSON line."
    import resource, warnings, torch
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    model = build(name)
    x = torch.randn(2, 3, size, size, generator=torch.Generator().manual_seed(0))
    def eval_fn(m):
        with torch.no_grad(): return m(x).abs().mean().item()
    eval_fn(model)
    rss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024      # MB (Linux: KiB)
    base = rss()
    model_mb = sum(t.numel() * t.element_size() for t in [*model.parameters(), *model.buffers()]) / 2**20
    an = SensitivityAnalyzer(model, x, eval_fn)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        r = an.analyze(comp, LEVELS[comp], verbose=False)
    t = time.perf_counter() - t0
    units = len(r.layers)
    measured = sum(1 for l in r.layers if comp != 'pruning' or l.prunable)
    print(json.dumps({'model_mb': model_mb, 'base_mb': base, 'peak_mb': rss(), 'seconds': t, 'units': units,
                      'measured': measured, 'eval_seconds': r.timing.eval_seconds, 'cost_seconds': r.timing.cost_seconds}))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--models', default=','.join(MODELS), help=f"comma-separated, from {MODELS} or torchvision names")
    p.add_argument('--compressions', default='sparsity,quantization,pruning')
    p.add_argument('--size', type=int, default=64, help='image height and width (default: 64)')
    p.add_argument('--timeout', type=float, default=900., help='seconds per analysis before it counts as failed')
    p.add_argument('--child', nargs=2, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child: return child(a.child[0], a.child[1], a.size)
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print(f"load average before: {load()} (1, 5, 15 min)")
    for name in [m.strip() for m in a.models.split(',') if m.strip()]:
        for comp in [c.strip() for c in a.compressions.split(',') if c.strip()]:
            cmd = [sys.executable, os.path.abspath(__file__), '--size', str(a.size), '--child', name, comp]
            try: out = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
            except subprocess.TimeoutExpired:
                print(f"{name} {a.size}x{a.size} {comp}: did not finish in {a.timeout:.0f} s"); continue
            lines = [l for l in out.stdout.splitlines() if l.startswith('{')]
            if out.returncode or not lines:
                err = (out.stderr.strip().splitlines() or ['?'])[-1]
                print(f"{name} {a.size}x{a.size} {comp}: FAILED ({err[:200]})"); continue
            r = json.loads(lines[-1])
            extra = r['peak_mb'] - r['base_mb']
            print(f"{name} {a.size}x{a.size} {comp}: {r['seconds']:.1f} s ({r['eval_seconds']:.1f} s evaluating, "
                  f"{r['cost_seconds']:.1f} s recording the cost model), {r['measured']} of {r['units']} units measured; "
                  f"peak {r['peak_mb']:.0f} MB, {extra:.0f} MB above the baseline of {r['base_mb']:.0f} MB "
                  f"= {extra / r['model_mb']:.2f}x the model's {r['model_mb']:.0f} MB (load {load()})")
    print(f"load average after: {load()} (1, 5, 15 min)")


if __name__ == '__main__':
    main()
