"""Do applied plans keep what they promise? Bytes, MACs and params of a plan applied to a copy of the model,
counted by the counter, against the budget and against the plan's own figures, on six architectures.

For each model (the digits CNN, trained in seconds; an nn.TransformerEncoder classifier; an LSTM
tagger; GPT-2, BERT and a torchvision ViT built small from configs, random weights) it runs a
sparsity, a pruning and a quantization sweep (metric: output distance to the uncompressed model,
cheap and deterministic), plans 4 combinations of kinds under 7 budgets, applies each plan
(`Plan.measure`), and prints how many are within the budget and within 1% of the plan's figures,
and the largest gap. MACs are what dense kernels run, so a MAC budget that only sparsity's zeros
can reach (no pruning among the kinds, or nothing prunable) is planned and measured for a runtime
that skips zeros (`sparse_macs=True`, as the planner's error advises). Budgets no option reaches,
and pruning alone on the LSTM (nothing prunable), are skipped. Runs in a minute or two on 2 cores.

    python bench/plan_check.py [model names...]
"""
import torch, torch.nn as nn, warnings, itertools, time, sys, os
sys.path.insert(0, os.path.dirname(__file__))
from machine import cpu_model, load
warnings.simplefilter('ignore')
from fasterai.analyze.sensitivity import SensitivityAnalyzer
from fasterai.plan.plan import plan_compression
from fasterai.plan.problem import InfeasibleBudget
from fasterai.demo.digits import trained_digits_cnn
torch.manual_seed(0)

class Enc(nn.Module):
    def __init__(self, d=32, h=4, L=2):
        super().__init__(); self.emb = nn.Linear(8, d)
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, h, 64, batch_first=True), L, enable_nested_tensor=False)
        self.head = nn.Linear(d, 10)
    def forward(self, x): return self.head(self.enc(self.emb(x)).mean(1))
class Tagger(nn.Module):
    def __init__(self): super().__init__(); self.rnn, self.head = nn.LSTM(16, 32, num_layers=2, batch_first=True), nn.Linear(32, 10)
    def forward(self, x): return self.head(self.rnn(x)[0][:, -1])
def gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel
    m = GPT2LMHeadModel(GPT2Config(vocab_size=128, n_positions=32, n_embd=32, n_layer=2, n_head=4)).eval()
    class W(nn.Module):
        def __init__(s): super().__init__(); s.m = m
        def forward(s, x): return s.m(input_ids=x).logits
    return W().eval()
def bert():
    from transformers import BertConfig, BertForSequenceClassification
    m = BertForSequenceClassification(BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                                  intermediate_size=64, max_position_embeddings=32, num_labels=3)).eval()
    class W(nn.Module):
        def __init__(s): super().__init__(); s.m = m
        def forward(s, x): return s.m(input_ids=x).logits
    return W().eval()
def vit():
    from torchvision.models import VisionTransformer
    return VisionTransformer(image_size=8, patch_size=2, num_layers=2, num_heads=4, hidden_dim=32, mlp_dim=64, num_classes=10).eval()

cnn, data = trained_digits_cnn(epochs=2)
models = {'digits CNN': (cnn, data[2][:32]),
          'TransformerEncoder': (Enc().eval(), torch.randn(16, 12, 8)),
          'LSTM': (Tagger().eval(), torch.randn(16, 6, 16)),
          'GPT-2': (gpt2(), torch.randint(0, 128, (8, 16))),
          'BERT': (bert(), torch.randint(0, 128, (8, 16))),
          'ViT': (vit(), torch.randn(8, 3, 8, 8))}
only = sys.argv[1:]
budgets = [{'macs': 70}, {'macs': 50}, {'params': 60}, {'bytes': 20}, {'bytes': 10}, {'macs': 60, 'params': 50}, {'bytes': 15, 'macs': 80}]
def plan(kinds, b, sw):
    """The plan of `kinds` under budget `b`, and whether it counts MACs for a runtime that skips zeros: MACs are what
    dense kernels run, so a MAC budget that only sparsity's zeros can reach (no pruning, or nothing prunable) is
    planned and measured with sparse_macs=True, as the planner's error advises."""
    try: return plan_compression([sw[k] for k in kinds], b), False
    except InfeasibleBudget:
        prunable = 'pruning' in kinds and any(l.prunable is not False for l in sw['pruning'].layers)
        if 'macs' not in b or 'sparsity' not in kinds or prunable: raise     # only zeros could lower MACs here
        return plan_compression([sw[k] for k in kinds], b, sparse_macs=True), True

n_ok, n_all, n_zero_macs, worst = 0, 0, 0, 0.
for name, (m, x) in models.items():
    if only and name not in only: continue
    t0 = time.time()
    ref = m(x).detach()
    ev = lambda mm: -float((mm(x) - ref).pow(2).mean())
    an = SensitivityAnalyzer(m, x[:2], ev)
    sw = {k: an.sweep(k, lv, verbose=False) for k, lv in (('sparsity', [30, 60, 90]), ('pruning', [20, 40, 60]), ('quantization', [2, 4, 8]))}
    combos = [['pruning'], ['sparsity', 'quantization'], ['pruning', 'sparsity', 'quantization'], ['pruning', 'quantization']]
    for kinds, b in itertools.product(combos, budgets):
        try: p, zero_macs = plan(kinds, b, sw)
        except InfeasibleBudget: continue
        except ValueError as e:
            if 'nothing to plan' in str(e): continue
            raise
        f = p.measure(m, x[:2])
        n_all += 1
        n_zero_macs += zero_macs
        within = all(r['measured %'] <= r['budget %'] * (1 + 1e-9) for _, r in f.iterrows() if r['budget %'] == r['budget %'])
        gap = float(((f['measured'] - f['planned']).abs() / f['planned']).max())
        worst = max(worst, gap)
        ok = within and gap <= 0.01
        n_ok += ok
        if not ok: print(f"  FAIL {name} {kinds} {b}: within={within} gap={100*gap:.3f}%\n{f}")
    print(f"{name}: done in {time.time() - t0:.0f} s; running {n_ok}/{n_all} ok, worst gap {100*worst:.4f}%", flush=True)
print(f"machine: {cpu_model()}, {os.cpu_count()} cores, load {load()}, torch {torch.__version__}")
print(f"TOTAL {n_ok}/{n_all} plans within budget and within 1% of the plan's figures; worst gap {100*worst:.4f}%: "
      f"{n_all - n_zero_macs} with dense MACs, {n_zero_macs} MAC budgets only zeros reach, counted for a runtime "
      f"that skips zeros (sparse_macs=True)")
