"""SparseGPT / GPTQ against magnitude / round to nearest on the digits CNN of `fasterai.demo.digits` (one-shot, uniform
over its conv and linear layers): held-out accuracy. A quick companion of recon_bench.py for a loaded machine.

    OMP_NUM_THREADS=1 python bench/recon_digits.py
"""
import copy, platform, warnings
import torch
import torch.nn as nn
from machine import cpu_model, load

if __name__ == '__main__':
    from fasterai.demo.digits import trained_digits_cnn, digits_eval_fn
    from fasterai.sparse.sparsifier import Sparsifier
    from fasterai.quantize.quantizer import Quantizer
    torch.set_num_threads(1)
    print(f"machine: {cpu_model()}, {platform.python_version()}, torch {torch.__version__}, load {load()}", flush=True)
    for seed in (0, 1, 2):
        torch.manual_seed(seed)
        model, (xt, yt, xv, yv) = trained_digits_cnn(seed=seed)
        acc = digits_eval_fn(xv, yv)
        layers = [n for n, m in model.named_modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
        calib = [xt[:256], xt[256:512]]
        line = [f"seed {seed} dense {acc(model):.4f}"]
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            for level in (50, 70, 80):
                for meth in ('magnitude', 'wanda', 'sparsegpt'):
                    m = copy.deepcopy(model)
                    Sparsifier(m, layers=layers, method=meth, calibration_data=calib).sparsify_model(level)
                    line.append(f"{level}% {meth} {acc(m):.4f}")
            for bits in (3, 2):
                for name, kw in (('rtn sym', dict(symmetric=True)), ('rtn', {}), ('gptq', dict(method='gptq'))):
                    m = copy.deepcopy(model)
                    Quantizer(m, layers=layers, calibration_data=calib, **kw).quantize_model(bits)
                    line.append(f"{bits} bits {name} {acc(m):.4f}")
        print('digits CNN: ' + '; '.join(line), flush=True)
