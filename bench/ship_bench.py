"""Shipping a plan: size on disk against the dense model and the uniform formats at equal damage, and load time.

A LLaMA with grouped-query attention from a config (`--hidden`, `--layers`), trained for `--steps` on the Python
standard library's source, byte by byte (`fasterai.demo.text`); damage is the KL divergence of its next-byte
distribution from the dense model's on held-out files. One quantization sweep (8, 6, 4, 3 bits); then, per target, each
uniform format users pick by hand against the smallest plan whose *measured* KL is at most the format's (the plan's
bytes bisected, each candidate applied and evaluated):
- compressed-tensors: W4A16 (int4, groups of 128) and W8A16 (int8 per channel); each exported with the library and
  loaded back with transformers: tensor bytes on disk, load time (best of 5, with the first forward, which unpacks);
- llama.cpp: uniform Q4_K, Q6_K, Q8_0 and a Q4_K_M-like mix (llama.cpp's rule: Q6_K for the output layer and for
  attn_v and ffn_down in the first and last eighth of the blocks and every third block between, Q4_K elsewhere);
  bytes as GGUF stores them (llama.cpp is not installed here: no file written, no load time);
- torchao: uniform int8 and int4 (groups of 128) applied with torchao's tensors: state-dict bytes. Latency needs a
  GPU: not measured (none lent).

    OMP_NUM_THREADS=1 nice -n 10 python bench/ship_bench.py            # CPU, about two minutes
"""
import argparse, contextlib, copy, io, os, sys, tempfile, time, warnings
from pathlib import Path
from types import SimpleNamespace
import torch, torch.nn as nn
sys.path.insert(0, os.path.dirname(__file__))
from machine import cpu_model, load          # bench/machine.py: shared by the bench scripts

class LogitsOf(nn.Module):
    "An HF causal LM seen as `(B, T)` bytes -> `(B, T, 256)` logits (for the demo's trainer and metrics)."
    def __init__(self, lm, seq_len=32):
        super().__init__()
        self.lm, self.config = lm, SimpleNamespace(seq_len=seq_len)
    def forward(self, x): return self.lm(x).logits

def quiet():
    "Silence warnings and the loaders' progress bars."
    stack = contextlib.ExitStack()
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter('ignore')
    stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
    return stack

def uniform(plan, bits:dict):
    "The plan of `plan`'s units with each at `bits[unit name]` (a uniform format, or a fixed mix)."
    from fasterai.plan import Plan
    return Plan(plan.units, [u.options.index((bits[u.name],)) for u in plan.units], plan.budget, plan.costs,
                plan.kinds, plan.baseline, plan.metric_name, plan.higher_is_better, plan.settings)

def equal_damage(base, damage, kl_of, steps:int=10):
    ("The smallest plan (its bytes bisected between the least reachable and 100 %) whose measured KL is at most "
     "`damage`.")
    lo, hi = base.problem.reachable()['bytes'], 100.
    best = base.replan({'bytes': hi})
    for _ in range(steps):
        mid = (lo + hi) / 2
        p = base.replan({'bytes': mid})
        if kl_of(p) <= damage: best, hi = p, mid
        else: lo = mid
    return best

def against(base, formats:dict, kl_of):
    "Per format (name -> bits, or unit -> bits): its name, the format as a plan, the smallest plan at its measured KL."
    for name, bits in formats.items():
        u = uniform(base, bits if isinstance(bits, dict) else {n.name: bits for n in base.units})
        yield name, u, equal_damage(base, kl_of(u), kl_of)

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--hidden', type=int, default=256)
    ap.add_argument('--layers', type=int, default=4)
    ap.add_argument('--steps', type=int, default=150)
    a = ap.parse_args()
    import transformers as hf
    from fasterai.demo.text import load_stdlib_corpus, lm_batches, train_text_lm
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    from fasterai.analyze.damage import kl_eval_fn
    from fasterai.plan import plan_compression
    from fasterai.export import state_dict_bytes
    from fasterai.export.compressed_tensors import checkpoint_bytes
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores (shared); load average before: {load()}; device cpu")
    t0 = time.perf_counter()
    corpus = load_stdlib_corpus()
    torch.manual_seed(0)
    cfg = hf.LlamaConfig(hidden_size=a.hidden, intermediate_size=2 * a.hidden, num_hidden_layers=a.layers,
                         num_attention_heads=4, num_key_value_heads=2, vocab_size=256, max_position_embeddings=64)
    llama = hf.LlamaForCausalLM(cfg)
    train_text_lm(LogitsOf(llama), corpus.tokens['train'], steps=a.steps, batch_size=8, lr=3e-3)
    llama.eval()
    valid = lm_batches(corpus.tokens['valid'], 32, n_seqs=32, batch_size=16)
    kl_dense = kl_eval_fn(LogitsOf(llama), valid)
    def kl(m): return kl_dense(LogitsOf(m))
    cache = {}
    def kl_of(plan):
        key = tuple(plan.choice.tolist()) + (plan.settings.get('target', {}).get('name'),)
        if key not in cache: cache[key] = kl(plan.apply(copy.deepcopy(llama)))
        return cache[key]
    sweep = SensitivityAnalyzer(llama, valid[0][0], kl, higher_is_better=False, metric_name='KL').sweep(
        'quantization', [8, 6, 4, 3], verbose=False)
    print(f"model: LLaMA {a.layers} blocks, hidden {a.hidden}, {sum(p.numel() for p in llama.parameters()) / 1e6:.2f}"
          f"M parameters, trained {a.steps} steps; sweep and training {time.perf_counter() - t0:.0f} s")
    out = Path(tempfile.mkdtemp())
    with quiet(): llama.save_pretrained(out / 'dense')
    def disk(d): return sum(f.stat().st_size for f in Path(d).glob('*.safetensors'))
    def load_time(d):
        best = float('inf')
        for _ in range(5):
            t = time.perf_counter()
            with quiet():
                m = hf.AutoModelForCausalLM.from_pretrained(d)
                with torch.no_grad(): m(valid[0][0][:1])      # compressed-tensors unpacks on the first forward
            best = min(best, time.perf_counter() - t)
        return best
    dense_disk = disk(out / 'dense')
    load_time(out / 'dense')                                  # a first load pays the libraries' set-up: not timed
    print(f"dense float32: {dense_disk / 1e6:.3f} MB on disk, "
          f"load (with one forward) {load_time(out / 'dense') * 1e3:.0f} ms\n")
    def plan_for(target):
        with quiet(): return plan_compression(sweep, {'bytes': 100}, llama, valid[0][0], target=target)
    compressed_tensors(plan_for, llama, kl_of, out, disk, dense_disk, load_time, checkpoint_bytes)
    llama_cpp(plan_for, llama, kl_of, dense_disk)
    torchao(plan_for, llama, kl, kl_of, dense_disk, state_dict_bytes)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s; load average after: {load()}")

def compressed_tensors(plan_for, llama, kl_of, out, disk, dense_disk, load_time, checkpoint_bytes):
    "Uniform W4A16 and W8A16 against the smallest plan at their measured KL: exported, on disk, loaded back."
    base = plan_for('compressed-tensors')
    print("compressed-tensors (vLLM, transformers): uniform format vs the smallest plan at its measured KL")
    for name, u, p in against(base, {'W4A16': 4, 'W8A16': 8}, kl_of):
        for label, q in ((name, u), ('plan', p)):
            d = out / f"ct-{name}-{label}"
            with quiet(): q.export(llama, d)
            print(f"  {label:>6}: {disk(d) / 1e6:.3f} MB on disk ({disk(d) / dense_disk:.1%} of dense; tensors "
                  f"{checkpoint_bytes(d) / q.figures['bytes'] - 1:+.2%} of planned), KL {kl_of(q):.3e}, "
                  f"load {load_time(d) * 1e3:.0f} ms")

def llama_cpp(plan_for, llama, kl_of, dense_disk):
    "Uniform GGUF types and a Q4_K_M-like mix against the smallest plan at their measured KL (bytes as GGUF stores)."
    from fasterai.export import q4_k_m_bits
    base = plan_for('llama.cpp')
    print("\nllama.cpp (bytes as GGUF stores them; no file written, llama.cpp is not installed here)")
    formats = {'Q4_K': 4, 'Q4_K_M-like': q4_k_m_bits(llama, [u.name for u in base.units]), 'Q6_K': 6, 'Q8_0': 8}
    for name, u, p in against(base, formats, kl_of):
        size = f"{p.figures['bytes'] / 1e6:.3f} MB ({p.figures['bytes'] / dense_disk:.1%}), KL {kl_of(p):.3e}"
        print(f"  {name:>12}: {u.figures['bytes'] / 1e6:.3f} MB ({u.figures['bytes'] / dense_disk:.1%} of dense), "
              f"KL {kl_of(u):.3e}; plan at that KL: {size}")

def torchao(plan_for, llama, kl, kl_of, dense_disk, state_dict_bytes):
    "Uniform int8 and int4 against the smallest plan at their measured KL, applied with torchao's tensors."
    base = plan_for('torchao')
    print("\ntorchao (in process, CPU layout: a byte per code; latency: not measured, no GPU lent)")
    for name, u, p in against(base, {'int8': 8, 'int4-g128': 4}, kl_of):
        for label, q in ((name, u), ('plan', p)):
            ao = q.apply(copy.deepcopy(llama), backend='torchao')
            size = state_dict_bytes(ao)
            print(f"  {label:>9}: state dict {size / 1e6:.3f} MB ({size / dense_disk:.1%} of dense), KL {kl(ao):.3e}")

if __name__ == '__main__': main()
