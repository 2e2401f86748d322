"""Sharding a sensitivity analysis over torch.distributed: 2 processes vs 1 under torchrun.

Prints one line per figure:
- the machine (CPU model, cores, torch version, device) and the load average before and after (the
  machine may be shared: a load above the core count means the figures are noisy);
- for each repeat, 1 then 2 processes (`torchrun --standalone --nproc_per_node N`, OMP_NUM_THREADS=1 in
  every process, gloo on CPU / NCCL on GPUs): the analysis' wall time (from a barrier just before it to the
  last rank's end: what sharding speeds up) and the whole job's wall time (process start, imports and
  rendezvous included);
- the speed-up of the medians, the evaluations made by each rank, and whether the 2-process result equals
  the 1-process result exactly (sharding is opt-in: every rank calls the analysis with `distributed=True`;
  with 2 processes each measurement is followed by one small `all_reduce`, the stop flag that lets a failure
  or Ctrl-C on one rank stop the others, and its cost is part of the 2-process time);
- the CPU seconds each rank spent in the analysis: on a machine shared with other jobs a process gets less
  than a core (CPU/wall < 1 below), and the CPU-time ratio (1-process CPU time / the busiest rank's) is the
  speed-up the same job would show on two otherwise idle cores.
The analysis: torchvision resnet18 (weights=None, seeded: every rank builds the same model) on `--batches`
random batches of `--bs` x 3 x `--size` x `--size` (no download), one compression level over every layer,
cross-entropy as the metric (through `eval_fn`, or data + metric with `--evaluator data|suffix`).

Usage: python bench/sharding_bench.py [--device cpu] [--repeats 3] [--batches 4] [--bs 16] [--size 128]
                                      [--compression sparsity] [--level 50] [--evaluator eval_fn]
"""
import argparse, json, os, platform, statistics, subprocess, sys, tempfile, time
from machine import cpu_model, load          # bench/machine.py: shared by the bench scripts


def worker(a):
    "One rank of the job: the same analysis on every rank, sharded by fasterai; rank 0 writes the figures."
    import torch, torch.distributed as dist, torch.nn.functional as F, torchvision
    from fasterai.analyze.sensitivity import SensitivityAnalyzer
    cuda = a.device.startswith('cuda')
    dist.init_process_group('nccl' if cuda else 'gloo')
    rank, world = dist.get_rank(), dist.get_world_size()
    dev = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}") if cuda else torch.device(a.device)
    if cuda: torch.cuda.set_device(dev)
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).to(dev).eval()
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(a.bs, 3, a.size, a.size, generator=g).to(dev), torch.randint(0, 1000, (a.bs,), generator=g).to(dev))
               for _ in range(a.batches)]

    @torch.no_grad()
    def eval_fn(m): return sum(F.cross_entropy(m(x), y, reduction='sum').item() for x, y in batches) / (a.bs * a.batches)
    if a.evaluator == 'eval_fn': an = SensitivityAnalyzer(model, batches[0][0], eval_fn, higher_is_better=False, metric_name='loss')
    else: an = SensitivityAnalyzer(model, data=batches, metric=F.cross_entropy, suffix=a.evaluator == 'suffix',
                                   higher_is_better=False, metric_name='loss')
    dist.barrier()
    t0, c0 = time.perf_counter(), time.process_time()
    res = an.analyze(a.compression, a.level, verbose=False, distributed=True)       # sharding is opt-in
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    got = [None] * world
    dist.all_gather_object(got, (seconds, cpu, res.timing.n_evals))
    if rank == 0:
        json.dump({'seconds': max(g[0] for g in got), 'cpu': [g[1] for g in got], 'evals': [g[2] for g in got],
                   'result': json.loads(json.dumps(res.as_dict(), default=str)), 'layers': len(res.layers)}, open(a.out, 'w'))
    dist.destroy_process_group()


def run(a, n:int) -> dict:
    "One torchrun job with `n` processes; the figures of its rank 0, and the job's wall time."
    out = os.path.join(tempfile.mkdtemp(), 'out.json')
    cmd = [sys.executable, '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node', str(n), os.path.abspath(__file__),
           '--worker', '--out', out, '--device', a.device, '--batches', str(a.batches), '--bs', str(a.bs), '--size', str(a.size),
           '--compression', a.compression, '--level', str(a.level), '--evaluator', a.evaluator]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env={**os.environ, 'OMP_NUM_THREADS': '1'}, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode: sys.exit(f"torchrun with {n} processes failed:\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}")
    d = json.load(open(out))
    d['wall'] = wall
    return d


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--device', default='cpu', help="'cpu', or 'cuda' (each rank on cuda:LOCAL_RANK)")
    p.add_argument('--repeats', type=int, default=3)
    p.add_argument('--batches', type=int, default=4)
    p.add_argument('--bs', type=int, default=16)
    p.add_argument('--size', type=int, default=128)
    p.add_argument('--compression', default='sparsity')
    p.add_argument('--level', type=float, default=50)
    p.add_argument('--evaluator', default='eval_fn', choices=['eval_fn', 'data', 'suffix'])
    p.add_argument('--worker', action='store_true', help=argparse.SUPPRESS)
    p.add_argument('--out', help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker: return worker(a)
    import torch
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, torch {torch.__version__}, device {a.device}, "
          f"OMP_NUM_THREADS=1 per process")
    print(f"analysis: resnet18 (weights=None), {a.compression} at {a.level:g}, every layer, {a.batches} batches of "
          f"{a.bs}x3x{a.size}x{a.size}, metric cross-entropy via {a.evaluator}")
    print(f"load average before: {load()}")
    times, cpus = {1: [], 2: []}, {1: [], 2: []}
    results = {}
    for r in range(a.repeats):
        for n in (1, 2):                                  # interleaved, so that a burst of load hits both alike
            d = run(a, n)
            times[n].append(d['seconds']); cpus[n].append(max(d['cpu']))
            results[n] = d
            print(f"repeat {r + 1}: {n} process{'es' if n > 1 else ''}: analysis {d['seconds']:.2f} s, job {d['wall']:.2f} s, "
                  f"evaluations per rank {d['evals']}, CPU s per rank {[round(c, 2) for c in d['cpu']]} "
                  f"(CPU/wall {max(d['cpu']) / d['seconds']:.2f})")
    m1, m2 = statistics.median(times[1]), statistics.median(times[2])
    print(f"median analysis time: 1 process {m1:.2f} s, 2 processes {m2:.2f} s")
    print(f"speed-up (2 vs 1 process): {m1 / m2:.2f}x  ({results[1]['layers']} layers; ideal with a baseline on every rank: "
          f"{sum(results[1]['evals']) / max(results[2]['evals']):.2f}x)")
    c1, c2 = statistics.median(cpus[1]), statistics.median(cpus[2])
    print(f"median CPU time: 1 process {c1:.2f} s, busiest of 2 processes {c2:.2f} s: CPU-time speed-up {c1 / c2:.2f}x")
    print(f"2-process result == 1-process result: {results[1]['result'] == results[2]['result']}")
    print(f"load average after: {load()}")


if __name__ == '__main__': main()
