"""Reconstruction methods (issue 29): SparseGPT against magnitude and Wanda, GPTQ against round to nearest, one-shot
and uniform, on the byte-level LM of `fasterai.demo.text` (test NLL in excess of dense) and on a ResNet-18 (random
weights and inputs: relative error of the logits); then what the sweep costs with them (time, and the calibration
statistics held above the model).

    OMP_NUM_THREADS=1 python bench/recon_bench.py                      # LM seeds 0,1,2, ResNet-18, cost
    OMP_NUM_THREADS=1 python bench/recon_bench.py --rows resnet --seeds 0
    OMP_NUM_THREADS=1 python bench/recon_bench.py --rows memory --width 4096   # peak memory of a sweep, one wide layer
Printed as plain lines; the machine is stated first.
"""
import argparse, copy, platform, time, warnings
import torch
import torch.nn as nn
from machine import cpu_model, load          # bench/machine.py: shared by the bench scripts

ROWS = ('lm', 'resnet', 'cost', 'memory')


@torch.no_grad()
def lm_nll(model, batches) -> float:
    from fasterai.demo.text import lm_nll_per_sample
    vals = [lm_nll_per_sample(model(x), y) for x, y in batches]
    return float(torch.cat(vals).mean())


def compressed(model, layers, kind, level, calib, **kw):
    "A copy of `model` with `layers` compressed uniformly to `level` by the tools, with method options `kw`."
    from fasterai.sparse.sparsifier import Sparsifier
    from fasterai.quantize.quantizer import Quantizer
    m = copy.deepcopy(model)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        if kind == 'sparsity': Sparsifier(m, layers=layers, calibration_data=calib, **kw).sparsify_model(level)
        else: Quantizer(m, layers=layers, calibration_data=calib, **kw).quantize_model(level)
    return m


SPARSE = {'magnitude': dict(method='magnitude'), 'wanda': dict(method='wanda'), 'sparsegpt': dict(method='sparsegpt')}
QUANT = {'rtn sym (before)': dict(method='rtn', symmetric=True), 'rtn': dict(method='rtn'),
         'gptq': dict(method='gptq')}


def lm_rows(seeds, size):
    from fasterai.demo.text import trained_text_lm, lm_batches
    res = {}
    for seed in seeds:
        t0 = time.perf_counter()
        model, data = trained_text_lm(size, seed)
        print(f"LM {size} seed {seed}: trained in {time.perf_counter() - t0:.0f} s", flush=True)
        layers = [n for n, m in model.named_modules() if isinstance(m, nn.Linear)]
        calib = [x for x, _ in lm_batches(data.corpus.tokens['train'], model.config.seq_len, n_seqs=128)]
        dense = lm_nll(model, data.test)
        print(f"  dense test nll {dense:.4f}", flush=True)
        for level in (50, 60, 70):
            for name, kw in SPARSE.items():
                x = lm_nll(compressed(model, layers, 'sparsity', level, calib, **kw), data.test) - dense
                res.setdefault((f"{level}%", name), []).append(x)
                print(f"  seed {seed} sparsity {level}% {name:>10}: excess nll {x:+.4f}", flush=True)
        for bits in (4, 3):
            for name, kw in QUANT.items():
                x = lm_nll(compressed(model, layers, 'quantization', bits, calib, **kw), data.test) - dense
                res.setdefault((f"{bits} bits", name), []).append(x)
                print(f"  seed {seed} {bits} bits {name:>16}: excess nll {x:+.4f}", flush=True)
    print("LM summary (mean over seeds of the test NLL in excess of dense; the ratio to the first method):")
    for setting in dict.fromkeys(k for k, _ in res):
        rows = {n: sum(v) / len(v) for (s, n), v in res.items() if s == setting}
        first = next(iter(rows.values()))
        print(f"  {setting:>8}: " + ', '.join(f"{n} {v:+.4f} ({v / first:.2f}x)" for n, v in rows.items()), flush=True)


def resnet_rows(seeds):
    from torchvision.models import resnet18
    for seed in seeds:
        torch.manual_seed(seed)
        model = resnet18(num_classes=10).eval()
        layers = [n for n, m in model.named_modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
        calib = [torch.randn(32, 3, 32, 32) for _ in range(4)]
        test = torch.randn(64, 3, 32, 32)
        with torch.no_grad(): ref = model(test)
        def rel(m):
            with torch.no_grad(): return float((m(test) - ref).pow(2).sum() / ref.pow(2).sum())
        for level in (50, 70):
            out = {n: rel(compressed(model, layers, 'sparsity', level, calib, **kw)) for n, kw in SPARSE.items()}
            print(f"ResNet-18 seed {seed} sparsity {level}%: relative logit error " +
                  ', '.join(f"{n} {v:.4f}" for n, v in out.items()), flush=True)
        out = {n: rel(compressed(model, layers, 'quantization', 3, calib, **kw)) for n, kw in QUANT.items()}
        print(f"ResNet-18 seed {seed} 3 bits: relative logit error " + ', '.join(f"{n} {v:.4f}" for n, v in out.items()),
              flush=True)


def cost_rows(size):
    "Sweep time with and without reconstruction, and the calibration statistics the sweep held at most."
    from fasterai.demo.text import trained_text_lm, lm_batches, lm_eval_fn
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    from fasterai.core import calibration
    model, data = trained_text_lm(size, 0)
    layers = [n for n, m in model.named_modules() if isinstance(m, nn.Linear)]
    calib = [x for x, _ in lm_batches(data.corpus.tokens['train'], model.config.seq_len, n_seqs=128)]
    held, peak = {}, [0]
    orig_collect, orig_release = calibration.Calibration.collect, calibration.Calibration.release
    def count(cal):
        b = sum(t.numel() * t.element_size() for st in cal.stats.values() for t in st.xtx + st.sq)
        peak[0] = max(peak[0], b)
    def collect(self, *a, **k):
        out = orig_collect(self, *a, **k)
        count(self)
        return out
    calibration.Calibration.collect = collect
    an = SensitivityAnalyzer(model, data.valid[0][0][:1], lm_eval_fn(data.valid), higher_is_better=False,
                             metric_name='nll', calibration_data=calib)
    largest = max(calibration.gram_bytes(m) for n, m in model.named_modules() if n in layers)
    for kind, levels, methods in (('sparsity', [50, 60, 70], ('magnitude', 'sparsegpt')),
                                  ('quantization', [4, 3, 2], ('rtn', 'gptq'))):
        times, cpu = {}, {}
        for meth in methods:
            peak[0] = 0
            t0, c0 = time.perf_counter(), time.process_time()
            an.sweep(kind, levels, layers=layers, method=meth, verbose=False)
            times[meth], cpu[meth] = time.perf_counter() - t0, time.process_time() - c0
            print(f"cost: {kind} sweep {levels} over {len(layers)} layers, method={meth}: {times[meth]:.1f} s "
                  f"({cpu[meth]:.1f} s of CPU); calibration statistics held at most {peak[0] / 2**20:.2f} MiB "
                  f"(largest layer's Gram matrix {largest / 2**20:.2f} MiB)", flush=True)
        (a, b), (ca, cb) = times.values(), cpu.values()
        print(f"cost: {kind}: {methods[1]} / {methods[0]} time = {b / a:.2f}x (CPU time {cb / ca:.2f}x: the figure "
              f"to read on a shared machine)", flush=True)
    calibration.Calibration.collect = orig_collect


def _status_bytes(key:str) -> int:
    "A figure of /proc/self/status (Linux), in bytes."
    with open('/proc/self/status') as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith(key + ':'))


def peak_above(run) -> int:
    "Peak resident memory while `run()` runs, above the resident memory before it (bytes; Linux: VmHWM reset)."
    import gc
    gc.collect()
    with open('/proc/self/clear_refs', 'w') as f: f.write('5')      # reset the peak to the resident memory now
    before = _status_bytes('VmRSS')
    run()
    return _status_bytes('VmHWM') - before


def memory_rows(width:int):
    """Peak resident memory of a sweep above the model and its calibration data, on one Linear of `width` inputs
    (its Hessian width² × 4 bytes) and width / 16 outputs, so that the Hessian dominates the layer's own weight."""
    import ctypes
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    from fasterai.core.calibration import gram_bytes
    ctypes.CDLL('libc.so.6').mallopt(-3, 1 << 16)   # M_MMAP_THRESHOLD: large blocks mapped, given back when freed
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(width, width // 16))
    calib = [torch.randn(256, width) for _ in range(4)]
    def eval_fn(m):
        with torch.no_grad(): return float(m(calib[0][:64]).pow(2).mean())
    an = SensitivityAnalyzer(model, calib[0][:1], eval_fn, higher_is_better=False, metric_name='mse',
                             calibration_data=calib)
    mib = lambda b: f"{b / 2**20:.1f} MiB"
    hess, batch = gram_bytes(model[0]), calib[0].numel() * 4
    print(f"memory: Linear({width}, {width // 16}): Hessian {mib(hess)}, one calibration batch {mib(batch)}, "
          f"weight {mib(model[0].weight.numel() * 4)}", flush=True)
    for kind, meth in (('sparsity', 'sparsegpt'), ('quantization', 'gptq')):   # warm-up: code paths, caches
        an.sweep(kind, [50 if kind == 'sparsity' else 4], method=meth, verbose=False)
    for kind, levels, methods in (('sparsity', [50, 60, 70], ('magnitude', 'sparsegpt')),
                                  ('quantization', [4, 3, 2], ('rtn', 'gptq'))):
        for meth in methods:
            t0 = time.perf_counter()
            peak = peak_above(lambda: an.sweep(kind, levels, method=meth, verbose=False))
            print(f"memory: {kind} sweep {levels}, method={meth}: peak resident memory above the model and its data "
                  f"{mib(peak)} = {peak / hess:.2f}x the Hessian ({peak / (hess + batch):.2f}x Hessian + one batch); "
                  f"{time.perf_counter() - t0:.1f} s", flush=True)


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--rows', default=','.join(ROWS))
    p.add_argument('--seeds', default='0,1,2')
    p.add_argument('--size', default='small')
    p.add_argument('--width', type=int, default=4096, help='the memory row: input width of its one Linear')
    a = p.parse_args()
    torch.set_num_threads(1)
    print(f"machine: {cpu_model()}, {platform.python_version()}, torch {torch.__version__}, load {load()}", flush=True)
    rows, seeds = a.rows.split(','), [int(s) for s in a.seeds.split(',')]
    if 'lm' in rows: lm_rows(seeds, a.size)
    if 'cost' in rows: cost_rows(a.size)
    if 'resnet' in rows: resnet_rows(seeds)
    if 'memory' in rows: memory_rows(a.width)
