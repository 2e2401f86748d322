"""Train the byte-level language model of `fasterai.demo.text` and print what it reaches, as plain lines.

Printed: the machine, the corpus (its Python version: the standard library differs between versions), the
training time (wall and CPU), the validation and test NLL per byte against the unigram model's, in nats
and bits, one evaluation's time, and the KL of the model to itself (0: the check of `kl_to_dense`).

    OMP_NUM_THREADS=1 python bench/text_lm_bench.py                  # the 'bench' setting on the CPU: about 9 min
    OMP_NUM_THREADS=1 python bench/text_lm_bench.py --size small     # the docs' model: about 70 s
    python bench/text_lm_bench.py --device cuda
"""
import argparse, math, platform, statistics, time
from machine import cpu_model, load          # bench/machine.py: shared by the bench scripts
import torch
from fasterai.demo.text import LM_SETTINGS, trained_text_lm, lm_nll, unigram_nll, kl_to_dense


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--size', default='bench', choices=list(LM_SETTINGS), help='which setting to train (default: bench)')
    p.add_argument('--device', default='cpu', help='torch device: cpu, cuda, cuda:1, ... (default: cpu)')
    p.add_argument('--seed', type=int, default=0, help='seeds the weights and the training windows (default: 0)')
    return p.parse_args(argv)


def synced(device:torch.device):
    "Wait for the device's queued work (a no-op on the CPU), so that wall times include it."
    if device.type == 'cuda': torch.cuda.synchronize(device)


def main(argv=None):
    a = parse_args(argv)
    device = torch.device(a.device)
    where = torch.cuda.get_device_name(device) if device.type == 'cuda' else cpu_model()
    print(f"machine: {where}; python {platform.python_version()}, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads, load {load()}")
    setting = LM_SETTINGS[a.size]
    print(f"setting {a.size}: {setting.config}; {setting.steps} steps x {setting.batch_size} windows, lr {setting.lr}")
    t0, cpu0 = time.time(), time.process_time()
    model, data = trained_text_lm(a.size, a.seed, device)
    synced(device)
    print(f"train_seconds {time.time() - t0:.1f} (cpu {time.process_time() - cpu0:.1f})")
    sizes = ', '.join(f"{s} {n} files {b / 1e6:.2f} MB" for s, (n, b) in data.corpus.sizes().items())
    print(f"corpus: python {data.corpus.python} standard library: {sizes}")
    for split, batches in (('valid', data.valid), ('test', data.test)):
        nll, unigram = lm_nll(model, batches), unigram_nll(data.corpus.tokens['train'], batches)
        tokens = sum(y.numel() for _, y in batches)
        print(f"{split}_nll {nll:.4f} nats/byte ({nll / math.log(2):.3f} bits), unigram {unigram:.4f} "
              f"({unigram / math.log(2):.3f} bits), gap {unigram - nll:.4f} nats, {tokens} tokens")
    times = []
    for _ in range(5):
        t = time.perf_counter()
        lm_nll(model, data.valid)
        times.append(time.perf_counter() - t)
    print(f"eval_seconds {statistics.median(times):.4f} (median of 5, {len(data.valid)} batches)")
    print(f"kl_to_itself {kl_to_dense(model, data.valid)(model):.3g}")


if __name__ == '__main__':
    main()
