"""Cost of per-sample bookkeeping and bootstrap intervals in a sensitivity sweep, on the trained digits CNN.

With data + a metric that returns one value per sample, the analysis keeps every sample's outcome
(a copy of n numbers per evaluation) and gives each delta a paired bootstrap interval (one matrix
product of the resample counts with each layer's per-sample damage, and a partial sort). This script
measures what that costs against the time spent evaluating the metric, on the digits CNN (6 layers,
449 held-out digits in 3 batches of 150) — the cheapest model in fasterai's notebooks, where the cost
shows most. Printed per case, as plain lines:

- the evaluation time of a sweep (median over --repeat runs);
- keeping per-sample outcomes (`evaluator.sample_seconds`), in % of the evaluation time;
- computing the intervals (the rest of `timing.interval_seconds`): on an analyzer's first sweep, which
  draws the 1,000 x n resample counts once, and on later sweeps, which reuse them;
- one evaluation (conv5 compressed, evaluated again and again) with the per-sample metric against the same
  evaluation with the metric returning its means, and what `as_metrics` took in it: the bookkeeping where it
  happens, right after a forward pass (there, every tensor op costs more than in a tight loop: cold caches);
- the difference in wall time against the same sweep with the same metrics returning their means
  (no bookkeeping at all), in % of the evaluation time: the end-to-end check, noisier than the rest.

The sweep's evaluation and bookkeeping are given twice: in wall time (what `Timing` and `sample_seconds`
record) and in this thread's CPU time (`time.thread_time`, read by wrappers around the evaluator's timed
calls); the one-evaluation figures in CPU time. On a shared machine other processes take the CPU away in
slices of milliseconds: every evaluation pays its share, but most 0.1 ms stretches of bookkeeping escape, so
the median wall-time percentage flatters under load; the CPU-time one does not depend on the load. The
verdict takes the larger of the two.

    OMP_NUM_THREADS=1 python bench/metrics_bench.py
    OMP_NUM_THREADS=1 python bench/metrics_bench.py --repeat 9 --levels 50,80,95
    python bench/metrics_bench.py --device cuda

It also checks the number of evaluations: a sweep returning three metrics costs exactly the
evaluations of a sweep returning one (1 + layers x levels).
"""
import argparse, os, platform, statistics, sys, time, warnings
from machine import cpu_model, load          # bench/machine.py: shared by the bench scripts
import torch

TARGET_PCT = 2.        # issue 13: keeping per-sample outcomes costs at most 2% of the evaluation time on the digits CNN


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--device', default='cpu', help='torch device: cpu, cuda, cuda:1, ... (default: cpu)')
    p.add_argument('--levels', default='50,80,95', help='sparsity levels of the sweep, in percent (default: 50,80,95)')
    p.add_argument('--repeat', type=int, default=7, help='sweeps per figure; the median is reported (default: 7)')
    a = p.parse_args(argv)
    try: a.levels = [float(v) if '.' in v else int(v) for v in a.levels.split(',') if v.strip()]
    except ValueError as e: p.error(f"--levels must be numbers: {e}")
    if not a.levels or a.repeat < 2: p.error('--levels must name at least one level and --repeat must be at least 2')
    return a


def mean_of(metric):
    "The same metric returning its mean (a number per metric): no per-sample outcome to keep."
    def scalar(preds, targets):
        v = metric(preds, targets)
        return {k: x.mean() for k, x in v.items()} if isinstance(v, dict) else v.mean()
    return scalar


def cpu_clocks():
    "Wrap the evaluator's timed calls so that it also counts this thread's CPU time: `cpu_seconds` (evaluating) and `cpu_sample_seconds` (keeping per-sample outcomes)."
    from fasterai.analyze.evaluation import Evaluator
    timed, split = Evaluator._timed, Evaluator._split
    def _timed(self, f, *args):
        c0 = time.thread_time()
        try: return timed(self, f, *args)
        finally: self.cpu_seconds = getattr(self, 'cpu_seconds', 0.) + time.thread_time() - c0
    def _split(self, raw, baseline=False):
        c0 = time.thread_time()
        value, samples = split(self, raw, baseline)
        if samples is not None: self.cpu_sample_seconds = getattr(self, 'cpu_sample_seconds', 0.) + time.thread_time() - c0
        return value, samples
    Evaluator._timed, Evaluator._split = _timed, _split


def sweep_costs(model, data, metrics:dict, levels, suffix, repeat):
    "Per metric variant and sweep: eval, bookkeeping and interval seconds (an analyzer's first sweep, and its second), wall seconds, evaluations, and the CPU seconds of each; the variants interleaved."
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    keys = ('eval', 'keep', 'first', 'later', 'total', 'n_evals', 'cpu_eval', 'cpu_keep', 'cpu_total')
    out = {name: {k: [] for k in keys} for name in metrics}
    for _ in range(repeat):
        for name, metric in metrics.items():                     # interleaved: the same load for both variants
            an = SensitivityAnalyzer(model, data=data, metric=metric, suffix=suffix)
            ev = an.evaluator
            for k in range(2):                                   # a fresh analyzer's first sweep, then a second one
                s0, c0, ck0, ct0 = ev.sample_seconds, getattr(ev, 'cpu_seconds', 0.), getattr(ev, 'cpu_sample_seconds', 0.), time.thread_time()
                with warnings.catch_warnings():
                    warnings.filterwarnings('ignore', message='higher_is_better inferred')
                    t = an.sweep('sparsity', levels, verbose=False).timing
                ct = time.thread_time() - ct0
                keep, o = ev.sample_seconds - s0, out[name]
                o['first' if k == 0 else 'later'].append(t.interval_seconds - keep)
                if k == 1:
                    o['eval'].append(t.eval_seconds); o['keep'].append(keep); o['total'].append(t.total_seconds)
                    o['n_evals'].append(t.n_evals); o['cpu_total'].append(ct)
                    o['cpu_eval'].append(ev.cpu_seconds - c0); o['cpu_keep'].append(getattr(ev, 'cpu_sample_seconds', 0.) - ck0)
    return {name: {k: statistics.median(v) for k, v in o.items()} for name, o in out.items()}


def per_evaluation(model, data, metric, suffix, repeat, n=20):
    "CPU seconds of one evaluation with the per-sample metric and with its means, and of the per-sample bookkeeping in the first (medians, interleaved)."
    from fasterai.analyze.evaluation import DataEvaluator, SuffixEvaluator
    make = (lambda m: SuffixEvaluator(model, data, m)) if suffix else (lambda m: DataEvaluator(model, data, m))
    evs = {'per sample': make(metric), 'means': make(mean_of(metric))}
    with warnings.catch_warnings():
        warnings.filterwarnings('ignore', message='higher_is_better inferred')
        for e in evs.values(): e.baseline()
    touched = ['conv5']                                           # a suffix evaluation re-runs conv5 and what follows it
    out = {k: [] for k in (*evs, 'keep')}
    for _ in range(repeat):
        for k, e in evs.items():
            s0, t0 = getattr(e, 'cpu_sample_seconds', 0.), time.thread_time()
            for _ in range(n): e.compressed(touched)
            out[k].append((time.thread_time() - t0) / n)
            if k == 'per sample': out['keep'].append((e.cpu_sample_seconds - s0) / n)
    return {k: statistics.median(v) for k, v in out.items()}


def main(argv=None):
    a = parse_args(argv)
    device = torch.device(a.device)
    from fasterai.demo.digits import trained_digits_cnn
    from fasterai.analyze.evaluation import accuracy_per_sample, top_k_per_sample, cross_entropy_per_sample, metric_dict
    print(f"machine: {cpu_model()}, {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()} cores "
          f"available, load {load()}, {platform.system()} {platform.release()}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads, OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}, python {platform.python_version()}, device {device}")
    model, (_, _, xv, yv) = trained_digits_cnn()
    model = model.to(device)
    data = [(x.to(device), y.to(device)) for x, y in zip(xv.split(150), yv.split(150))]
    cases = [('accuracy', accuracy_per_sample),
             ('top1+top5+loss', metric_dict(top1=accuracy_per_sample, top5=top_k_per_sample(5), loss=cross_entropy_per_sample))]
    print(f"digits CNN, {len(xv)} held-out digits in {len(data)} batches; sparsity sweep at {a.levels} over its 6 layers; "
          f"95% paired bootstrap, 1000 resamples; medians of {a.repeat} sweeps")
    cpu_clocks()
    worst = 0.
    for name, metric in cases:
        for suffix in (True, False):
            how = 'suffix evaluation' if suffix else 'full evaluation'
            got = sweep_costs(model, data, {'per sample': metric, 'means': mean_of(metric)}, a.levels, suffix, a.repeat)
            per, ref = got['per sample'], got['means']
            ev, cev = per['eval'], per['cpu_eval']
            keep, first, later = (100 * per[k] / ev for k in ('keep', 'first', 'later'))
            cpu_keep = 100 * per['cpu_keep'] / cev
            diff, cpu_diff = 100 * (per['total'] - ref['total']) / ev, 100 * (per['cpu_total'] - ref['cpu_total']) / cev
            worst = max(worst, keep, cpu_keep)
            tag = f"digits {name}, {how}"
            print(f"{tag}: {int(per['n_evals'])} evaluations (the same with the means: {int(ref['n_evals'])}), "
                  f"{1e3 * ev:.1f} ms evaluating per sweep, {1e3 * cev:.1f} ms of CPU time (load {load()})")
            print(f"{tag}: keeping per-sample outcomes {1e3 * per['keep']:.2f} ms = {keep:.2f}% of the evaluation time; "
                  f"in CPU time {1e3 * per['cpu_keep']:.2f} ms = {cpu_keep:.2f}%")
            one = per_evaluation(model, data, metric, suffix, a.repeat)
            print(f"{tag}: one evaluation (conv5 compressed) {1e3 * one['per sample']:.3f} ms of CPU time with the per-sample metric, "
                  f"of which {1e6 * one['keep']:.0f} µs keeping the outcomes; {1e3 * one['means']:.3f} ms with its means: "
                  f"{100 * (one['per sample'] - one['means']) / one['means']:+.2f}%")
            print(f"{tag}: intervals {1e3 * per['first']:.2f} ms = {first:.2f}% on an analyzer's first sweep (drawing the resamples), "
                  f"{1e3 * per['later']:.2f} ms = {later:.2f}% on later sweeps")
            print(f"{tag}: a sweep with per-sample metrics minus one with their means: {1e3 * (per['total'] - ref['total']):+.2f} ms "
                  f"= {diff:+.2f}% of the evaluation time in wall time, {cpu_diff:+.2f}% in CPU time (noisy: separate runs, interleaved)")
    print(f"keeping per-sample outcomes, worst case: {worst:.2f}% of the evaluation time, the larger of wall and CPU time "
          f"(target <= {TARGET_PCT:g}%): {'met' if worst <= TARGET_PCT else 'MISSED'} (load {load()})")


if __name__ == '__main__':
    sys.exit(main())
