"""The sensitivity analysis where users run it: a CUDA GPU, CNNs, ViTs and LLaMA-class language models.

For each model it runs the three analyses (sparsity 50%, quantization 4 bits, pruning 30%) with their costs
recorded (the default) and prints, one row each:
- overhead: time outside the metric, in percent of the time inside it (`Timing.overhead_pct`), and in ms
  per evaluation; the metric is a black-box eval_fn that synchronises the GPU, so its time is real;
- costs: the share of that time spent recording what each unit removes (`Timing.cost_seconds`);
- peak memory above the model: the largest `torch.cuda.max_memory_allocated` during the analysis, minus the
  model's own parameter and buffer bytes and the evaluation's own peak (measured on the intact model first);
- suffix: on ResNet-50, data= + metric= (per-sample log-sum-exp of the logits, no intervals) with suffix evaluation
  against the eval_fn path (total time ratio), and the per-sample bookkeeping in percent of evaluation time;
- fasterai 0.3.2: the same three analyses of the same ResNet-50 with fasterai 0.3.2, side by side (only when
  `--fa032 DIR` names a folder where fasterai 0.3.2 and its dependencies are installed; it runs in a
  subprocess with that folder first on its path, the model rebuilt from the same seed).

Models (torchvision with weights=None, HF transformers from configs; random weights, random data):
- resnet50: 224x224, a 512-image evaluation (4 batches of 128); ViT-B/16 224x224 on 128 images;
- llama1b: LLaMA 1.1 B with grouped-query attention (2048 wide, 22 layers, 32 heads, 4 KV heads), bf16;
- llama7b: LLaMA 6.7 B (4096 wide, 32 layers, 32 heads, MHA), bf16: sparsity and quantization only;
- the LLMs' metric: NLL of 8 x 512 random tokens.
On the CPU (no CUDA, or --small) every model is built small and the same table is printed.

    python bench/gpu_bench.py                             # CUDA if present, else the small CPU sizes
    python bench/gpu_bench.py --parts resnet50,llama1b --fa032 /tmp/site032
    OMP_NUM_THREADS=1 python bench/gpu_bench.py --small   # the CPU check of this script
"""
import argparse, contextlib, cProfile, io, json, os, pstats, subprocess, sys, time, warnings
import torch, torch.nn as nn, torch.nn.functional as F
sys.path.insert(0, os.path.dirname(__file__))
from machine import cpu_model, load

PARTS = ('resnet50', 'vit', 'llama1b', 'llama7b')
ANALYSES = (('sparsity', 50), ('quantization', 4), ('pruning', 30))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--parts', default=','.join(PARTS), help=f"comma-separated, of {PARTS} (default: all)")
    p.add_argument('--small', action='store_true', help='small models and data (the default without CUDA)')
    p.add_argument('--fa032', default=None, help='folder holding fasterai 0.3.2 and its dependencies: run it side by side')
    p.add_argument('--profile', default=None, help="profile one analysis, e.g. 'resnet50:sparsity' (cProfile, top 25)")
    p.add_argument('--json', default=None, help='also write every figure to this JSON file')
    p.add_argument('--worker', default=None, help=argparse.SUPPRESS)   # internal: the fasterai 0.3.2 subprocess
    return p.parse_args(argv)


def sync(device):
    if device.type == 'cuda': torch.cuda.synchronize(device)


def model_bytes(model) -> int:
    return sum(t.numel() * t.element_size() for t in [*model.parameters(), *model.buffers()])


# ---- the models and their metrics --------------------------------------------------------------------------
def resnet50(device, small):
    from torchvision.models import resnet50 as build
    torch.manual_seed(0)
    m = build(weights=None).to(device).eval()
    size, n, bs = (64, 32, 16) if small else (224, 512, 128)
    g = torch.Generator().manual_seed(1)
    xs = [torch.randn(bs, 3, size, size, generator=g).to(device) for _ in range(n // bs)]
    ys = [torch.randint(0, 1000, (bs,), generator=g).to(device) for _ in range(n // bs)]
    return m, xs, ys


def vit(device, small):
    from torchvision.models import VisionTransformer, vit_b_16
    torch.manual_seed(0)
    if small: m, size, n, bs = VisionTransformer(32, 8, 4, 4, 64, 128, num_classes=10), 32, 16, 8
    else: m, size, n, bs = vit_b_16(weights=None), 224, 128, 64
    m = m.to(device).eval()
    g = torch.Generator().manual_seed(1)
    xs = [torch.randn(bs, 3, size, size, generator=g).to(device) for _ in range(n // bs)]
    ys = [torch.randint(0, m.heads.head.out_features, (bs,), generator=g).to(device) for _ in range(n // bs)]
    return m, xs, ys


def llama(device, small, big):
    from transformers import LlamaConfig, LlamaForCausalLM
    if small: cfg = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2 if not big else 4,
                         intermediate_size=128, vocab_size=256)
    elif big: cfg = dict(hidden_size=4096, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32,
                         intermediate_size=11008, vocab_size=32000)
    else: cfg = dict(hidden_size=2048, num_hidden_layers=22, num_attention_heads=32, num_key_value_heads=4,
                     intermediate_size=5632, vocab_size=32000)
    torch.manual_seed(0)
    dtype = torch.float32 if small else torch.bfloat16
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device): m = LlamaForCausalLM(LlamaConfig(**cfg, tie_word_embeddings=False)).eval()
    finally: torch.set_default_dtype(old)
    g = torch.Generator().manual_seed(1)
    seq, n = (32, 2) if small else (512, 8)
    ids = torch.randint(0, cfg['vocab_size'], (n, seq), generator=g).to(device)
    return LMWrapper(m).eval(), [ids], [ids]


class LMWrapper(nn.Module):
    "The language model as `ids -> logits` (the analysis calls it like any model)."
    def __init__(self, lm): super().__init__(); self.lm = lm
    def forward(self, ids): return self.lm(input_ids=ids).logits


def lm_nll(logits, ids):
    "Mean next-token NLL."
    return F.cross_entropy(logits[:, :-1].flatten(0, 1).float(), ids[:, 1:].flatten())


def logit_score(logits):
    "A metric that reads any number of classes (fasterai 0.3.2 prunes the output layer too): mean log-sum-exp of the logits."
    return logits.float().logsumexp(1).mean()


def logit_score_per_sample(logits, targets):
    "`logit_score` per sample: the data= + metric= path's metric."
    return logits.float().logsumexp(1)


class EvalFn:
    "A black-box eval_fn over fixed batches, synchronised so that its time is real; counts its calls and seconds."
    def __init__(self, xs, ys, device, lm=False): self.xs, self.ys, self.device, self.lm, self.n, self.s = xs, ys, device, lm, 0, 0.
    @torch.no_grad()
    def __call__(self, model):
        t0 = time.perf_counter()
        loss = sum((lm_nll(model(x), y) if self.lm else logit_score(model(x))) for x, y in zip(self.xs, self.ys))
        v = float(loss) / len(self.xs)                           # one host sync per evaluation: the user's own
        self.n += 1; self.s += time.perf_counter() - t0
        return v


# ---- one analysis -------------------------------------------------------------------------------------------
def run_analysis(model, xs, ys, device, kind, level, lm=False, profile=False, **kw):
    "Timing, peak memory above the model (and above an evaluation's own), and the result, for one analysis."
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    ev = EvalFn(xs, ys, device, lm)
    base_peak = 0
    if device.type == 'cuda':
        torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats(device)
        start = torch.cuda.memory_allocated(device)
        ev(model); sync(device)
        base_peak = torch.cuda.max_memory_allocated(device) - start          # what one evaluation needs on its own
        torch.cuda.reset_peak_memory_stats(device)
    an = SensitivityAnalyzer(model, xs[0][:1], ev, higher_is_better=False, metric_name='loss', **kw)
    allocs = torch.cuda.memory_stats(device).get('num_device_alloc', 0) if device.type == 'cuda' else 0
    prof = cProfile.Profile() if profile else None
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        if prof: prof.enable()
        t0 = time.perf_counter()
        res = an.analyze(kind, level, verbose=False)
        sync(device)
        wall = time.perf_counter() - t0
        if prof: prof.disable()
    peak = (torch.cuda.max_memory_allocated(device) - start - base_peak) if device.type == 'cuda' else float('nan')
    if device.type == 'cuda': res.device_allocs = torch.cuda.memory_stats(device).get('num_device_alloc', 0) - allocs   # cudaMalloc calls
    if prof:
        out = io.StringIO(); pstats.Stats(prof, stream=out).sort_stats('tottime').print_stats(25)
        print(out.getvalue()[-6000:])
    return res, wall, peak


def row(model_name, kind, level, res, wall, peak, mbytes):
    t = res.timing
    return dict(model=model_name, analysis=f"{kind} {level}", evals=t.n_evals, ms_per_eval=1e3 * t.eval_seconds / max(t.n_evals, 1),
                overhead_pct=t.overhead_pct, overhead_ms_per_eval=1e3 * t.overhead_seconds / max(t.n_evals, 1),
                costs_pct=100 * t.cost_seconds / t.eval_seconds if t.eval_seconds else float('nan'),
                peak_above_model_gb=peak / 2**30, model_gb=mbytes / 2**30, wall_s=wall, cuda_mallocs=getattr(res, 'device_allocs', None),
                uncounted=(res.settings or {}).get('uncounted_macs'))


def suffix_rows(model, xs, ys, device, name):
    "data= + metric= with suffix evaluation against the eval_fn path, on the same batches: total time ratio, bookkeeping share."
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        ev = EvalFn(xs, ys, device)
        t0 = time.perf_counter(); SensitivityAnalyzer(model, xs[0][:1], ev, higher_is_better=False).analyze('sparsity', 50, verbose=False)
        sync(device); t_fn = time.perf_counter() - t0
        for suffix in (True, False):
            an = SensitivityAnalyzer(model, data=list(zip(xs, ys)), metric=logit_score_per_sample, higher_is_better=False,
                                     suffix=suffix, confidence=None)      # the evaluation path alone: no bootstrap
            t0 = time.perf_counter(); r = an.analyze('sparsity', 50, verbose=False); sync(device)
            t = time.perf_counter() - t0
            ev_s = r.timing.eval_seconds
            note = r.timing.evaluation or ''
            out.append(dict(model=name, path='suffix' if suffix else 'full data', total_s=t, vs_eval_fn=t / t_fn,
                            bookkeeping_pct=100 * r.timing.sample_seconds / ev_s if ev_s else float('nan'), note=str(note)[:120]))
    out.append(dict(model=name, path='eval_fn', total_s=t_fn, vs_eval_fn=1., bookkeeping_pct=0., note=''))
    return out


def guard_times(model, device):
    "What the guard costs on its own: copying the parameters to host memory and digesting them on entry, digesting on exit."
    from fasterai.core.model import ModelGuard
    sync(device); t0 = time.perf_counter()
    with ModelGuard(model): sync(device); t1 = time.perf_counter()
    sync(device); t2 = time.perf_counter()
    print(f"   ModelGuard alone: entry {t1 - t0:.2f} s (host copies and digest), exit {t2 - t1:.2f} s (digest)", flush=True)


# ---- fasterai 0.3.2, in its own process ---------------------------------------------------------------------
def fa032_worker(device, small):
    "Run in a subprocess whose path starts with fasterai 0.3.2: the three analyses of the same ResNet-50."
    import fasterai
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    model, xs, ys = resnet50(device, small)
    rows = []
    for kind, level in ANALYSES:
        ev = EvalFn(xs, ys, device)
        an = SensitivityAnalyzer(model, xs[0][:1], ev, higher_is_better=False)
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter('ignore')
            t0 = time.perf_counter(); an.analyze(kind, level, verbose=False); sync(device)
            wall = time.perf_counter() - t0
        rows.append(dict(model='resnet50 (fasterai 0.3.2)', analysis=f"{kind} {level}", evals=ev.n, ms_per_eval=1e3 * ev.s / ev.n,
                         overhead_pct=100 * (wall - ev.s) / ev.s, overhead_ms_per_eval=1e3 * (wall - ev.s) / ev.n,
                         version=getattr(fasterai, '__version__', '?')))
    print('FA032' + json.dumps(rows))


def run_fa032(folder, small):
    env = {**os.environ, 'PYTHONPATH': folder}
    args = [sys.executable, __file__, '--worker', 'fa032'] + (['--small'] if small else [])
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=900)
    line = next((l for l in p.stdout.splitlines() if l.startswith('FA032')), None)
    if line is None: print('fasterai 0.3.2 did not run:', p.stderr[-2000:]); return []
    return json.loads(line[5:])


# ---- main ---------------------------------------------------------------------------------------------------
def table(rows, cols):
    import pandas as pd
    if not rows: return '(none)'
    return pd.DataFrame(rows)[[c for c in cols if c in rows[0]]].to_string(index=False, float_format=lambda v: f"{v:.2f}")


def main(argv=None):
    a = parse_args(argv)
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    small = a.small or device.type != 'cuda'
    if a.worker == 'fa032': return fa032_worker(device, small)
    import fasterai, torch_pruning
    try: import transformers; tv = transformers.__version__
    except ImportError: tv = 'not installed'
    print(f"machine: {torch.cuda.get_device_name(device) if device.type == 'cuda' else cpu_model()}; load {load()}; "
          f"torch {torch.__version__}, transformers {tv}, torch-pruning {torch_pruning.__version__}, fasterai {fasterai.__version__}; "
          f"{'small' if small else 'full'} sizes")
    parts = a.parts.split(',')
    rows, suffix, fa = [], [], []
    builders = {'resnet50': lambda: resnet50(device, small), 'vit': lambda: vit(device, small),
                'llama1b': lambda: llama(device, small, big=False), 'llama7b': lambda: llama(device, small, big=True)}
    for name in parts:
        t0 = time.perf_counter()
        model, xs, ys = builders[name]()
        sync(device)
        print(f"{name}: built in {time.perf_counter() - t0:.1f} s, {model_bytes(model) / 2**30:.2f} GB", flush=True)
        lm = name.startswith('llama')
        kinds = ANALYSES[:2] if name == 'llama7b' else ANALYSES
        for kind, level in kinds:
            prof = f"{name}:{kind}" in a.profile.split(',') if a.profile else False
            try: res, wall, peak = run_analysis(model, xs, ys, device, kind, level, lm=lm, profile=prof)
            except Exception as e:                                   # one failure must not cost the other figures
                print(f"   {name} {kind} FAILED: {type(e).__name__}: {str(e)[:300]}", flush=True); continue
            rows.append(row(name, kind, level, res, wall, peak, model_bytes(model)))
            print('  ', {k: (round(v, 3) if isinstance(v, float) else v) for k, v in rows[-1].items()}, flush=True)
            if res.timing.evaluation: print('   ', res.timing.evaluation)
        if name == 'llama7b': guard_times(model, device)
        if name == 'resnet50':
            try: suffix = suffix_rows(model, xs, ys, device, name)
            except Exception as e: print(f"   suffix FAILED: {type(e).__name__}: {str(e)[:300]}", flush=True)
            print('  ', suffix, flush=True)
            if a.fa032: fa = run_fa032(a.fa032, small)                # right after ours, on the same warm card
            print('  ', fa, flush=True)
        del model, xs, ys
        if device.type == 'cuda': torch.cuda.empty_cache()
        if a.json:                                                   # what is measured so far survives a timeout
            with open(a.json, 'w') as f: json.dump({'rows': rows, 'suffix': suffix, 'fasterai_0.3.2': fa}, f, indent=1, default=str)
    print('\n== overhead above eval_fn, costs recorded (the default)')
    print(table(rows + fa, ['model', 'analysis', 'evals', 'ms_per_eval', 'overhead_pct', 'overhead_ms_per_eval', 'costs_pct',
                            'peak_above_model_gb', 'model_gb', 'wall_s', 'cuda_mallocs']))
    print('\n== suffix evaluation (data= + metric=) against the eval_fn path, sparsity 50%')
    print(table(suffix, ['model', 'path', 'total_s', 'vs_eval_fn', 'bookkeeping_pct', 'note']))
    if a.json:
        with open(a.json, 'w') as f: json.dump({'rows': rows, 'suffix': suffix, 'fasterai_0.3.2': fa}, f, indent=1, default=str)


if __name__ == '__main__': main()
