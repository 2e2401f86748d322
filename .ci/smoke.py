"""Smoke suite for the lowest torch that settings.ini allows (and any other): ResNet-18, a small ViT, BERT, GPT-2 and a
LLaMA with grouped-query attention, each through the three analyses (sparsity, quantization, pruning), the Pruner, the
Quantizer and a plan applied and counted. Tiny models from configs, random weights, no download; CPU by default
(`--device cuda` for a GPU).

Each step asserts what must hold (the analysed model given back bit for bit, every unit measured or said why not, the
pruned model still running with fewer parameters, the Quantizer restoring exactly, the plan's measured bytes within its
budget) and the MAC counter counts every product: anything left out (`df.attrs['uncounted']`) is printed, and fails the
suite unless `--allow-uncounted`. Prints one line per model and step with its seconds, then `smoke: N passed, N failed`.
Run by .ci/run in the cached low-torch venv: `python .ci/smoke.py` (`--models llama gpt2` for a subset)."""
import argparse, copy, sys, time, traceback, warnings
import torch
import torch.nn as nn

# HF models: the Pruner says torch.fx cannot trace them (the transformers tutorial explains it)
warnings.filterwarnings('ignore', message=r'torch\.fx cannot trace', category=UserWarning)

from fasterai.analyze.sensitivity import SensitivityAnalyzer
from fasterai.core.counter import count_flops_params, uncounted_lines
from fasterai.core.model import model_checksums
from fasterai.prune.pruner import Pruner
from fasterai.quantize.quantizer import Quantizer
from fasterai.plan.plan import plan_compression


def resnet18():
    import torchvision
    return torchvision.models.resnet18(weights=None, num_classes=10), torch.randn(2, 3, 32, 32)

def vit():
    from torchvision.models import VisionTransformer
    model = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128,
                              num_classes=10)
    nn.init.normal_(model.heads.head.weight, std=0.02)       # torchvision starts the head at zero: every output 0
    return model, torch.randn(2, 3, 32, 32)

def bert():
    import transformers as hf
    cfg = hf.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                        vocab_size=100, max_position_embeddings=16)
    return hf.BertForSequenceClassification(cfg), torch.randint(0, 100, (2, 16))

def gpt2():
    import transformers as hf
    cfg = hf.GPT2Config(n_embd=32, n_layer=2, n_head=4, vocab_size=100, n_positions=16, bos_token_id=0, eos_token_id=0)
    return hf.GPT2LMHeadModel(cfg), torch.randint(0, 100, (2, 16))

def llama():
    import transformers as hf
    cfg = hf.LlamaConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         intermediate_size=64, vocab_size=100)
    return hf.LlamaForCausalLM(cfg), torch.randint(0, 100, (2, 16))

MODELS = {'resnet18': resnet18, 'vit': vit, 'bert': bert, 'gpt2': gpt2, 'llama': llama}

def logits(out):
    "A model's output as one tensor (HF models return an output object)."
    return out.logits if hasattr(out, 'logits') else out

def output_change(model:nn.Module, x):
    "An `eval_fn`: mean |logits - dense logits| / mean |dense logits| on `x` (0 for the untouched model)."
    with torch.no_grad(): ref = logits(model(x))
    def eval_fn(m):
        with torch.no_grad(): return ((logits(m(x)) - ref).abs().mean() / ref.abs().mean()).item()
    return eval_fn

def counted(model:nn.Module, x, allow_uncounted:bool) -> str:
    "The counter's MACs of `model` on `x`; what it left out fails unless allowed."
    macs, _, df = count_flops_params(model, x)
    left = df.attrs['uncounted']
    if left and not allow_uncounted: raise AssertionError("MACs not counted: " + '; '.join(uncounted_lines(left)))
    return f"{macs:,} MACs" + (f", not counted: {'; '.join(uncounted_lines(left))}" if left else '')

def analyses(model:nn.Module, x, allow_uncounted:bool) -> tuple:
    "The three sweeps of `model` (given back bit for bit), each unit measured or said why not."
    before = model_checksums(model)
    an = SensitivityAnalyzer(model, x, output_change(model, x), higher_is_better=False, metric_name='output change')
    sweeps = [an.sweep('sparsity', [50], verbose=False), an.sweep('quantization', [4], verbose=False),
              an.sweep('pruning', [25, 50], verbose=False)]          # 25% of 2 key/value heads removes none: 50% does
    assert model_checksums(model) == before, "the analysis changed the model"
    notes = []
    for s in sweeps:
        measured = [c for c in s.layers if any(v == v for v in c.metrics)]          # a number at some level
        unsaid = [c.name for c in s.layers if c not in measured and not c.reason]
        assert measured and not unsaid, (s.compression_type, len(measured), unsaid)
        left = (s.coverage or {}).get('macs_uncounted')
        assert allow_uncounted or not left, f"{s.compression_type}: MACs not counted: {left}"
        notes.append(f"{s.compression_type} {len(measured)}/{len(s.layers)}")
    return sweeps, ', '.join(notes)

def prune(model:nn.Module, x, allow_uncounted:bool) -> str:
    "Prune a copy by 30%: it still runs, with the same output shape and fewer parameters."
    m = copy.deepcopy(model)
    n0, shape = sum(p.numel() for p in m.parameters()), logits(m(x)).shape
    Pruner(m, 30, example_inputs=x).prune_model()
    n1 = sum(p.numel() for p in m.parameters())
    assert n1 < n0 and logits(m(x)).shape == shape, (n0, n1)
    return f"params {n0:,} -> {n1:,}; {counted(m, x, allow_uncounted)}"

def quantize(model:nn.Module, x) -> str:
    "Fake-quantize a copy to 4 bits, report its bytes, restore it bit for bit."
    m = copy.deepcopy(model)
    before = model_checksums(m)
    q = Quantizer(m)
    q.quantize_model(4)
    nbytes = float(q.report().bytes.iloc[-1])
    logits(m(x))
    q.restore()
    assert model_checksums(m) == before, "restore() did not give the weights back"
    return f"{nbytes:,.0f} bytes at 4 bits"

def plan(model:nn.Module, x, sweeps:list) -> str:
    "Plan for 60% of the fp32 bytes from the three sweeps, apply it to a copy, count what it keeps."
    p = plan_compression(sweeps, {'bytes': 60}, sample=x)
    got = p.measure(model).set_index('key')
    assert got.loc['bytes', 'measured %'] <= 60 * (1 + 1e-6), got
    return f"bytes kept {got.loc['bytes', 'measured %']:.1f}% (budget 60%), macs {got.loc['macs', 'measured %']:.1f}%"

def run_model(name:str, device:str, allow_uncounted:bool) -> list:
    "(step, ok, seconds, note) for each step on one model."
    torch.manual_seed(0)
    model, x = MODELS[name]()
    model, x = model.eval().to(device), x.to(device)
    out, sweeps = [], None
    steps = [('count', lambda: counted(model, x, allow_uncounted)),
             ('analyses', lambda: analyses(model, x, allow_uncounted)),
             ('pruner', lambda: prune(model, x, allow_uncounted)),
             ('quantizer', lambda: quantize(model, x)),
             ('plan', lambda: plan(model, x, sweeps))]
    for step, f in steps:
        t0 = time.perf_counter()
        try:
            note = f()
            if step == 'analyses': sweeps, note = note
            out.append((step, True, time.perf_counter() - t0, note))
        except Exception as e:
            out.append((step, False, time.perf_counter() - t0, f"{type(e).__name__}: {e}"))
            traceback.print_exc()
            if step == 'analyses': break           # the plan needs the sweeps
    return out

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--models', nargs='*', default=list(MODELS), choices=list(MODELS))
    ap.add_argument('--device', default='cpu')
    ap.add_argument('--allow-uncounted', action='store_true', help="report MACs the counter left out, do not fail")
    args = ap.parse_args(argv)
    import transformers
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, device {args.device}")
    t0, passed, failed = time.perf_counter(), 0, 0
    for name in args.models:
        for step, ok, secs, note in run_model(name, args.device, args.allow_uncounted):
            print(f"{name:<9} {step:<10} {'ok  ' if ok else 'FAIL'} {secs:6.1f}s  {note}", flush=True)
            passed, failed = passed + ok, failed + (not ok)
    print(f"smoke: {passed} passed, {failed} failed ({time.perf_counter() - t0:.0f}s)")
    return 1 if failed else 0

if __name__ == '__main__': sys.exit(main())
