"""Shipping a plan: size on disk against the dense model and the uniform formats at equal damage, and load time.

A LLaMA with grouped-query attention from a config (random weights; `--hidden`, `--layers`), its damage measured as
the KL divergence of its next-token distribution from the dense model's on random tokens. One quantization sweep
(8, 6, 4, 3 bits); then, per target:
- compressed-tensors: uniform W4A16 (int4, groups of 128) and W8A16, and plans at 25, 50 and 75 % of the way
  between their bytes, each exported with the library and loaded back with transformers: tensor bytes on disk, load
  time (best of 3, with the first forward that unpacks the weights), measured KL;
- llama.cpp: the plan at the bytes of uniform Q4_K and Q6_K (bytes as GGUF stores them; llama.cpp itself is not
  run here, so no file and no load time), measured KL beside the uniform type's;
- torchao: the plan applied with torchao's tensors: state-dict bytes and KL. Latency needs a GPU: not measured.

    OMP_NUM_THREADS=1 python bench/ship_bench.py                 # CPU, small model
    python bench/ship_bench.py --hidden 1024 --layers 8 --device cuda
"""
import argparse, copy, os, sys, tempfile, time, warnings
from pathlib import Path
import torch
sys.path.insert(0, os.path.dirname(__file__))
from machine import cpu_model, load          # bench/machine.py: shared by the bench scripts

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--hidden', type=int, default=256)
    ap.add_argument('--layers', type=int, default=2)
    ap.add_argument('--device', default='cpu')
    a = ap.parse_args()
    import transformers as hf
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    from fasterai.analyze.damage import kl_per_sample
    from fasterai.plan import plan_compression, Plan
    from fasterai.export import state_dict_bytes
    from fasterai.export.compressed_tensors import checkpoint_bytes
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; load average before: {load()}; device {a.device}")
    torch.manual_seed(0)
    cfg = hf.LlamaConfig(hidden_size=a.hidden, intermediate_size=2 * a.hidden, num_hidden_layers=a.layers,
                         num_attention_heads=4, num_key_value_heads=2, vocab_size=256, max_position_embeddings=64)
    llama = hf.LlamaForCausalLM(cfg).eval().to(a.device)
    ids = torch.randint(0, 256, (8, 32), device=a.device)
    with torch.no_grad(): dense = llama(ids).logits
    def kl(m):
        with torch.no_grad(): return float(kl_per_sample(dense, m(ids).logits).mean())
    sweep = SensitivityAnalyzer(llama, ids, kl, higher_is_better=False, metric_name='KL').sweep(
        'quantization', [8, 6, 4, 3], verbose=False)
    def uniform(plan, bits):
        return Plan(plan.units, [u.options.index((bits,)) for u in plan.units], plan.budget, plan.costs, plan.kinds,
                    plan.baseline, plan.metric_name, plan.higher_is_better, plan.settings)
    def measured(plan): return kl(plan.apply(copy.deepcopy(llama)))
    out = Path(tempfile.mkdtemp())
    llama.save_pretrained(out / 'dense')
    print(f"dense: {checkpoint_bytes(out / 'dense') / 1e6:.3f} MB of tensors in safetensors")
    def load_time(d):
        best = float('inf')
        for _ in range(3):
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                m = hf.AutoModelForCausalLM.from_pretrained(d)
                with torch.no_grad(): m(ids[:1].cpu())       # compressed-tensors unpacks on the first forward
            best = min(best, time.perf_counter() - t)
        return best
    print(f"dense load (with one forward): {load_time(out / 'dense') * 1e3:.0f} ms")
    base = plan_compression(sweep, {'bytes': 100}, llama, ids, target='compressed-tensors')
    w4, w8 = uniform(base, 4), uniform(base, 8)
    lo, hi = w4.percent['bytes'], w8.percent['bytes']
    rows = [('W4A16', w4)] + [(f"plan {f:.0%}", base.replan({'bytes': lo + f * (hi - lo)})) for f in (.25, .5, .75)]
    for label, q in rows + [('W8A16', w8)]:          # the plans lie between the two uniform formats' bytes
        d = out / f"ct-{label.replace(' ', '').replace('%', '')}"
        q.export(llama, d)
        print(f"compressed-tensors {label:>9}: {checkpoint_bytes(d) / 1e6:.3f} MB on disk "
              f"(planned {q.figures['bytes'] / 1e6:.3f}), KL {measured(q):.3e}, load {load_time(d) * 1e3:.0f} ms")
    base = plan_compression(sweep, {'bytes': 100}, llama, ids, target='llama.cpp')
    for bits, name in ((4, 'Q4_K'), (6, 'Q6_K')):
        u = uniform(base, bits)
        p = base.replan({'bytes': u.percent['bytes']})
        for label, q in ((name, u), ('plan', p)):
            print(f"llama.cpp {label:>5} at {name}'s bytes: {q.figures['bytes'] / 1e6:.3f} MB as GGUF stores them, "
                  f"KL {measured(q):.3e} (file and load: not measured, llama.cpp is not run here)")
    p = plan_compression(sweep, {'bytes': 35}, llama, ids, target='torchao')
    ao = p.apply(copy.deepcopy(llama), backend='torchao')
    print(f"torchao plan: state dict {state_dict_bytes(ao) / 1e6:.3f} MB (planned {p.figures['bytes'] / 1e6:.3f}), "
          f"KL {kl(ao):.3e}; latency: not measured (no GPU)")
    print(f"load average after: {load()}")

if __name__ == '__main__': main()
