"""Overhead of fasterai's sensitivity analysis above the user's eval_fn.

For a black-box eval_fn the floor is 1 + layers x levels calls of eval_fn; everything else the
analysis does (masks, scores, copies, pruning graphs, restoring the model) is overhead. For each
model and compression this prints, one plain line per figure: wall time, eval_fn calls against the
floor, time inside eval_fn, and the overhead above it in percent of the time inside eval_fn.

    OMP_NUM_THREADS=1 python bench/sensitivity_bench.py                      # CPU, resnet18 + resnet50
    OMP_NUM_THREADS=1 python bench/sensitivity_bench.py --models resnet18 --size 64,224   # both image sizes
    python bench/sensitivity_bench.py --device cuda --size 224 --batch 32    # same script on a GPU
    python bench/sensitivity_bench.py --models resnet18 --profile            # where the overhead goes

The overhead is mostly a fixed cost per measured layer (passes over that layer's weights, a pruning
graph operation), so its percentage depends on how long eval_fn takes: small images make eval_fn cheap
and the percentage large. `--size 64,224` reports both.

Models are torchvision's with random weights (weights=None); the batch is random; eval_fn is
mean |output| under torch.no_grad() (synchronised on CUDA so its time is real).

Beyond the floor (`--parts`, default all four):
- `overhead`: the figures above;
- `suffix`: data + metric with suffix-only evaluation vs full evaluation of the same data, time ratio and the
  largest difference between their deltas (resnet18 and resnet50 on 4 random batches of 16x3x128x128 with
  cross-entropy to random labels, and the trained digits CNN on its 449 held-out digits with real accuracy);
- `estimate`: one-pass estimates ('taylor', 'fisher') vs the measured analysis on the trained digits CNN:
  time of each and Spearman / Kendall rank correlation of their deltas;
- `sharding`: 2 processes vs 1 under torchrun on CPU, one thread each (runs bench/sharding_bench.py).

Vision transformers (`--parts vit`, not in the default run: it takes minutes on a CPU):
- the overhead figures above on `vit12`, a 12-layer torchvision VisionTransformer with ViT-S widths (384 wide,
  6 heads, MLP 1536, 22 M parameters) on S x S inputs in 8x8 patches, weights=None, on a batch of --vit-batch
  images (default 2); `vit12b` has ViT-B widths (768, 12 heads, 3072, 86 M) and works wherever `vit12` does;
- the suffix-only vs full ratio on `vit12` (2 random batches of 4x3xSxS, S the first --size, cross-entropy to
  random labels) and on `digits_vit`, a 4-layer ViT (64 wide, 4 heads, 2x2 patches of the 8x8 digits) trained
  here on sklearn's digits for a few seconds, with real accuracy on the 449 held-out digits.
Every layer of a ViT sits in the residual stream: compressing a layer in block k re-runs blocks k..L and the
head, so suffix evaluation saves the share of the network before the layer: on average about half of the
evaluation time with 12 blocks (measured 0.48-0.56), less with the digits ViT's 4 blocks, where a layer of
block k's MLP still re-runs three of the four attentions in the worst case and the analysis's fixed costs
(baseline, cost model) weigh more (measured 0.74 in evaluation time, 0.85 end to end).

    OMP_NUM_THREADS=1 python bench/sensitivity_bench.py --parts vit --repeat 1
    OMP_NUM_THREADS=1 python bench/sensitivity_bench.py --models vit12b --size 64 --batch 1 --parts overhead
"""
import argparse, cProfile, io, os, platform, pstats, statistics, sys, time, warnings
from machine import cpu_model, load          # bench/machine.py: shared by the bench scripts
import torch

TARGETS = {'resnet18': {'sparsity': 3., 'pruning': 10., 'quantization': 3.}}   # overhead % targets at 64x64 (issue 12)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--device', default='cpu', help='torch device: cpu, cuda, cuda:1, ... (default: cpu)')
    p.add_argument('--models', default='resnet18,resnet50', help='comma-separated torchvision names (default: resnet18,resnet50)')
    p.add_argument('--batch', type=int, default=8, help='images in the random batch (default: 8)')
    p.add_argument('--size', default='64', help='image height and width; comma-separated for several sizes (default: 64)')
    p.add_argument('--compressions', default='sparsity,pruning,quantization', help='which compressions to time')
    p.add_argument('--sparsity', default='50', help='sparsity level(s) in percent, comma-separated for a sweep (default: 50)')
    p.add_argument('--pruning', default='30', help='pruning level(s) in percent (default: 30)')
    p.add_argument('--quantization', default='8', help='quantization level(s) in bits (default: 8)')
    p.add_argument('--repeat', type=int, default=3, help='runs per figure; the median run is reported (default: 3)')
    p.add_argument('--profile', action='store_true', help='profile the overhead (with a no-op eval_fn) where a target is missed')
    p.add_argument('--parts', default='overhead,suffix,estimate,sharding',
                   help='which figures: overhead, suffix, estimate, sharding, vit (default: all but vit)')
    p.add_argument('--suffix-models', default='resnet18,resnet50,digits',
                   help='models for the suffix part: torchvision names, digits, digits_vit, vit12, vit12b (default: resnet18,resnet50,digits)')
    p.add_argument('--vit-batch', type=int, default=2, help='images in the random batch of the vit part\'s overhead figures (default: 2)')
    a = p.parse_args(argv)
    comps = [c.strip() for c in a.compressions.split(',') if c.strip()]
    bad = [c for c in comps if c not in ('sparsity', 'pruning', 'quantization')]
    if bad: p.error(f"--compressions: unknown {bad}; allowed: sparsity, pruning, quantization")
    a.compressions = comps
    a.parts = [x.strip() for x in a.parts.split(',') if x.strip()]
    bad = [x for x in a.parts if x not in ('overhead', 'suffix', 'estimate', 'sharding', 'vit')]
    if bad: p.error(f"--parts: unknown {bad}; allowed: overhead, suffix, estimate, sharding, vit")
    try: a.levels = {c: [int(v) if float(v).is_integer() else float(v) for v in getattr(a, c).split(',')] for c in comps}
    except ValueError as e: p.error(f"levels must be numbers: {e}")
    try: a.sizes = [int(v) for v in a.size.split(',') if v.strip()]
    except ValueError as e: p.error(f"--size must be integers: {e}")
    if a.batch < 1 or a.vit_batch < 1 or not a.sizes or min(a.sizes) < 1 or a.repeat < 1:
        p.error('--batch, --vit-batch, --size and --repeat must be positive')
    return a


def machine_lines(device):
    cpu = cpu_model()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()
    yield f"machine: {cpu}, {cores} cores available ({os.cpu_count()} in the system), {platform.system()} {platform.release()}"
    yield (f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads, "
           f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, python {platform.python_version()}")
    if device.type == 'cuda': yield f"device: {device} ({torch.cuda.get_device_name(device)})"
    else: yield f"device: {device}"


VIT_WIDTHS = {'vit12': (384, 1536, 6), 'vit12b': (768, 3072, 12)}     # hidden, MLP, heads: ViT-S and ViT-B, 12 layers each


def build_model(name, size):
    "A torchvision model with random weights, in eval mode; `vit12`/`vit12b`: a 12-layer VisionTransformer for size x size inputs."
    import torchvision.models as tvm
    torch.manual_seed(0)
    if name in VIT_WIDTHS:
        from torchvision.models import VisionTransformer
        if size % 8: sys.exit(f"{name}: --size {size} must be a multiple of its patch size, 8")
        hidden, mlp, heads = VIT_WIDTHS[name]
        return VisionTransformer(image_size=size, patch_size=8, num_layers=12, num_heads=heads, hidden_dim=hidden,
                                 mlp_dim=mlp, num_classes=1000).eval()
    return tvm.get_model(name, weights=None).eval()


class TimedEval:
    "eval_fn = mean |model(x)|, counting its calls and the seconds spent inside (measured here, not by the library)."
    def __init__(self, x, device):
        self.x, self.cuda, self.n, self.seconds = x, device.type == 'cuda', 0, 0.

    def __call__(self, model):
        t0 = time.perf_counter()
        with torch.no_grad():
            v = model(self.x).abs().mean()
            if self.cuda: torch.cuda.synchronize()
            v = v.item()
        self.seconds += time.perf_counter() - t0
        self.n += 1
        return v


def run_once(model, x, compression, levels, device):
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    ev = TimedEval(x, device)
    an = SensitivityAnalyzer(model, x, ev)
    if device.type == 'cuda': torch.cuda.synchronize()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        r = (an.analyze(compression, levels[0], verbose=False) if len(levels) == 1
             else an.sweep(compression, levels, verbose=False))
    if device.type == 'cuda': torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    return {'wall': wall, 'n': ev.n, 'eval': ev.seconds, 'floor': r.timing.floor_evals, 'lib': r.timing,
            'layers': len(r.layers)}


def profile_overhead(model, x, compression, levels, top=14):
    "cProfile of the analysis with a no-op eval_fn: every second left is overhead."
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    an = SensitivityAnalyzer(model, x, lambda m: 0.)
    run = (lambda: an.analyze(compression, levels[0], verbose=False)) if len(levels) == 1 else \
          (lambda: an.sweep(compression, levels, verbose=False))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        run()                                              # warm-up
        pr = cProfile.Profile()
        t0 = time.perf_counter(); pr.enable(); run(); pr.disable(); t = time.perf_counter() - t0
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats('cumulative').print_stats(r'fasterai|torch_pruning', top)
    s2 = io.StringIO()
    pstats.Stats(pr, stream=s2).sort_stats('tottime').print_stats(8)
    def keep(txt):
        "The table rows of a pstats listing (and its header), without the preamble."
        return [l for l in txt.splitlines() if l.strip() and (l.split()[0].replace('/', '').replace('.', '').isdigit()
                                                              or l.split()[0] == 'ncalls')]
    return t, keep(s.getvalue()), keep(s2.getvalue())


def level_text(compression, levels):
    unit = ' bits' if compression == 'quantization' else '%'
    return ','.join(f"{l:g}" for l in levels) + unit


def _digits():
    "The trained digits CNN and its held-out digits (trained in a few seconds, seeded)."
    from fasterai.demo.digits import trained_digits_cnn
    return trained_digits_cnn()


def digits_vit(layers:int=4, epochs:int=12, seed:int=0):
    "A small torchvision VisionTransformer trained on sklearn's digits (2x2 patches of the 8x8 images, 3 channels); returns it, its held-out digits and the seconds it took."
    from torchvision.models import VisionTransformer
    from fasterai.demo.digits import load_digits_tensors, train_digits
    xt, yt, xv, yv = load_digits_tensors()
    rgb = lambda x: x.expand(-1, 3, -1, -1).contiguous()       # torchvision's ViT reads 3 channels
    torch.manual_seed(seed)
    model = VisionTransformer(image_size=8, patch_size=2, num_layers=layers, num_heads=4, hidden_dim=64, mlp_dim=128, num_classes=10)
    t0 = time.perf_counter()
    train_digits(model, rgb(xt), yt, epochs=epochs, lr=3e-3, seed=seed)
    return model, (rgb(xv), yv), time.perf_counter() - t0


def suffix_case(name, a, device):
    "`(model, data, metric, higher_is_better, description)` of one model of the suffix part."
    import torch.nn.functional as F
    def acc(preds, targets): return (preds.argmax(1) == targets).float().mean().item()
    def ce(p, t): return F.cross_entropy(p, t).item()
    if name == 'digits':
        model, (_, _, xv, yv) = _digits()
        data = [(x.to(device), y.to(device)) for x, y in zip(xv.split(150), yv.split(150))]
        return model.to(device), data, acc, True, f"{len(xv)} held-out digits in {len(data)} batches, accuracy"
    if name == 'digits_vit':
        model, (xv, yv), t = digits_vit()
        model = model.to(device)
        data = [(x.to(device), y.to(device)) for x, y in zip(xv.split(150), yv.split(150))]
        with torch.no_grad(): a0 = sum(acc(model(x), y) * len(y) for x, y in data) / len(yv)
        return model, data, acc, True, (f"4-layer ViT trained {t:.0f} s, accuracy {a0:.3f}; {len(yv)} held-out digits in "
                                        f"{len(data)} batches, accuracy")
    g = torch.Generator().manual_seed(0)
    if name in VIT_WIDTHS:
        s = a.sizes[0]
        data = [(torch.randn(4, 3, s, s, generator=g), torch.randint(0, 1000, (4,), generator=g)) for _ in range(2)]
        what = f"12 layers, {VIT_WIDTHS[name][0]} wide; 2 batches of 4x3x{s}x{s}, cross-entropy"
    else:
        s = 128
        data = [(torch.randn(16, 3, s, s, generator=g), torch.randint(0, 1000, (16,), generator=g)) for _ in range(4)]
        what = f"4 batches of 16x3x{s}x{s}, cross-entropy"
    data = [(x.to(device), y.to(device)) for x, y in data]
    return build_model(name, s).to(device), data, ce, False, what


def suffix_part(a, device, models=None):
    "Suffix-only vs full evaluation of the same data + metric: time ratio and largest delta difference."
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    for name in models or [m.strip() for m in a.suffix_models.split(',') if m.strip()]:
        model, data, metric, hib, what = suffix_case(name, a, device)
        an = {k: SensitivityAnalyzer(model, data=data, metric=metric, higher_is_better=hib, suffix=(k == 'suffix'))
              for k in ('full', 'suffix')}
        times, cpu, res = {'full': [], 'suffix': []}, {'full': [], 'suffix': []}, {}
        for r in range(a.repeat):
            for k in (('full', 'suffix') if r % 2 == 0 else ('suffix', 'full')):
                t0, c0 = time.perf_counter(), time.thread_time()
                with warnings.catch_warnings():
                    warnings.simplefilter('ignore')
                    res[k] = an[k].analyze('sparsity', 50, verbose=False)
                times[k].append(time.perf_counter() - t0); cpu[k].append(time.thread_time() - c0)
        tf, ts = statistics.median(times['full']), statistics.median(times['suffix'])
        cf, cs = statistics.median(cpu['full']), statistics.median(cpu['suffix'])
        d = max(abs(x.delta - y.delta) for x, y in zip(res['full'].layers, res['suffix'].layers))
        ev = an['suffix'].evaluator                              # the analysis freed its cache at the end: fill it once more
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            ev.baseline()
        cache = ev.cache_mb if hasattr(ev, 'cache_mb') else 0.
        ev.close()
        tag = f"{name} sparsity 50% ({len(res['full'].layers)} layers; {what})"
        print(f"{tag}: full evaluation {tf:.2f} s, suffix-only {ts:.2f} s, ratio {ts / tf:.2f} (median of {a.repeat}; load {load()})")
        print(f"{tag}: in this thread's CPU time (what other processes' load does not stretch): full {cf:.2f} s, "
              f"suffix-only {cs:.2f} s, ratio {cs / cf:.2f}")
        print(f"{tag}: evaluating the metric {res['full'].timing.eval_seconds:.2f} s in full, {res['suffix'].timing.eval_seconds:.2f} s "
              f"suffix-only: ratio {res['suffix'].timing.eval_seconds / res['full'].timing.eval_seconds:.2f}; the suffix cache held "
              f"{cache:.0f} MB" + (f"; fell back to full evaluation: {ev.fallback}" if getattr(ev, 'fallback', None) else ''))
        print(f"{tag}: largest |delta(suffix) - delta(full)| {d:.1e}")
        del model, an


def estimate_part(a, device):
    "One-pass estimates vs measurement on the trained digits CNN: times and rank correlations."
    import torch.nn.functional as F
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    from fasterai.analyze.estimate import estimate_sensitivity, rank_correlation
    model, (_, _, xv, yv) = _digits()
    data = list(zip(xv.split(150), yv.split(150)))
    def loss_fn(p, t): return F.cross_entropy(p, t)
    def eval_loss(m):
        with torch.no_grad(): return sum(F.cross_entropy(m(x), y, reduction='sum').item() for x, y in data) / len(xv)
    an = SensitivityAnalyzer(model, xv[:8], eval_loss, higher_is_better=False, metric_name='loss')
    for comp, level in [('sparsity', 50), ('sparsity', 80), ('quantization', 4), ('quantization', 3), ('pruning', 30)]:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            t0 = time.perf_counter(); measured = an.analyze(comp, level, verbose=False); tm = time.perf_counter() - t0
            for method in ('taylor', 'fisher'):
                t0 = time.perf_counter()
                est = estimate_sensitivity(model, data, loss_fn, comp, level, method=method, verbose=False)
                te = time.perf_counter() - t0
                rc = rank_correlation(est, measured)
                print(f"digits CNN {comp} {level_text(comp, [level])} {method}: estimate {te:.3f} s vs measured {tm:.3f} s; "
                      f"Spearman {rc['spearman']:+.2f}, Kendall {rc['kendall']:+.2f} over {rc['n']} layers/groups")


def sharding_part(a):
    "2 vs 1 processes under torchrun: bench/sharding_bench.py, its lines relayed."
    import subprocess
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'sharding_bench.py')
    out = subprocess.run([sys.executable, script, '--repeats', str(max(1, min(a.repeat, 2)))], capture_output=True, text=True)
    for l in out.stdout.splitlines():
        if l.strip() and not l.startswith('machine'): print(f"sharding: {l}")
    if out.returncode: print(f"sharding: FAILED ({out.returncode}): {out.stderr.strip().splitlines()[-1:]}")


def overhead_part(a, device, cases, batch):
    "The overhead figures: for each (model, size) and compression, wall time, evaluations, time inside eval_fn and the rest."
    for name, size in cases:
        model = build_model(name, size).to(device)
        x = torch.randn(batch, 3, size, size, generator=torch.Generator().manual_seed(0)).to(device)
        warm = TimedEval(x, device)
        for _ in range(3): warm(model)
        print(f"{name} {size}x{size}, batch {batch}: eval_fn {1000 * warm.seconds / warm.n:.1f} ms per call (warm; load {load()})")
        for comp in a.compressions:
            lv = a.levels[comp]
            runs = sorted((run_once(model, x, comp, lv, device) for _ in range(a.repeat)), key=lambda r: r['wall'])
            r = runs[len(runs) // 2]
            over = r['wall'] - r['eval']
            pct = 100 * over / r['eval']
            tag = f"{name} {size}x{size} {comp} {level_text(comp, lv)}"
            target = TARGETS.get(name, {}).get(comp) if size == 64 else None
            verdict = '' if target is None else f"; target <= {target:g}%: {'met' if pct <= target else 'MISSED'}"
            print(f"{tag}: wall time {r['wall']:.3f} s (load {load()})")
            print(f"{tag}: eval_fn calls {r['n']} (floor 1 + {r['layers']} layers x {len(lv)} level(s) = {r['floor']})")
            print(f"{tag}: time inside eval_fn {r['eval']:.3f} s")
            print(f"{tag}: overhead above eval_fn {pct:.1f}% ({over:.3f} s{verdict})")
            print(f"{tag}: overhead per measurement {1000 * over / max(1, r['n'] - 1):.1f} ms "
                  f"(eval_fn: {1000 * r['eval'] / r['n']:.1f} ms per call)")
            print(f"{tag}: library's own timing: {r['lib']}")
            lib = r['lib']
            if lib.cost_seconds:
                print(f"{tag}: recording the cost model {lib.cost_seconds:.3f} s = {100 * lib.cost_seconds / over:.0f}% of the overhead")
            if a.profile and target is not None and pct > target:
                t, cum, tot = profile_overhead(model, x, comp, lv)
                print(f"{tag}: profile with a no-op eval_fn: {t:.3f} s of pure overhead; cumulative, fasterai/torch_pruning:")
                for l in cum: print(f"    {l}")
                print(f"{tag}: profile, top functions by own time:")
                for l in tot: print(f"    {l}")
        del model


def main(argv=None):
    a = parse_args(argv)
    try: device = torch.device(a.device)
    except RuntimeError: sys.exit(f"--device {a.device!r} is not a torch device")
    if device.type == 'cuda' and not torch.cuda.is_available(): sys.exit('--device cuda: CUDA is not available')
    for l in machine_lines(device): print(l)
    print(f"input: random batch {a.batch}x3xSxS, S in {a.sizes}; eval_fn = mean |output| under no_grad; "
          f"models with weights=None; median of {a.repeat} run(s)")
    print(f"load average before: {load()} (1, 5, 15 min)")
    t_all = time.perf_counter()
    overhead_cases = [(m.strip(), s) for m in a.models.split(',') if m.strip() for s in a.sizes] if 'overhead' in a.parts else []
    overhead_part(a, device, overhead_cases, a.batch)
    if 'suffix' in a.parts: suffix_part(a, device)
    if 'estimate' in a.parts: estimate_part(a, device)
    if 'sharding' in a.parts: sharding_part(a)
    if 'vit' in a.parts:
        overhead_part(a, device, [('vit12', a.sizes[0])], a.vit_batch)
        suffix_part(a, device, ['digits_vit', 'vit12'])
    print(f"load average after: {load()} (1, 5, 15 min)")
    print(f"bench ran in {time.perf_counter() - t_all:.0f} s")


if __name__ == '__main__':
    main()
