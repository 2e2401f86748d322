"""Does the plan beat what users would do anyway? The table of issue 22: plans against the heuristics of
`fasterai.plan.baselines` at equal budgets, on the byte-level LM of `fasterai.demo.text` and the digits CNN and MLP.

Each row runs `fasterai.plan.compare` once per seed and budget: the plan made from the sweeps' task metric
(validation NLL for the LM, calibration accuracy for the digits), the plan made from the KL to the dense model
(`fasterai.analyze.damage.kl_metric`), and every baseline that competes, all at the plan's budget, evaluated on
held-out data (the LM's test split, the digits' test third) with a per-sample metric. Printed, as plain lines:
each (row, budget, regime, seed, method) result, then per row and budget: mean ± std over the seeds, and each
method's paired difference from the plan (mean ± std over the seeds, and a 95% paired bootstrap interval over the
seeds' test samples pooled).

Rows (`--rows`, comma separated; default: all):
  lm-sparsity-magnitude   LM, sparsity with |w|, 50/60/70% of the linear layers' weights, one-shot
  lm-sparsity-wanda       the same with Wanda's |W|·‖X‖ (every method sparsified with Wanda)
  lm-bits                 LM, 4 / 3 / 2.5 bits per weight on average, one-shot
  lm-joint                LM, sparsity + bits at 10% of the linear layers' fp32 bytes, one-shot
  lm-sparsity-sparsegpt   LM, 50/60/70% sparsity with SparseGPT: swept with it, and the plan, uniform, OWL ... applied
                          with it (regime 'one-shot, sparsegpt'); 128 calibration windows
  lm-bits-gptq            LM, 4 / 3 / 2.5 bits with GPTQ (uniform GPTQ, llama.cpp-like with GPTQ, the plan's bits)
  digits-sparsity         CNN and MLP, 90/95/97% sparsity, one-shot and after 2 epochs of fine-tuning
  digits-bits             CNN and MLP, 2.5 bits on average, one-shot
  digits-pruning          CNN, 50% of the MACs, one-shot and fine-tuned; also global pruning (torch-pruning, fasterai)
  digits-trained          CNN and MLP, 90/95/97% sparsity: every allocation trained in with `SparsifyCallback` (its
                          default schedule) for --finetune-epochs; the workflow the sparsify tutorial teaches (a sweep,
                          then `to_layer_targets(..., prior='auto')`, its default band) against the heuristics, and the
                          candidate workflows of `CANDIDATES`; give --reference workflow
  digits-pruning-trained  CNN, 50% of the MACs: the plan's pruning ratios (a pruning sweep, `plan_compression`) and
                          uniform pruning trained in with `PruneCallback` (default schedule) for --finetune-epochs,
                          against torch-pruning's global pruning (one shot) fine-tuned as long; --reference workflow
  lm-trained              LM, 60/70% of the linear layers' weights: every allocation trained in with `SparsifyCallback`
                          (default schedule) over --lm-steps steps of fine-tuning (fastai, its default optimizer); the
                          workflow the sparsify tutorial teaches against uniform, global magnitude, ERK, OWL and the
                          depth ramp, and the candidate workflows of `CANDIDATES`; give --reference workflow
  resnet-trained          the same as digits-trained on a ResNet-like CNN of the digits (three residual blocks)
  compare-time            the time of compare() on the digits CNN against one plan (sweep, solve) and its verification

    OMP_NUM_THREADS=1 python bench/value_bench.py --out value.json           # everything, 3 seeds, CPU
    OMP_NUM_THREADS=1 python bench/value_bench.py --rows digits-bits --seeds 0
    python bench/value_bench.py --rows lm-sparsity-magnitude --size bench --device cuda --out lm.json
    python bench/value_bench.py --table value.json lm.json                   # the tables of saved parts
"""
import argparse, copy, json, os, platform, time, warnings
from collections import OrderedDict
from fractions import Fraction
from machine import cpu_model, load          # bench/machine.py: shared by the bench scripts
import numpy as np
import torch
import torch.nn as nn

ROWS = ('lm-sparsity-magnitude', 'lm-sparsity-wanda', 'lm-bits', 'lm-joint', 'digits-sparsity', 'digits-bits',
        'digits-pruning', 'digits-trained', 'digits-pruning-trained', 'compare-time', 'lm-trained', 'resnet-trained',
        'lm-sparsity-sparsegpt', 'lm-bits-gptq')
PLAN_TASK, PLAN_KL, PLAN_REFINED = 'plan (task)', 'plan (KL)', 'plan (KL, refined)'
WORKFLOW = 'workflow (as taught)'   # sparsity: sweep, to_layer_targets(prior='auto'); pruning: the plan's ratios
REFERENCE = {'refined': PLAN_REFINED, 'kl': PLAN_KL, 'task': PLAN_TASK, 'workflow': WORKFLOW}
KEPT = ('params %', 'macs %', 'bytes %')


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--rows', default=','.join(ROWS), help='comma-separated rows (default: all)')
    p.add_argument('--seeds', default='0,1,2', help='comma-separated seeds of the trained models (default: 0,1,2)')
    p.add_argument('--size', default='small', help="the LM setting of fasterai.demo.text (default: small)")
    p.add_argument('--device', default='cpu', help='torch device (default: cpu)')
    p.add_argument('--reference', default='refined', choices=list(REFERENCE), help='the plan differences are from')
    p.add_argument('--refine', type=int, default=2, help='rounds of Plan.refine on the KL plan (0: none)')
    p.add_argument('--finetune-epochs', type=int, default=2, help='epochs of the fine-tuned digits rows (default: 2)')
    p.add_argument('--lm-steps', type=int, default=200, help='steps of the lm-trained fine-tuning (default: 200)')
    p.add_argument('--prune-scoring', default=None, choices=['group', 'filters'],
                   help="how every Pruner of the run scores channels (default: the Pruner's own default)")
    p.add_argument('--sparsity-levels', default=None,
                   help=f"comma-separated sparsity levels of the LM sweeps (default: {','.join(map(str, SPARSITY_LEVELS))})")
    p.add_argument('--bands', default=None,
                   help="trained rows: also train the taught workflow with these bands of to_layer_targets, "
                        "comma-separated 'sparser:denser' pairs, fractions allowed (e.g. '0.6:0.4,0.5:1/3')")
    p.add_argument('--only', default=None,
                   help="trained rows: train only these methods (';'-separated names, e.g. \"workflow (as taught);ERK\")")
    p.add_argument('--out', default=None, help='save every result (with its per-sample values) to this JSON file')
    p.add_argument('--table', nargs='*', default=None, help='print the tables of saved JSON files, and stop')
    a = p.parse_args(argv)
    a.rows = [r.strip() for r in a.rows.split(',') if r.strip()]
    bad = [r for r in a.rows if r not in ROWS]
    if bad: p.error(f"--rows: unknown {bad}; allowed: {list(ROWS)}")
    a.seeds = [int(s) for s in a.seeds.split(',') if s.strip()]
    a.only = None if a.only is None else {m.strip() for m in a.only.split(';') if m.strip()}
    try: a.bands = [tuple(float(Fraction(v)) for v in pair.split(':')) for pair in (a.bands or '').split(',') if pair.strip()]
    except ValueError: p.error(f"--bands={a.bands!r}: give 'sparser:denser' pairs of numbers in (0, 1], e.g. '0.6:0.4'")
    if any(len(b) != 2 or not all(0 < v <= 1 for v in b) for b in a.bands):
        p.error(f"--bands: each pair is 'sparser:denser', both in (0, 1]; got {a.bands}")
    for b in a.bands:                      # the taught workflow (prior='auto', checked) with another band
        CANDIDATES[f"workflow, band ({b[0]:.3g}, {b[1]:.3g})"] = dict(prior='auto', band=b, checked=True)
    a.sparsity_levels = ([float(s) for s in a.sparsity_levels.split(',') if s.strip()] if a.sparsity_levels
                         else SPARSITY_LEVELS)
    if a.refine < 0: p.error(f"--refine={a.refine}: rounds must be >= 0")
    if a.refine == 0 and a.reference == 'refined':
        p.error("--refine 0 makes no refined plan: give --reference kl or task")
    return a


def machine_line(device:torch.device) -> str:
    import fasterai
    where = torch.cuda.get_device_name(device) if device.type == 'cuda' else cpu_model()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()
    return (f"machine: {where}, {cores} cores; python {platform.python_version()}, torch {torch.__version__}, "
            f"numpy {np.__version__}, fasterai {fasterai.__version__}; {torch.get_num_threads()} threads; "
            f"load {load()}")


# ---------------------------------------------------------------- recording
class Results:
    "Every (row, model, budget, regime, seed, method) result, printed as a plain line as it comes."
    def __init__(self, reference:str): self.rows, self.reference = [], reference

    def add(self, key:dict, c):
        "The methods of `compare`'s result `c` (its plan named after the reference)."
        ref = REFERENCE[self.reference]
        for r in c.table.to_dict('records'):
            method = ref if r['method'] == 'plan' else r['method']
            s = c.samples.get(r['method'])
            self.rows.append({**key, 'method': method, 'metric': float(r['metric']), **{k: float(r[k]) for k in KEPT},
                              'samples': None if s is None else np.asarray(s, float).tolist()})
            print(f"{key['row']} {key['model']} {key['budget']} {key['regime']} seed={key['seed']} {method}: "
                  f"{r['metric']:.4f} (params {r['params %']:.2f}%, macs {r['macs %']:.1f}%, "
                  f"bytes {r['bytes %']:.2f}%)",
                  flush=True)
        skipped = '; '.join(f"{k}: {v[:100]}" for k, v in c.skipped.items())
        not_run = f"; not run: {skipped}" if skipped else ''
        print(f"  compare: {len(c.table)} methods, {c.seconds:.1f} s{not_run}", flush=True)


def compared(results:Results, key:dict, model, made:dict, *, data, metric, metric_name, extra=None, **kw):
    "compare() the reference plan and the baselines, the other plans as extra methods; every method recorded."
    from fasterai.plan import compare
    ref = REFERENCE[results.reference]
    more = {**{k: p for k, p in made.items() if k != ref}, **(extra or {})}
    c = compare(model, made[ref], data=data, metric=metric, metric_name=metric_name, extra=more, **kw)
    results.add(key, c)
    return c


def plans(a, sweeps:dict, budget:dict, model, calib:dict, **kw) -> dict:
    "The plan of each sweep (or list of sweeps) at `budget`, and the KL plan refined (`a.refine` rounds)."
    from fasterai.plan import plan_compression
    sample = calib['data'][0][0][:1]
    made = {name: plan_compression(sw, budget, sample=sample, **kw) for name, sw in sweeps.items() if name != 'kl'}
    if a.refine:
        t0 = time.perf_counter()
        made[PLAN_REFINED] = made[PLAN_KL].refine(model, data=calib['data'], metric=sweeps['kl'], rounds=a.refine,
                                                  criteria=calib.get('criteria'), calibration_data=calib.get('batches'))
        steps = made[PLAN_REFINED].repairs
        path = ' -> '.join(format(x['measured'], '.4f') for x in steps)
        print(f"  refine: {sum(x['evaluations'] for x in steps)} evaluations in {time.perf_counter() - t0:.1f} s; "
              f"calibration KL {path}", flush=True)
    return made


def sweeps_of(model, data, sample, task:tuple, kind:str, levels, criteria=None, kl=None) -> dict:
    "The sweeps of `kind` with the task metric `(metric, name, higher_is_better)` and with the KL to the dense model."
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    from fasterai.analyze.damage import kl_metric
    from fasterai.core.criteria import large_final
    kl = kl_metric(model, data) if kl is None else kl
    out = {'kl': kl}
    for name, (metric, mname, hib) in ((PLAN_TASK, task), (PLAN_KL, (kl, 'kl', False))):
        an = SensitivityAnalyzer(model, sample, data=data, metric=metric, higher_is_better=hib, metric_name=mname,
                                 criteria=large_final if criteria is None else criteria)
        out[name] = an.sweep(kind, levels, verbose=False)
    return out


# ---------------------------------------------------------------- the language model rows
SPARSITY_LEVELS, BITS_LEVELS = [20, 40, 50, 60, 70, 80, 90], [8, 6, 5, 4, 3, 2]


def lm_rows(a, results:Results, row:str):
    from fasterai.demo.text import trained_text_lm, lm_batches, lm_nll_per_sample
    from fasterai.core.wanda import Wanda
    for seed in a.seeds:
        t0 = time.perf_counter()
        model, data = trained_text_lm(a.size, seed, a.device)
        print(f"  {row}: LM {a.size} seed {seed} trained in {time.perf_counter() - t0:.0f} s", flush=True)
        batches = lm_batches(data.corpus.tokens['train'], model.config.seq_len, n_seqs=32)   # Wanda's and OWL's
        wanda = Wanda(batches) if row.endswith('wanda') else None
        calib = dict(data=data.valid, batches=batches, criteria=wanda)
        sample = data.valid[0][0][:1]
        eval_kw = dict(data=data.test, metric=lm_nll_per_sample, metric_name='test nll', higher_is_better=False,
                       calibration_data=batches, criteria=wanda)
        task = (lm_nll_per_sample, 'nll', False)
        t0 = time.perf_counter()
        if row.startswith('lm-sparsity'):
            sw = sweeps_of(model, data.valid, sample, task, 'sparsity', a.sparsity_levels, wanda)
            settings = [(f"{pct}% sparse", {'params': 100 - pct}) for pct in (50, 60, 70)]
        elif row == 'lm-bits':
            sw = sweeps_of(model, data.valid, sample, task, 'quantization', BITS_LEVELS)
            settings = [(f"{bits:g} bits", {'bytes': 100 * bits / 32}) for bits in (4, 3, 2.5)]
        else:                                                      # lm-joint: one plan over sparsity and bits
            sp = sweeps_of(model, data.valid, sample, task, 'sparsity', a.sparsity_levels)
            qb = sweeps_of(model, data.valid, sample, task, 'quantization', BITS_LEVELS, kl=sp['kl'])
            sw = {k: [sp[k], qb[k]] if k != 'kl' else sp[k] for k in sp}
            settings = [('10% bytes', {'bytes': 10})]
        print(f"  sweeps: {time.perf_counter() - t0:.0f} s", flush=True)
        for label, budget in settings:
            made = plans(a, sw, budget, model, calib, scope='units')
            key = dict(row=row, model='LM', budget=label, regime='one-shot', seed=seed)
            compared(results, key, model, made, **eval_kw)


# ---------------------------------------------------------------- the LM rows by reconstruction (issue 29)
RECON_ROWS = {'lm-sparsity-sparsegpt': ('sparsity', 'sparsegpt'), 'lm-bits-gptq': ('quantization', 'gptq')}


def recon_sweeps(model, data, sample, task:tuple, kind:str, levels, method:str, calib) -> dict:
    "The sweeps of `kind` by `method` (reading `calib`), with the task metric and with the KL to the dense model."
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    from fasterai.analyze.damage import kl_metric
    out = {'kl': kl_metric(model, data)}
    for name, (metric, mname, hib) in ((PLAN_TASK, task), (PLAN_KL, (out['kl'], 'kl', False))):
        an = SensitivityAnalyzer(model, sample, data=data, metric=metric, higher_is_better=hib, metric_name=mname,
                                 calibration_data=calib)
        out[name] = an.sweep(kind, levels, method=method, verbose=False)
    return out


def recon_rows(a, results:Results, row:str):
    """The LM rows with every allocation applied by SparseGPT or GPTQ: the sweeps measure with the method, and the
    plans and the rules (uniform, OWL, ..., llama.cpp-like) apply with it, the plan sequentially (`Plan.apply`)."""
    from fasterai.demo.text import trained_text_lm, lm_batches, lm_nll_per_sample
    kind, method = RECON_ROWS[row]
    for seed in a.seeds:
        t0 = time.perf_counter()
        model, data = trained_text_lm(a.size, seed, a.device)
        print(f"  {row}: LM {a.size} seed {seed} trained in {time.perf_counter() - t0:.0f} s", flush=True)
        batches = lm_batches(data.corpus.tokens['train'], model.config.seq_len, n_seqs=128)
        t0 = time.perf_counter()
        levels = a.sparsity_levels if kind == 'sparsity' else BITS_LEVELS
        sw = recon_sweeps(model, data.valid, data.valid[0][0][:1], (lm_nll_per_sample, 'nll', False), kind, levels,
                          method, batches)
        print(f"  sweeps ({method}): {time.perf_counter() - t0:.0f} s", flush=True)
        settings = ([(f"{pct}% sparse", {'params': 100 - pct}) for pct in (50, 60, 70)] if kind == 'sparsity' else
                    [(f"{bits:g} bits", {'bytes': 100 * bits / 32}) for bits in (4, 3, 2.5)])
        for label, budget in settings:
            made = plans(a, sw, budget, model, dict(data=data.valid, batches=batches), scope='units')
            key = dict(row=row, model='LM', budget=label, regime=f'one-shot, {method}', seed=seed)
            compared(results, key, model, made, data=data.test, metric=lm_nll_per_sample, metric_name='test nll',
                     higher_is_better=False, calibration_data=batches)


# ---------------------------------------------------------------- the digits rows
def digits_mlp() -> nn.Sequential:
    "The 4-layer MLP of the budget tutorial: 64 → 256 → 128 → 64 → 10."
    return nn.Sequential(OrderedDict([('flatten', nn.Flatten()), ('fc1', nn.Linear(64, 256)), ('relu1', nn.ReLU()),
                                      ('fc2', nn.Linear(256, 128)), ('relu2', nn.ReLU()), ('fc3', nn.Linear(128, 64)),
                                      ('relu3', nn.ReLU()), ('fc4', nn.Linear(64, 10))]))


class _Residual(nn.Module):
    "conv-BN-ReLU-conv-BN plus the input (a 1x1 conv when the width or stride changes), then ReLU."
    def __init__(self, ci:int, co:int, stride:int=1):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(ci, co, 3, stride, 1, bias=False), nn.BatchNorm2d(co), nn.ReLU(),
                                  nn.Conv2d(co, co, 3, 1, 1, bias=False), nn.BatchNorm2d(co))
        self.skip = (nn.Identity() if ci == co and stride == 1 else
                     nn.Sequential(nn.Conv2d(ci, co, 1, stride, bias=False), nn.BatchNorm2d(co)))
    def forward(self, x): return torch.relu(self.body(x) + self.skip(x))


def digits_resnet(w:int=16) -> nn.Sequential:
    "A ResNet-like CNN for the 8x8 digits: a stem, three residual blocks (16, 32, 64 channels), pooling, a classifier."
    return nn.Sequential(nn.Conv2d(1, w, 3, 1, 1, bias=False), nn.BatchNorm2d(w), nn.ReLU(), _Residual(w, w),
                         _Residual(w, 2 * w, 2), _Residual(2 * w, 4 * w, 2), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(4 * w, 10))


def digits_setup():
    "(train, calibration, test) of the digits, as in the budget tutorial: 1,078 / 360 / 359."
    from fasterai.demo.digits import load_digits_tensors
    x_tr, y_tr, x_va, y_va = load_digits_tensors(valid_pct=0.4)
    return (x_tr, y_tr), [(x_va[::2], y_va[::2])], [(x_va[1::2], y_va[1::2])]


def digits_models(seed:int, archs):
    from fasterai.demo.digits import digits_cnn, train_digits
    (x_tr, y_tr), _, _ = digits_setup()
    for arch in archs:
        torch.manual_seed(seed)
        make = {'CNN': digits_cnn, 'MLP': digits_mlp, 'ResNet': digits_resnet}[arch]
        yield arch, train_digits(make(), x_tr, y_tr, epochs=20, seed=seed)


def fine_tuner(epochs:int, seed:int):
    from fasterai.demo.digits import train_digits
    (x_tr, y_tr), _, _ = digits_setup()
    return lambda m: train_digits(m, x_tr, y_tr, epochs=epochs, lr=3e-3, seed=seed)


def global_pruners(model, sample, budget_pct:float) -> dict:
    "Global pruning to `budget_pct`% of the MACs, by bisection on the ratio: torch-pruning's and fasterai's `Pruner`."
    import torch_pruning as tp
    from fasterai.core.counter import count_flops_params
    from fasterai.prune.pruner import Pruner
    dense = count_flops_params(model, sample)[0]
    def tp_global(m, r):
        last = [mod for mod in m.modules() if isinstance(mod, nn.Linear)][-1]
        tp.pruner.MagnitudePruner(m, sample, tp.importance.MagnitudeImportance(p=2), global_pruning=True,
                                  pruning_ratio=r / 100, ignored_layers=[last]).step()
    def fa_global(m, r): Pruner(m, r, context='global', example_inputs=sample).prune_model()
    def least(prune):
        def apply(m):
            lo, hi, best = 0., 95., None
            for _ in range(12):
                r, trial = (lo + hi) / 2, copy.deepcopy(m)
                prune(trial, r)
                if count_flops_params(trial, sample)[0] <= dense * budget_pct / 100: best, hi = r, r
                else: lo = r
            prune(m, best if best is not None else 95.)
        return apply
    return {'torch-pruning global': least(tp_global), 'Pruner global': least(fa_global)}


def digits_rows(a, results:Results, row:str):
    from fasterai.analyze.evaluation import accuracy_per_sample
    _, cal, test = digits_setup()
    sample = cal[0][0][:1]
    eval_kw = dict(data=test, metric=accuracy_per_sample, metric_name='test accuracy', higher_is_better=True,
                   calibration_data=cal)
    task = (accuracy_per_sample, 'accuracy', True)
    archs = ('CNN',) if row == 'digits-pruning' else ('CNN', 'MLP')
    for seed in a.seeds:
        for arch, model in digits_models(seed, archs):
            if row == 'digits-sparsity':
                sw = sweeps_of(model, cal, sample, task, 'sparsity', [50, 70, 80, 90, 95, 97, 98, 99])
                settings = [(f"{pct}% sparse", {'params': 100 - pct}, dict(scope='units')) for pct in (90, 95, 97)]
            elif row == 'digits-bits':
                sw = sweeps_of(model, cal, sample, task, 'quantization', [8, 6, 4, 3, 2])
                settings = [('2.5 bits', {'bytes': 100 * 2.5 / 32}, dict(scope='units'))]
            else:
                sw = sweeps_of(model, cal, sample, task, 'pruning', [10, 25, 50, 75])
                settings = [('50% MACs', {'macs': 50}, {})]
            regimes = [('one-shot', None)]
            if row != 'digits-bits':
                regimes.append((f"{a.finetune_epochs} epochs", fine_tuner(a.finetune_epochs, seed)))
            extra = global_pruners(model, sample, 50) if row == 'digits-pruning' else None
            for label, budget, kw in settings:
                made = plans(a, sw, budget, model, dict(data=cal, batches=cal), **kw)
                for regime, ft in regimes:
                    key = dict(row=row, model=arch, budget=label, regime=regime, seed=seed)
                    compared(results, key, model, made, fine_tune=ft, extra=extra, **eval_kw)


# ---------------------------------------------------------------- allocations trained in with the callback (issue 31)
def callback_trainer(epochs:int, seed:int, lr:float=3e-3, callback=None):
    """train(model, targets): `callback(targets)` (default `SparsifyCallback`) with its default schedule,
    `fit_one_cycle(epochs, lr)`, seeded; targets None: no callback (fine-tuning only)."""
    import torch.nn.functional as F
    from torch.utils.data import TensorDataset, DataLoader
    from fastai.data.core import DataLoaders
    from fastai.learner import Learner
    from fastai.callback.schedule import fit_one_cycle        # patches Learner.fit_one_cycle
    from fastai.torch_core import set_seed
    from fasterai.sparse.sparsify_callback import SparsifyCallback
    (x_tr, y_tr), _, test = digits_setup()
    def train(model, targets):
        set_seed(seed)
        shuffle = torch.Generator().manual_seed(seed)
        dls = DataLoaders(DataLoader(TensorDataset(x_tr, y_tr), batch_size=64, shuffle=True, generator=shuffle),
                          DataLoader(TensorDataset(*test[0]), batch_size=512))
        learn = Learner(dls, model, loss_func=F.cross_entropy)
        cbs = [] if targets is None else [(callback or SparsifyCallback)(targets)]
        threads = torch.get_num_threads()
        torch.set_num_threads(1)                                 # the same network whatever the thread setting
        try:
            with learn.no_bar(), learn.no_logging(): learn.fit_one_cycle(epochs, lr, cbs=cbs)
        finally: torch.set_num_threads(threads)
        return learn.model.eval()
    return train


def workflow_targets(model, sweep, pct:float, calibration_data) -> dict:
    """What the sparsify tutorial teaches: the sweep's curves within a band around a density prior (`prior='auto'`:
    ERK's, or global magnitude's where the curves predict it does at most half of ERK's damage; default band),
    checked on the calibration data against the prior's own levels (`calibration_data=`)."""
    from fasterai.analyze.targets import auto_prior
    pick, pred, _ = auto_prior(sweep, model, pct)
    print(f"  prior='auto' at {pct}%: {pick} (predicted damage: ERK's band {pred['erk']:.4f}, magnitude's band "
          f"{pred['magnitude']:.4f})", flush=True)
    print('  ', end='')
    return sweep.to_layer_targets(model, pct, prior='auto', calibration_data=calibration_data)


# other workflows measured next to the taught one: name -> `to_layer_targets` keywords
CANDIDATES = {"workflow, unchecked": dict(prior='auto'), "workflow, prior='erk'": dict(prior='erk'),
              "workflow, prior='magnitude'": dict(prior='magnitude')}


def candidate_targets(model, sweep, pct:float, calibration_data=None) -> dict:
    "The targets of each candidate workflow of `CANDIDATES` (`checked`: with the check on `calibration_data`)."
    def made(kw):
        kw = dict(kw)
        if kw.pop('checked', False): kw['calibration_data'] = calibration_data
        return sweep.to_layer_targets(model, pct, **kw)
    return {name: made(kw) for name, kw in CANDIDATES.items()}


def trained_once(results:Results, key:dict, targets:dict, train, record, *args, only=None):
    """Train and record each method's targets (those in `only`, when given); a method whose targets equal an earlier
    one's gets its result, untrained."""
    done = []                                                    # (targets, the row recorded for them)
    for method, t in targets.items():
        if only is not None and method not in only: continue
        same = next((row for u, row in done if u == t), None)
        if same is None:
            record(results, key, method, train(copy.deepcopy(args[0]), t), *args[1:])
            done.append((t, results.rows[-1]))
        else:
            results.rows.append({**same, 'method': method})
            print(f"  {method}: the same targets as {same['method']}", flush=True)


def trained_record(results:Results, key:dict, method:str, model, test, dense_macs=None):
    "One trained model's per-sample test accuracy, kept weights (and MACs), recorded and printed like compare()'s rows."
    from fasterai.core.select import candidate_units
    from fasterai.core.counter import count_flops_params
    x, y = test[0]
    with torch.no_grad(): right = (model(x).argmax(1) == y).float().numpy()
    units = candidate_units(model)
    kept = 100 * sum(int((u.weight != 0).sum()) for u in units.values()) / sum(u.weight.numel() for u in units.values())
    macs = float('nan') if dense_macs is None else 100 * count_flops_params(model, x[:1])[0] / dense_macs
    results.rows.append({**key, 'method': method, 'metric': float(right.mean()), 'params %': kept,
                         'macs %': macs, 'bytes %': float('nan'), 'samples': right.tolist()})
    print(f"{key['row']} {key['model']} {key['budget']} {key['regime']} seed={key['seed']} {method}: "
          f"{right.mean():.4f} (weights kept {kept:.2f}%, MACs {macs:.1f}%)", flush=True)


def accuracy_sweep(model, kind:str, levels:list):
    "The sweep of `kind` at `levels`, with the accuracy on the calibration digits."
    from fasterai.analyze.evaluation import accuracy_per_sample
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    _, cal, _ = digits_setup()
    an = SensitivityAnalyzer(model, cal[0][0][:1], data=cal, metric=accuracy_per_sample, higher_is_better=True,
                             metric_name='accuracy')
    return an.sweep(kind, levels, verbose=False)


def rules_at(model, plan):
    "compare() one-shot at the plan's budget: its `targets` hold every heuristic's per-layer targets."
    from fasterai.analyze.evaluation import accuracy_per_sample
    from fasterai.plan import compare
    _, cal, test = digits_setup()
    return compare(model, plan, data=test, metric=accuracy_per_sample, metric_name='test accuracy',
                   higher_is_better=True, calibration_data=cal)


def trained_rows(a, results:Results, row:str):
    "Per seed, model and sparsity: every allocation's targets trained in from the dense model with the callback."
    from fasterai.plan import plan_compression
    _, cal, test = digits_setup()
    sample = cal[0][0][:1]
    for seed in a.seeds:
        train = callback_trainer(a.finetune_epochs, seed)
        for arch, model in digits_models(seed, ('ResNet',) if row == 'resnet-trained' else ('CNN', 'MLP')):
            t0 = time.perf_counter()
            sweep = accuracy_sweep(model, 'sparsity', [50, 70, 80, 90, 95, 97, 98, 99])
            print(f"  {arch} seed {seed}: sweep {time.perf_counter() - t0:.1f} s", flush=True)
            for pct in (90, 95, 97):
                plan = plan_compression(sweep, {'params': 100 - pct}, sample=sample, scope='units')
                c = rules_at(model, plan)
                t1 = time.perf_counter()
                targets = {WORKFLOW: workflow_targets(model, sweep, pct, cal), **candidate_targets(model, sweep, pct, cal),
                           **{(PLAN_TASK if m == 'plan' else m): t['sparsity'] for m, t in c.targets.items()
                              if 'sparsity' in t}}
                key = dict(row=row, model=arch, budget=f"{pct}% sparse", seed=seed,
                           regime=f"{a.finetune_epochs} epochs, SparsifyCallback")
                trained_once(results, key, targets, train, trained_record, model, test, only=a.only)
                print(f"  trained {len(targets)} allocations in {time.perf_counter() - t1:.1f} s; not run: "
                      f"{'; '.join(c.skipped) or 'none'}", flush=True)


def pruning_trained_rows(a, results:Results, row:str):
    "Per seed: the plan's and uniform pruning ratios trained in with `PruneCallback`; torch-pruning global, fine-tuned."
    from fasterai.core.counter import count_flops_params
    from fasterai.plan import plan_compression
    from fasterai.prune.prune_callback import PruneCallback
    import functools
    _, cal, test = digits_setup()
    sample = cal[0][0][:1]
    for seed in a.seeds:
        callback = functools.partial(PruneCallback, example_inputs=sample)         # plain DataLoaders: no one_batch
        prune_in = callback_trainer(a.finetune_epochs, seed, callback=callback)
        _, model = next(digits_models(seed, ('CNN',)))
        plan = plan_compression(accuracy_sweep(model, 'pruning', [10, 25, 50, 75]), {'macs': 50}, sample=sample)
        c = rules_at(model, plan)
        key = dict(row=row, model='CNN', budget='50% MACs', seed=seed,
                   regime=f"{a.finetune_epochs} epochs, PruneCallback")
        dense_macs = count_flops_params(model, sample)[0]
        for method, ratios in ((WORKFLOW, plan.targets('pruning')),
                               ('uniform pruning', c.targets['uniform pruning']['pruning'])):
            trained_record(results, key, method, prune_in(copy.deepcopy(model), ratios), test, dense_macs)
        for method, prune in global_pruners(model, sample, 50).items():
            m = copy.deepcopy(model)
            prune(m)
            trained_record(results, key, method, prune_in(m, None), test, dense_macs)


def compare_time(a, results:Results, row:str):
    "compare()'s wall time on the digits CNN at 30% of the weights, against making one plan and verifying it."
    from fasterai.analyze.evaluation import accuracy_per_sample
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    from fasterai.plan import plan_compression, compare
    _, cal, test = digits_setup()
    for seed in a.seeds:
        _, model = next(digits_models(seed, ('CNN',)))
        t0 = time.perf_counter()
        an = SensitivityAnalyzer(model, data=cal, metric=accuracy_per_sample)
        sweep = an.sweep('sparsity', [50, 70, 80, 90, 95, 97, 98, 99], verbose=False)
        plan = plan_compression(sweep, {'params': 30}, sample=cal[0][0][:1], scope='units')
        plan.verify(model, data=test, metric=accuracy_per_sample)
        t_plan = time.perf_counter() - t0
        t0 = time.perf_counter()
        c = compare(model, plan, data=test, metric=accuracy_per_sample, calibration_data=cal)
        t_compare = time.perf_counter() - t0
        print(f"{row} seed={seed}: one plan (sweep of 8 levels, solve, verify) {t_plan:.2f} s; compare ({len(c.table)} "
              f"methods) {t_compare:.2f} s; ratio {t_compare / t_plan:.2f}", flush=True)


# ---------------------------------------------------------------- the LM trained in with the callback (issue 31)
LM_RULES = ('uniform', 'global magnitude', 'ERK', 'OWL', 'depth ramp')


def lm_callback_trainer(data, steps:int, seed:int, lr:float=1e-3):
    """train(model, targets): `SparsifyCallback(targets)` (its default schedule) while fastai fine-tunes the LM for
    `steps` steps of 16 random training windows (`fit_one_cycle(1, lr)`, fastai's default optimizer), seeded."""
    import torch.nn.functional as F
    from torch.utils.data import TensorDataset, DataLoader
    from fastai.data.core import DataLoaders
    from fastai.learner import Learner
    from fastai.callback.schedule import fit_one_cycle        # patches Learner.fit_one_cycle
    from fastai.torch_core import set_seed
    from fasterai.sparse.sparsify_callback import SparsifyCallback
    tokens = data.corpus.tokens['train']
    def loss(out, y): return F.cross_entropy(out.flatten(0, 1), y.flatten())
    def train(model, targets):
        set_seed(seed)
        seq = model.config.seq_len
        starts = torch.randint(0, len(tokens) - seq - 1, (steps * 16,), generator=torch.Generator().manual_seed(seed))
        w = tokens[starts[:, None] + torch.arange(seq + 1)].long()
        dls = DataLoaders(DataLoader(TensorDataset(w[:, :-1], w[:, 1:]), batch_size=16),
                          DataLoader(TensorDataset(*data.valid[0]), batch_size=16))
        learn = Learner(dls, model, loss_func=loss)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)                                 # the same network whatever the thread setting
        try:
            with learn.no_bar(), learn.no_logging(): learn.fit_one_cycle(1, lr, cbs=[SparsifyCallback(targets)])
        finally: torch.set_num_threads(threads)
        return learn.model.eval()
    return train


def lm_trained_record(results:Results, key:dict, method:str, model, test):
    "One trained LM's per-window test NLL and kept weights, recorded and printed like compare()'s rows."
    from fasterai.core.select import candidate_units
    from fasterai.demo.text import lm_nll_per_sample
    with torch.no_grad(): nll = torch.cat([lm_nll_per_sample(model(x), y) for x, y in test]).numpy()
    units = candidate_units(model)
    kept = 100 * sum(int((u.weight != 0).sum()) for u in units.values()) / sum(u.weight.numel() for u in units.values())
    results.rows.append({**key, 'method': method, 'metric': float(nll.mean()), 'params %': kept,
                         'macs %': float('nan'), 'bytes %': float('nan'), 'samples': nll.tolist()})
    print(f"{key['row']} {key['model']} {key['budget']} {key['regime']} seed={key['seed']} {method}: "
          f"{nll.mean():.4f} (weights kept {kept:.2f}%)", flush=True)


def lm_trained_rows(a, results:Results, row:str):
    "Per seed and sparsity: the LM's allocations (the taught workflow, the rules) trained in with the callback."
    from fasterai.demo.text import trained_text_lm, lm_batches, lm_nll_per_sample
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    from fasterai.plan import plan_compression, compare
    for seed in a.seeds:
        t0 = time.perf_counter()
        model, data = trained_text_lm(a.size, seed, a.device)
        batches = lm_batches(data.corpus.tokens['train'], model.config.seq_len, n_seqs=32)   # OWL's
        sample = data.valid[0][0][:1]
        an = SensitivityAnalyzer(model, sample, data=data.valid, metric=lm_nll_per_sample, higher_is_better=False,
                                 metric_name='nll')
        sweep = an.sweep('sparsity', a.sparsity_levels, verbose=False)
        print(f"  LM {a.size} seed {seed}: trained and swept in {time.perf_counter() - t0:.0f} s", flush=True)
        train = lm_callback_trainer(data, a.lm_steps, seed)
        for pct in (60, 70):
            key = dict(row=row, model='LM', budget=f"{pct}% sparse", seed=seed,
                       regime=f"{a.lm_steps} steps, SparsifyCallback")
            lm_trained_record(results, key, 'dense', model, data.test)
            plan = plan_compression(sweep, {'params': 100 - pct}, sample=sample, scope='units')
            c = compare(model, plan, LM_RULES, data=data.test, metric=lm_nll_per_sample, higher_is_better=False,
                        calibration_data=batches, dense=False)
            targets = {WORKFLOW: workflow_targets(model, sweep, pct, data.valid),
                       **candidate_targets(model, sweep, pct, data.valid),
                       **{m: t['sparsity'] for m, t in c.targets.items() if m != 'plan' and 'sparsity' in t}}
            t1 = time.perf_counter()
            trained_once(results, key, targets, train, lm_trained_record, model, data.test, only=a.only)
            print(f"  trained {len(targets)} allocations in {time.perf_counter() - t1:.1f} s; not run: "
                  f"{'; '.join(c.skipped) or 'none'}", flush=True)


# ---------------------------------------------------------------- the tables
def paired(rows:list, method:str, ref:str, hib:bool, level:float=.95, resamples:int=2000) -> dict:
    "`method` minus `ref` paired by seed: mean ± std over the seeds, and a bootstrap interval over the pooled samples."
    from fasterai.analyze.confidence import PairedBootstrap
    by = {(r['seed'], r['method']): r for r in rows}
    seeds = sorted({r['seed'] for r in rows if (r['seed'], method) in by and (r['seed'], ref) in by})
    d = np.array([by[s, method]['metric'] - by[s, ref]['metric'] for s in seeds])
    out = {'mean': d.mean(), 'std': d.std(ddof=1) if len(d) > 1 else np.nan, 'low': np.nan, 'high': np.nan}
    if seeds and all(by[s, m]['samples'] is not None for s in seeds for m in (method, ref)):
        diff = np.concatenate([np.asarray(by[s, method]['samples']) - np.asarray(by[s, ref]['samples']) for s in seeds])
        lo, hi = PairedBootstrap(len(diff), level, resamples).intervals(diff[:, None])
        out['low'], out['high'] = float(lo[0]), float(hi[0])
    good = out['low'] > 0 if hib else out['high'] < 0
    bad = out['high'] < 0 if hib else out['low'] > 0
    out['verdict'] = 'better than the plan' if good else 'worse than the plan' if bad else 'level'
    return out


def _by_setting(rows:list) -> OrderedDict:
    "(row, model, budget, regime) -> its result rows, in the order first seen."
    groups = OrderedDict()
    for r in rows: groups.setdefault((r['row'], r['model'], r['budget'], r['regime']), []).append(r)
    return groups


def tables(rows:list, reference:str):
    "Per row, budget and regime: mean ± std of each method, and each method minus the plan (paired)."
    ref = REFERENCE[reference]
    groups = _by_setting(rows)
    for (row, model, budget, regime), rs in groups.items():
        hib = not row.startswith('lm')
        dense = np.mean([r['metric'] for r in rs if r['method'] == 'dense'])
        seeds = sorted({r['seed'] for r in rs})
        print(f"\n### {model}, {row.split('-', 1)[1]}, {budget}, {regime} ({len(seeds)} seeds; dense {dense:.4f}; "
              f"differences are method - {ref})")
        metric = 'test accuracy' if hib else 'test NLL'
        print(f"| method | {metric} | vs {ref} (mean ± std) | 95% interval | verdict |")
        print("|---|---|---|---|---|")
        for m in dict.fromkeys(r['method'] for r in rs):
            v = np.array([r['metric'] for r in rs if r['method'] == m])
            cell = f"{v.mean():.4f} ± {v.std(ddof=1) if len(v) > 1 else 0:.4f}"
            if m in (ref, 'dense'):
                print(f"| {m} | {cell} | | | |")
                continue
            p = paired(rs, m, ref, hib)
            print(f"| {m} | {cell} | {p['mean']:+.4f} ± {p['std']:.4f} | [{p['low']:+.4f}, {p['high']:+.4f}] | "
                  f"{p['verdict']} |")


BASELINE_ORDER = ('uniform', 'global magnitude', 'OWL', 'ERK', 'depth ramp', 'first/last dense', 'uniform bits',
                  'first/last 8 bits', 'llama.cpp-like', 'uniform pruning', 'torch-pruning global', 'Pruner global')


def _cell(v) -> str: return f"{np.mean(v):.4f} ± {np.std(v, ddof=1):.4f}" if len(v) > 1 else f"{v[0]:.4f}"


def _kind(row:str) -> str: return {'lm-joint': 'sparsity + bits'}.get(row, row.split('-')[1])


def _setting(row:str, model:str, budget:str, regime:str) -> str:
    return f"{model}, {_kind(row)}{' (Wanda)' if row.endswith('wanda') else ''}, {budget}, {regime}"


def _by_method(rs:list, plans:list) -> dict:
    "Method -> its metric per seed; a sparsity rule on top of bits under the rule's own name."
    by = {}
    for r in rs:
        name = r['method'] if r['method'] in plans else r['method'].split(' + ')[0]
        by.setdefault(name, []).append(r['metric'])
    return by


def summary_tables(rows:list, reference:str):
    "Per kind of compression, each method's mean ± std; then the plan against the best baseline (paired)."
    ref = REFERENCE[reference]
    groups = _by_setting(rows)
    named = (PLAN_TASK, PLAN_KL, PLAN_REFINED, WORKFLOW, *CANDIDATES)
    plans = [m for m in named if any(r['method'] == m for r in rows)]
    for kind in dict.fromkeys(_kind(k[0]) for k in groups):
        keys = [k for k in groups if _kind(k[0]) == kind]
        present = {m for k in keys for m in _by_method(groups[k], plans)}
        methods = [m for m in BASELINE_ORDER if m in present]
        print(f"\n**{kind}** (test accuracy for the digits, higher is better; test NLL per byte for the LM, lower is "
              f"better; mean ± std over the seeds)\n")
        print(f"| model, budget, regime | dense | {' | '.join(methods)} | {' | '.join(plans)} |")
        print('|' + '---|' * (2 + len(methods) + len(plans)))
        for row, model, budget, regime in keys:
            by = _by_method(groups[row, model, budget, regime], plans)
            cells = [_cell(by[m]) if m in by else '—' for m in ('dense', *methods, *plans)]
            print(f"| {model}{' (Wanda)' if row.endswith('wanda') else ''}, {budget}, {regime} | {' | '.join(cells)} |")
    verdict_table(groups, plans, ref)
    damage_table(groups)


def verdict_table(groups:dict, plans:list, ref:str):
    "The reference plan against the best baseline of each setting, paired by seed; and whether it beats every one."
    print(f"\n| setting | best baseline | {ref} - best (mean ± std over seeds) | 95% interval (pooled samples) | "
          f"verdict | better than every baseline | excess NLL, plan / best |")
    print('|---|---|---|---|---|---|---|')
    for (row, model, budget, regime), rs in groups.items():
        hib = not row.startswith('lm')
        by = _by_method(rs, plans)
        base = {m: v for m, v in by.items() if m not in plans and m != 'dense'}
        if not base or ref not in by: continue
        full = lambda m: next(r['method'] for r in rs if r['method'].split(' + ')[0] == m)
        best = max(base, key=lambda m: np.mean(base[m]) * (1 if hib else -1))
        p = paired(rs, ref, full(best), hib)
        every = all(paired(rs, ref, full(m), hib)['verdict'] == 'better than the plan' for m in base)
        word = {'better than the plan': 'plan better', 'worse than the plan': 'plan worse'}.get(p['verdict'], 'level')
        excess = lambda m: np.mean(by[m]) - np.mean(by['dense'])
        ratio = '' if hib else f"{excess(ref) / (np.mean(base[best]) - np.mean(by['dense'])):.3f}"
        setting = _setting(row, model, budget, regime)
        interval = f"[{p['low']:+.4f}, {p['high']:+.4f}]"
        print(f"| {setting} | {best} | {p['mean']:+.4f} ± {p['std']:.4f} | {interval} | {word} | "
              f"{'yes' if every else 'no'} | {ratio} |")


def damage_table(groups:dict):
    "The plan made from the KL against the plan made from the task metric (accuracy, NLL), and what refine adds."
    print(f"\n| setting | {PLAN_KL} - {PLAN_TASK} | 95% interval | {PLAN_REFINED} - {PLAN_KL} | 95% interval |")
    print('|---|---|---|---|---|')
    for (row, model, budget, regime), rs in groups.items():
        hib = not row.startswith('lm')
        cells = []
        for a, b in ((PLAN_KL, PLAN_TASK), (PLAN_REFINED, PLAN_KL)):
            if not {a, b} <= {r['method'] for r in rs}: cells += ['—', '—']; continue
            p = paired(rs, a, b, hib)
            cells += [f"{p['mean']:+.4f} ± {p['std']:.4f}", f"[{p['low']:+.4f}, {p['high']:+.4f}]"]
        print(f"| {_setting(row, model, budget, regime)} | {' | '.join(cells)} |")


def main(argv=None):
    a = parse_args(argv)
    if a.table is not None:
        rows = [r for f in a.table for r in json.load(open(f))['rows']]
        tables(rows, a.reference)
        summary_tables(rows, a.reference)
        return
    a.device = torch.device(a.device)
    print(machine_line(a.device), flush=True)
    if a.prune_scoring:                  # every Pruner of the run: the plan's, the baselines', the analyses'
        import functools
        from fasterai.prune.pruner import Pruner
        Pruner.__init__ = functools.partialmethod(Pruner.__init__, scoring=a.prune_scoring)
        print(f"Pruner scoring: {a.prune_scoring}", flush=True)
    results, t0 = Results(a.reference), time.perf_counter()
    warnings.filterwarnings('ignore', message='.*higher_is_better inferred.*')
    for row in a.rows:
        t1 = time.perf_counter()
        run = (lm_trained_rows if row == 'lm-trained' else lm_rows if row.startswith('lm')
               else compare_time if row == 'compare-time'
               else trained_rows if row in ('digits-trained', 'resnet-trained')
               else pruning_trained_rows if row == 'digits-pruning-trained' else digits_rows)
        run = recon_rows if row in RECON_ROWS else run
        run(a, results, row)
        print(f"  {row}: {time.perf_counter() - t1:.0f} s", flush=True)
        if a.out: json.dump({'machine': machine_line(a.device), 'rows': results.rows}, open(a.out, 'w'))
    tables(results.rows, a.reference)
    summary_tables(results.rows, a.reference)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == '__main__':
    main()
