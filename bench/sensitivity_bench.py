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
                   help='which figures: overhead, suffix, estimate, sharding (default: all)')
    p.add_argument('--suffix-models', default='resnet18,resnet50,digits', help='models for the suffix part (default: resnet18,resnet50,digits)')
    a = p.parse_args(argv)
    comps = [c.strip() for c in a.compressions.split(',') if c.strip()]
    bad = [c for c in comps if c not in ('sparsity', 'pruning', 'quantization')]
    if bad: p.error(f"--compressions: unknown {bad}; allowed: sparsity, pruning, quantization")
    a.compressions = comps
    a.parts = [x.strip() for x in a.parts.split(',') if x.strip()]
    bad = [x for x in a.parts if x not in ('overhead', 'suffix', 'estimate', 'sharding')]
    if bad: p.error(f"--parts: unknown {bad}; allowed: overhead, suffix, estimate, sharding")
    try: a.levels = {c: [int(v) if float(v).is_integer() else float(v) for v in getattr(a, c).split(',')] for c in comps}
    except ValueError as e: p.error(f"levels must be numbers: {e}")
    try: a.sizes = [int(v) for v in a.size.split(',') if v.strip()]
    except ValueError as e: p.error(f"--size must be integers: {e}")
    if a.batch < 1 or not a.sizes or min(a.sizes) < 1 or a.repeat < 1: p.error('--batch, --size and --repeat must be positive')
    return a


def machine_lines(device):
    cpu = cpu_model()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()
    yield f"machine: {cpu}, {cores} cores available ({os.cpu_count()} in the system), {platform.system()} {platform.release()}"
    yield (f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads, "
           f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, python {platform.python_version()}")
    if device.type == 'cuda': yield f"device: {device} ({torch.cuda.get_device_name(device)})"
    else: yield f"device: {device}"


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


def suffix_part(a, device):
    "Suffix-only vs full evaluation of the same data + metric: time ratio and largest delta difference."
    import torch.nn.functional as F, torchvision.models as tvm
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    def acc(preds, targets): return (preds.argmax(1) == targets).float().mean().item()
    for name in [m.strip() for m in a.suffix_models.split(',') if m.strip()]:
        if name == 'digits':
            model, (_, _, xv, yv) = _digits()
            model = model.to(device)
            data = [(x.to(device), y.to(device)) for x, y in zip(xv.split(150), yv.split(150))]
            metric, hib, what = acc, True, f"{len(xv)} held-out digits in {len(data)} batches, accuracy"
        else:
            torch.manual_seed(0)
            model = tvm.get_model(name, weights=None).eval().to(device)
            g = torch.Generator().manual_seed(0)
            data = [(torch.randn(16, 3, 128, 128, generator=g).to(device), torch.randint(0, 1000, (16,), generator=g).to(device))
                    for _ in range(4)]
            metric, hib, what = (lambda p, t: F.cross_entropy(p, t).item()), False, "4 batches of 16x3x128x128, cross-entropy"
        an = {k: SensitivityAnalyzer(model, data=data, metric=metric, higher_is_better=hib, suffix=(k == 'suffix'))
              for k in ('full', 'suffix')}
        times, res = {'full': [], 'suffix': []}, {}
        for r in range(a.repeat):
            for k in (('full', 'suffix') if r % 2 == 0 else ('suffix', 'full')):
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter('ignore')
                    res[k] = an[k].analyze('sparsity', 50, verbose=False)
                times[k].append(time.perf_counter() - t0)
        tf, ts = statistics.median(times['full']), statistics.median(times['suffix'])
        d = max(abs(x.delta - y.delta) for x, y in zip(res['full'].layers, res['suffix'].layers))
        tag = f"{name} sparsity 50% ({len(res['full'].layers)} layers; {what})"
        print(f"{tag}: full evaluation {tf:.2f} s, suffix-only {ts:.2f} s, ratio {ts / tf:.2f} (median of {a.repeat})")
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


def main(argv=None):
    a = parse_args(argv)
    import torchvision.models as tvm
    try: device = torch.device(a.device)
    except RuntimeError: sys.exit(f"--device {a.device!r} is not a torch device")
    if device.type == 'cuda' and not torch.cuda.is_available(): sys.exit('--device cuda: CUDA is not available')
    for l in machine_lines(device): print(l)
    print(f"input: random batch {a.batch}x3xSxS, S in {a.sizes}; eval_fn = mean |output| under no_grad; "
          f"models with weights=None; median of {a.repeat} run(s)")
    print(f"load average before: {load()} (1, 5, 15 min)")
    t_all = time.perf_counter()
    overhead_cases = [(m.strip(), s) for m in a.models.split(',') if m.strip() for s in a.sizes] if 'overhead' in a.parts else []
    for name, size in overhead_cases:
        torch.manual_seed(0)
        model = tvm.get_model(name, weights=None).eval().to(device)
        x = torch.randn(a.batch, 3, size, size, generator=torch.Generator().manual_seed(0)).to(device)
        warm = TimedEval(x, device)
        for _ in range(3): warm(model)
        print(f"{name} {size}x{size}: eval_fn {1000 * warm.seconds / warm.n:.1f} ms per call (warm)")
        for comp in a.compressions:
            lv = a.levels[comp]
            runs = sorted((run_once(model, x, comp, lv, device) for _ in range(a.repeat)), key=lambda r: r['wall'])
            r = runs[len(runs) // 2]
            over = r['wall'] - r['eval']
            pct = 100 * over / r['eval']
            tag = f"{name} {size}x{size} {comp} {level_text(comp, lv)}"
            target = TARGETS.get(name, {}).get(comp)
            verdict = '' if target is None else f"; target <= {target:g}%: {'met' if pct <= target else 'MISSED'}"
            print(f"{tag}: wall time {r['wall']:.3f} s")
            print(f"{tag}: eval_fn calls {r['n']} (floor 1 + {r['layers']} layers x {len(lv)} level(s) = {r['floor']})")
            print(f"{tag}: time inside eval_fn {r['eval']:.3f} s")
            print(f"{tag}: overhead above eval_fn {pct:.1f}% ({over:.3f} s{verdict})")
            print(f"{tag}: overhead per measurement {1000 * over / max(1, r['n'] - 1):.1f} ms "
                  f"(eval_fn: {1000 * r['eval'] / r['n']:.1f} ms per call)")
            print(f"{tag}: library's own timing: {r['lib']}")
            if a.profile and target is not None and pct > target:
                t, cum, tot = profile_overhead(model, x, comp, lv)
                print(f"{tag}: profile with a no-op eval_fn: {t:.3f} s of pure overhead; cumulative, fasterai/torch_pruning:")
                for l in cum: print(f"    {l}")
                print(f"{tag}: profile, top functions by own time:")
                for l in tot: print(f"    {l}")
        del model
    if 'suffix' in a.parts: suffix_part(a, device)
    if 'estimate' in a.parts: estimate_part(a, device)
    if 'sharding' in a.parts: sharding_part(a)
    print(f"load average after: {load()} (1, 5, 15 min)")
    print(f"bench ran in {time.perf_counter() - t_all:.0f} s")


if __name__ == '__main__':
    main()
