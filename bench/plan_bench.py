"""Speed of fasterai's budget planner (fasterai.plan): solve, front, verify.

The planner's promise is that once the sweeps are measured, every plan, and the whole
accuracy-vs-budget front, comes from cached numbers in about a second, with no model pass.
This prints, one plain line per figure:

- `costs`: gathering the numbers once (a counter pass, and two prune-and-restores per pruning
  group, the other levels scaled from them) — paid once per model: by the analysis, or by
  `plan_compression(model=...)` for sweeps that recorded none (these synthetic ones);
- `solve`: one plan for 200 units x 10 levels x 3 kinds (sparsity, pruning, quantization), with
  one budget (target < 1 s) and with two;
- `front`: a 50-point front on one budget from the cached numbers (target < 5 s);
- `verify`: `Plan.verify` on the trained digits CNN (copy, apply, count, evaluate), against the
  time of its eval_fn alone: the overhead a verification adds; and one solve of that real plan
  (11 units of three kinds, small enough for the refinement by pairs of coupled units).

The 200-unit model is a chain of 200 Linear layers (width --width); its sweeps are synthetic
(random increasing damage curves, seeded), because the solver's time does not depend on where the
damage came from, and measuring 6,000 points would take the bench far past its minutes.

    OMP_NUM_THREADS=1 python bench/plan_bench.py
    python bench/plan_bench.py --units 200 --levels 10 --device cuda
"""
import argparse, os, platform, statistics, sys, time, warnings
from machine import cpu_model, load          # bench/machine.py: shared by the bench scripts
import numpy as np
import torch
import torch.nn as nn


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--device', default='cpu', help='torch device for the verify part: cpu, cuda, ... (default: cpu)')
    p.add_argument('--units', type=int, default=200, help='layers of the synthetic chain (default: 200)')
    p.add_argument('--levels', type=int, default=10, help='levels per kind (default: 10)')
    p.add_argument('--width', type=int, default=32, help='width of each Linear layer (default: 32)')
    p.add_argument('--points', type=int, default=50, help='points of the front (default: 50)')
    p.add_argument('--repeat', type=int, default=3, help='runs per timing; the median is reported (default: 3)')
    p.add_argument('--parts', default='solve,front,verify', help='which figures: solve, front, verify (default: all)')
    a = p.parse_args(argv)
    a.parts = [x.strip() for x in a.parts.split(',') if x.strip()]
    bad = [x for x in a.parts if x not in ('solve', 'front', 'verify')]
    if bad: p.error(f"--parts: unknown {bad}; allowed: solve, front, verify")
    if min(a.units, a.levels, a.width, a.points) < 2 or a.repeat < 1: p.error("--units, --levels, --width and --points must be at least 2, --repeat at least 1")
    return a


def machine_lines(device):
    cores = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()
    yield f"machine: {cpu_model()}, {cores} cores available ({os.cpu_count()} in the system), {platform.system()} {platform.release()}"
    yield (f"torch {torch.__version__}, numpy {np.__version__}, {torch.get_num_threads()} intra-op threads, "
           f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, python {platform.python_version()}")
    yield f"device (verify): {device}"


def timed(f, repeat):
    "(median seconds, last result) of `repeat` calls."
    ts, r = [], None
    for _ in range(repeat):
        t0 = time.perf_counter(); r = f(); ts.append(time.perf_counter() - t0)
    return statistics.median(ts), r


def chain(n, width):
    layers = []
    for i in range(n): layers += [(f'fc{i}', nn.Linear(width, width)), (f'relu{i}', nn.ReLU())]
    from collections import OrderedDict
    return nn.Sequential(OrderedDict(layers[:-1])).eval()


def synthetic_sweeps(model, levels, seed=0):
    "Sweeps of the three kinds with random increasing damage (accuracy 0.9 at baseline), as the analysis would return them."
    from fasterai.analyze.results import SweepResult, LayerCurve
    rng = np.random.default_rng(seed)
    layers = [(n, m) for n, m in model.named_modules() if isinstance(m, nn.Linear)]
    pct = np.linspace(10, 95, levels).round(1).tolist()
    prune = np.linspace(5, 75, levels).round(1).tolist()
    bits = sorted({int(b) for b in np.linspace(16, 2, levels).round()}, reverse=True)
    def curve(k):
        d = np.cumsum(rng.gamma(1., 1., k)) * rng.uniform(1e-4, 1e-2)       # increasing damage
        return (0.9 - d).tolist()
    def curves(lv, pruning=False):
        out = []
        for i, (n, m) in enumerate(layers):
            last = pruning and i == len(layers) - 1          # the output layer: not prunable
            out.append(LayerCurve(n, 'Linear', m.weight.numel(), [float('nan')] * len(lv) if last else curve(len(lv)),
                                  group=n if pruning else None, group_members=[n] if pruning else None,
                                  prunable=(not last) if pruning else None, reason='output layer' if last else None))
        return out
    return [SweepResult('sparsity', pct, 0.9, curves(pct), settings={'criteria': 'large_final', 'granularity': 'weight'}),
            SweepResult('pruning', prune, 0.9, curves(prune, True), settings={'criteria': 'large_final'}),
            SweepResult('quantization', bits, 0.9, curves(bits), settings={'quant_per_channel': True, 'quant_activations': False})]


def main(argv=None):
    a = parse_args(argv)
    device = torch.device(a.device)
    for line in machine_lines(device): print(line)
    print(f"load average before: {load()} (1, 5, 15 min)")
    from fasterai.plan.plan import plan_compression
    if 'solve' in a.parts or 'front' in a.parts:
        model = chain(a.units, a.width)
        sample = torch.randn(1, a.width)
        sweeps = synthetic_sweeps(model, a.levels)
        t0 = time.perf_counter()
        plan = plan_compression(sweeps, {'bytes': 10}, model, sample, step=None)
        t_first = time.perf_counter() - t0
        n_opts = sum(len(u.options) for u in plan.units)
        prob = plan.problem
        print(f"problem: {len(plan.units)} units ({a.units} layers: sparsity x bits; {a.units - 1} pruning groups), "
              f"{a.levels} levels per kind, {n_opts} options in all; refinement by pairs of coupled units "
              f"{'on' if prob.pair_work() <= prob.refine_work else 'off'} ({prob.pair_work():,} combinations per pass, limit {prob.refine_work:,})")
        print(f"costs: first plan_compression (counts the model; prunes and restores each of {a.units - 1} groups at two of its "
              f"{a.levels} levels, the others scaled; solves) {t_first:.2f} s")
    if 'solve' in a.parts:
        for budget in ({'bytes': 10}, {'macs': 50}, {'bytes': 10, 'macs': 50}):
            t, p = timed(lambda: plan.replan(budget), a.repeat)
            got = ', '.join(f"{k} {v:.2f}%" for k, v in p.percent.items())
            print(f"solve {budget}: {t:.3f} s (median of {a.repeat}); keeps {got}; predicted damage {p.damage:.4f}")
    if 'front' in a.parts:
        t, f = timed(lambda: plan.pareto('bytes', a.points), a.repeat)
        print(f"front: {a.points} points on bytes in {t:.2f} s (median of {a.repeat}; {1000 * t / a.points:.0f} ms per point), "
              f"{int(f.predicted.notna().sum())} feasible")
    if 'verify' in a.parts:
        from fasterai.demo.digits import trained_digits_cnn, digits_eval_fn
        from fasterai.analyze.sensitivity import SensitivityAnalyzer
        model, (_, _, xv, yv) = trained_digits_cnn()
        model.to(device)
        xv, yv = xv.to(device), yv.to(device)
        eval_fn, sample = digits_eval_fn(xv, yv), xv[:1]
        an = SensitivityAnalyzer(model, sample, eval_fn)
        sw = [an.sweep(k, lv, verbose=False) for k, lv in (('sparsity', [50, 70, 80, 90, 95]), ('pruning', [10, 25, 50, 75]),
                                                             ('quantization', [8, 6, 4, 3, 2]))]
        p = plan_compression(sw, {'bytes': 8, 'macs': 60}, sample=sample)        # from the costs the sweeps recorded
        t_small, _ = timed(lambda: p.replan({'bytes': 8, 'macs': 60}), a.repeat)
        print(f"solve (digits CNN, {len(p.units)} units of the three kinds, bytes<=8% and macs<=60%, refinement "
              f"{'on' if p.problem.pair_work() <= p.problem.refine_work else 'off'}): {t_small:.3f} s")
        import copy
        compressed = p.apply(copy.deepcopy(model))
        t_eval, _ = timed(lambda: eval_fn(compressed), a.repeat)
        t_ver, v = timed(lambda: p.verify(model, eval_fn), a.repeat)
        print(f"verify (digits CNN, {len(p.units)} units, bytes<=8% and macs<=60%): {t_ver:.3f} s, of which eval_fn {t_eval:.3f} s: "
              f"overhead {t_ver - t_eval:.3f} s (copy, apply: prune -> sparsify -> quantize, count); "
              f"predicted {v.predicted:.4f}, measured {v.measured:.4f}")
    print(f"load average after: {load()} (1, 5, 15 min)")


if __name__ == '__main__': main()
