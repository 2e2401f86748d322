"""Analysing a model that accelerate offloads: peak memory above accelerate's own, and the cases the tests cover.

    OMP_NUM_THREADS=1 nice -n 10 python bench/offload_bench.py                 # memory, ~125 M-param LLaMA
    OMP_NUM_THREADS=1 nice -n 10 python bench/offload_bench.py --table         # 2 models x 3 offloads x 3 kinds
    python bench/offload_bench.py --gpu                                        # a 7 B LLaMA, GPU limited to 8 GiB

Memory: each (offload, kind) runs in a fresh process, with glibc told to give every allocation of 64 KiB or more its
own mapping (MALLOC_MMAP_THRESHOLD_=65536), so that freed memory leaves the resident set and the peak counts what is
live, not what the allocator kept (without it the same sweep measured 109 MB one run and 314 MB the next). The
process builds a LLaMA with grouped-query attention from a config (random weights, float32), offloads it with
accelerate (`cpu_offload` or `disk_offload`, execution on the CPU) and runs eval_fn once: its resident memory then
(VmRSS from /proc/self/status) is the baseline. The peak (VmHWM) is reset to that point by writing 5 to
/proc/self/clear_refs; eval_fn runs once more: that peak above the baseline is accelerate's own (a disk-offloaded
layer is read through a memory map and copied, both resident for a moment). Reset again, the sweep runs (every
linear layer at one level), and the figures printed are its peak above the baseline and above accelerate's own peak,
beside the largest analysed layer's weight bytes: the analysis should hold one layer's weights (plus 10 %) beyond what
accelerate holds. `--offload none` runs the same analysis on the model on one device, for comparison.

Table: on a 2-layer GQA LLaMA and a 2-layer GPT-2 from configs, for each of cpu_offload, disk_offload and a
device_map over 'cpu' and 'disk', each kind's sweep (sparsity, quantization, pruning): layers measured / failed, and
whether the outputs and every offloaded value are bit-identical afterwards.

GPU (`--gpu`): a LLaMA-2-7B-shaped model from a config (random float16 weights, built on the CPU), dispatched by
accelerate with `max_memory` limiting GPU 0 to 8 GiB (the rest on the CPU), a sparsity sweep of every linear layer at
one level: time, peak GPU memory (torch.cuda.max_memory_allocated) and the CPU figures as above. Not measured on the
2-core machine (no GPU); run it where one is lent.
"""
import argparse, json, os, subprocess, sys, tempfile, time, warnings
from machine import cpu_model, load

SIZES = {'125m': dict(hidden_size=768, intermediate_size=2048, num_hidden_layers=12, num_attention_heads=12,
                      num_key_value_heads=4, vocab_size=32000, max_position_embeddings=256),
         'tiny': dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, vocab_size=128, max_position_embeddings=64),
         '7b': dict(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32,
                    num_key_value_heads=32, vocab_size=32000, max_position_embeddings=4096)}
LEVELS = {'sparsity': 50, 'quantization': 4, 'pruning': 25}
MALLOC = {'MALLOC_MMAP_THRESHOLD_': '65536'}      # freed blocks leave the resident set: the peak is what is live


def status(key):
    "A field of /proc/self/status in MB."
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith(key + ':'): return int(line.split()[1]) / 1024
    raise KeyError(key)


def llama(size, device='cpu', dtype=None):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    old = torch.get_default_dtype()
    if dtype is not None: torch.set_default_dtype(dtype)
    try:
        with torch.device(device): return LlamaForCausalLM(LlamaConfig(**SIZES[size])).eval()
    finally: torch.set_default_dtype(old)


def offload(model, how, folder, device, max_memory=None):
    from accelerate import cpu_offload, disk_offload, dispatch_model, infer_auto_device_map
    if how == 'cpu': return cpu_offload(model, execution_device=device)
    if how == 'disk': return disk_offload(model, folder, execution_device=device)
    if how == 'max_memory':            # as device_map="auto" with max_memory: the GPU takes what fits, the CPU the rest
        dm = infer_auto_device_map(model, max_memory=max_memory, no_split_module_classes=['LlamaDecoderLayer'])
        return dispatch_model(model, dm, offload_dir=folder)
    return model


def reset_peak() -> bool:
    "VmHWM := VmRSS from here on (False where /proc/self/clear_refs cannot be written)."
    try:
        with open('/proc/self/clear_refs', 'w') as f: f.write('5')
        return True
    except OSError: return False


def child(how, kind, size, device):
    "One analysis in this process: one JSON line."
    import torch
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    from fasterai.core.offload import stored_value, weight_slot
    gpu = device.startswith('cuda')
    x = torch.randint(0, SIZES[size]['vocab_size'], (1, 16), generator=torch.Generator().manual_seed(0)).to(device)
    def eval_fn(m):
        with torch.no_grad(): return float(m(x).logits.float().pow(2).mean())
    folder = tempfile.mkdtemp()
    limit = {0: '8GiB', 'cpu': '120GiB'} if gpu else None
    model = offload(llama(size, dtype=torch.float16 if gpu else None), how, folder, device, limit)
    eval_fn(model)
    an = SensitivityAnalyzer(model, x, eval_fn)
    layers = {n: m for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)}
    sizes = {n: stored_value(*weight_slot(m)).nbytes / 2**20 for n, m in layers.items()}
    largest = max(sizes, key=sizes.get)
    model_mb = sum(stored_value(*weight_slot(m)).nbytes for m in layers.values()) / 2**20
    base = status('VmRSS')
    reset = reset_peak()
    eval_fn(model)                                   # accelerate's own: one forward of the model as offloaded
    own = status('VmHWM') - base
    base = status('VmRSS')
    reset_peak()
    if gpu: torch.cuda.reset_peak_memory_stats()
    gpu_base = torch.cuda.memory_allocated() / 2**20 if gpu else 0
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        sw = an.sweep(kind, [LEVELS[kind]], verbose=False)
    seconds = time.perf_counter() - t0
    df = sw.to_dataframe()
    print(json.dumps(dict(base_mb=base, own_mb=own, peak_mb=status('VmHWM'), reset=reset, seconds=seconds,
                          units=len(df), failed=int((df.status == 'failed').sum()), largest=largest,
                          largest_mb=sizes[largest], linear_mb=model_mb,
                          gpu_base_mb=gpu_base, gpu_peak_mb=torch.cuda.max_memory_allocated() / 2**20 if gpu else 0)))


def run_child(how, kind, size, device):
    "The JSON line of one child process, or None (its error printed)."
    out = subprocess.run([sys.executable, __file__, '--child', how, kind, size, device], capture_output=True,
                         text=True, env={**os.environ, **MALLOC})
    if out.returncode:
        print(f"{how} {kind}: failed\n{out.stderr[-2000:]}")
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def memory(args):
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, load {load()}; device {args.device}")
    print(f"model: LLaMA ({args.size}, GQA) from a config, float32; peak = VmHWM after a reset to VmRSS "
          f"(/proc/self/clear_refs), baseline = VmRSS after one forward of the model as offloaded; "
          f"{' '.join(f'{k}={v}' for k, v in MALLOC.items())}")
    for how in args.offload.split(','):
        for kind in args.kinds.split(','):
            r = run_child(how, kind, args.size, args.device)
            if r is None: continue
            above = r['peak_mb'] - r['base_mb']
            name = {'cpu': 'cpu_offload', 'disk': 'disk_offload', 'none': 'on one device'}[how]
            print(f"{name:14s} {kind:12s} {LEVELS[kind]:>3} : {r['units']} layers ({r['failed']} failed) in "
                  f"{r['seconds']:.0f} s; peak above baseline {above:.1f} MB = {above / r['largest_mb']:.2f} x the "
                  f"largest layer ({r['largest']}, {r['largest_mb']:.1f} MB); accelerate's own forward peaks "
                  f"{r['own_mb']:.1f} MB above baseline, the analysis {above - r['own_mb']:.1f} MB = "
                  f"{(above - r['own_mb']) / r['largest_mb']:.2f} x above that; linear weights {r['linear_mb']:.0f} MB"
                  f"{'' if r['reset'] else ' (VmHWM not reset: peak includes the build)'}")


def gpu(args):
    "The 7 B model under max_memory (GPU 0 limited to 8 GiB): a sparsity sweep's time and peak GPU memory."
    import torch
    if not torch.cuda.is_available(): return print("GPU: not measured (no CUDA device here)")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, load {load()}; GPU {torch.cuda.get_device_name(0)}")
    print(f"model: LLaMA-2-7B shape from a config, float16 random weights; max_memory GPU 0 8 GiB, rest on the CPU")
    r = run_child('max_memory', 'sparsity', '7b', 'cuda:0')
    if r is None: return
    print(f"sparsity {LEVELS['sparsity']}: {r['units']} layers ({r['failed']} failed) in {r['seconds']:.0f} s; "
          f"peak GPU memory {r['gpu_peak_mb']:.0f} MB ({r['gpu_peak_mb'] - r['gpu_base_mb']:.0f} MB above the "
          f"{r['gpu_base_mb']:.0f} MB accelerate placed); CPU peak above baseline "
          f"{r['peak_mb'] - r['base_mb']:.0f} MB; largest layer {r['largest']} {r['largest_mb']:.0f} MB")


def table(args):
    "The cases of the tutorial's tests, as a table."
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    from accelerate import dispatch_model
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    from fasterai.core.offload import offloaded_tensors, stored_value
    from fasterai.core.model import same_bits
    def gpt2():
        torch.manual_seed(0)
        return GPT2LMHeadModel(GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=128, n_positions=64)).eval()
    def mapped(m, folder):
        top, blocks = ('model', 'layers') if hasattr(m, 'model') else ('transformer', 'h')
        dm = {f'{top}.{n}': 'cpu' for n, _ in getattr(m, top).named_children() if n != blocks}
        dm.update({f'{top}.{blocks}.{i}': 'disk' if i % 2 else 'cpu'
                   for i in range(len(getattr(getattr(m, top), blocks)))})
        dm['lm_head'] = 'disk'
        return dispatch_model(m, dm, offload_dir=folder)
    x = torch.randint(0, 128, (2, 8), generator=torch.Generator().manual_seed(2))
    def metric(m):
        with torch.no_grad(): return -float(m(x).logits.pow(2).mean())
    print("| model | offload | kind | layers run | failed | outputs bit-identical | offloaded values bit-identical |")
    print("|---|---|---|---|---|---|---|")
    for name, make in (('LLaMA GQA', lambda: llama('tiny')), ('GPT-2', gpt2)):
        for how in ('cpu_offload', 'disk_offload', 'device_map cpu+disk'):
            folder = tempfile.mkdtemp()
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                m = (mapped(make(), folder) if how.startswith('device_map')
                     else offload(make(), how.split('_')[0], folder, 'cpu'))
                with torch.no_grad(): out = m(x).logits
                before = {n: stored_value(mod, k).clone() for n, (mod, k) in offloaded_tensors(m).items()}
                an = SensitivityAnalyzer(m, x, metric)
                for kind, levels in (('sparsity', [25, 50, 75]), ('quantization', [8, 4, 3]), ('pruning', [25, 50])):
                    try:
                        df = an.sweep(kind, levels, verbose=False).to_dataframe()
                        failed = df.layer[df.status == 'failed'].nunique()
                        run = f"{df.layer.nunique()} layers x {len(levels)} levels"
                    except ValueError as e: run, failed = f"refused: {str(e)[:60]}...", '-'
                    with torch.no_grad(): same_out = torch.equal(m(x).logits, out)
                    same_vals = all(same_bits(stored_value(mod, k), before[n])
                                    for n, (mod, k) in offloaded_tensors(m).items())
                    print(f"| {name} | {how} | {kind} | {run} | {failed} | {'yes' if same_out else 'NO'} | "
                          f"{'yes' if same_vals else 'NO'} ({len(before)} tensors) |")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--offload', default='cpu,disk', help="comma-separated: cpu, disk, none (the model on one device)")
    p.add_argument('--kinds', default='sparsity,quantization')
    p.add_argument('--size', default='125m', choices=list(SIZES))
    p.add_argument('--device', default='cpu', help="execution device (cuda: not measured on this machine)")
    p.add_argument('--table', action='store_true', help="the 18 offloaded cases x 3 kinds instead of memory")
    p.add_argument('--gpu', action='store_true', help="the 7 B model with the GPU limited to 8 GiB (needs CUDA)")
    p.add_argument('--child', nargs=4, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child: return child(*a.child)
    if a.gpu: return gpu(a)
    return table(a) if a.table else memory(a)


if __name__ == '__main__':
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
