"""Architecture checks for fasterai/, run by .ci/run before the tests. Each check prints what it finds;
the script exits 1 if any is violated.

1. torch-pruning is wrapped by one adapter module: no other module names `torch_pruning`.
2. Imports only go down the layers (parsed with `ast`: absolute, relative and function-level imports).
3. No compression kind is told apart by comparing its name string (`== 'pruning'`): kinds carry behaviour.
4. No copy-paste of six lines or more (`duplicates`, a workplace tool: skipped where it is not installed).
"""
import ast, re, shutil, subprocess, sys
from pathlib import Path

# The one module that may import (or name) torch_pruning: the adapter over its dependency graph.
TP_ADAPTER = 'fasterai/core/graph.py'
# Files that only re-export or index other modules' names; they may name what those modules name.
REEXPORTS = {'__init__.py', 'all.py', '_modidx.py'}
# Layer rules: a module under the key (a package prefix) must not import anything under the values.
# `fasterai.analysis` is the old path of `fasterai.analyze`; a module named `cli` is CLI-level.
UPPER = {'core': ('sparse', 'prune', 'quantize', 'analyze', 'analysis', 'plan'),
         'sparse': ('analyze', 'analysis', 'plan'), 'prune': ('analyze', 'analysis', 'plan'),
         'quantize': ('analyze', 'analysis', 'plan'),
         'analyze': ('plan',), 'analysis': ('plan',)}
CLI = 'cli'                                              # a module of this name is above every layer
KIND_CMP = re.compile(r"""(==|!=) *['"](sparsity|pruning|quantization)['"]""")

root = Path(__file__).resolve().parent.parent
pkg = root / 'fasterai'

def modules():
    "Every source file of the package, as (path relative to the root, dotted module name)."
    for p in sorted(pkg.rglob('*.py')):
        rel = p.relative_to(root)
        parts = list(rel.with_suffix('').parts)
        if parts[-1] == '__init__': parts = parts[:-1]
        yield rel, '.'.join(parts)

def imported(path: Path, modname: str) -> list[tuple[int, str]]:
    "(line, module) for every import in the file, relative ones resolved; `from a import b` also yields `a.b`."
    is_pkg = path.name == '__init__.py'
    here = modname.split('.') if is_pkg else modname.split('.')[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'), str(path))):
        if isinstance(node, ast.Import): out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                up = here[:len(here) - (node.level - 1)] if node.level > 1 else here
                base = '.'.join(up + ([base] if base else []))
            out.append((node.lineno, base))
            out += [(node.lineno, f"{base}.{a.name}") for a in node.names if a.name != '*']
    return out

def under(mod: str, prefix: str) -> bool: return mod == prefix or mod.startswith(prefix + '.')

def check_torch_pruning() -> list[str]:
    "Modules other than the adapter and the re-export files that name torch_pruning."
    found = sorted(str(rel) for rel, _ in modules() if 'torch_pruning' in (root / rel).read_text(encoding='utf-8'))
    print(f"  modules naming torch_pruning: {', '.join(found) or 'none'} (allowed: {TP_ADAPTER} and re-exports)")
    bad = [f"{f} names torch_pruning; only {TP_ADAPTER} may" for f in found
           if f != TP_ADAPTER and Path(f).name not in REEXPORTS]
    if TP_ADAPTER not in found: bad.append(f"{TP_ADAPTER} (the torch-pruning adapter) does not import torch_pruning or is missing")
    return bad

def check_layers() -> list[str]:
    "Imports that go up a layer."
    bad, n = {}, 0
    for rel, mod in modules():
        if mod.split('.')[-1] == CLI: continue
        sub = mod.split('.')[1] if mod.count('.') else ''
        forbidden = [f"fasterai.{u}" for u in UPPER.get(sub, ())]
        for line, target in imported(root / rel, mod):
            n += 1
            why = next((f"{f} is above fasterai.{sub}" for f in forbidden if under(target, f)), None)
            if why is None and under(target, 'fasterai') and target.split('.')[-1] == CLI: why = 'CLI-level'
            if why: bad.setdefault((str(rel), line), f"{rel}:{line} imports {target} ({why})")   # one per import statement
    print(f"  {n} imported names read in {sum(1 for _ in modules())} modules")
    return [bad[k] for k in sorted(bad)]

def check_kind_strings() -> list[str]:
    "Comparisons of a value with a compression kind's name."
    bad = []
    for rel, _ in modules():
        if rel.name == '_modidx.py': continue
        for i, line in enumerate((root / rel).read_text(encoding='utf-8').split('\n'), 1):
            if KIND_CMP.search(line): bad.append(f"{rel}:{i}: {line.strip()}")
    return bad

def check_duplicates():
    "Pairs of six or more shared lines, outside _modidx.py; None when the tool is not installed."
    exe = shutil.which('duplicates')
    if exe is None: return None
    res = subprocess.run([exe, '--repo', 'fasterai', '--most', '200', '--seconds', '60'], cwd=root,
                         capture_output=True, text=True)
    lines = res.stdout.strip().split('\n')
    print(f"  {lines[0] if lines else res.stderr.strip()}")
    rows = [l.strip() for l in lines if re.match(r'\s*D\d+ ', l)]
    bad = [r for r in rows if '_modidx.py' not in r]
    bad += [l.strip() for l in lines if l.startswith(('incomplete:', '(+'))]
    return bad

CHECKS = [('one torch-pruning adapter', check_torch_pruning), ('imports go down the layers', check_layers),
          ('no kind-name string comparisons', check_kind_strings), ('no duplicated code (duplicates)', check_duplicates)]

if __name__ == '__main__':
    failed = []
    for title, check in CHECKS:
        print(f"- {title}")
        bad = check()
        if bad is None: print("  SKIPPED: the `duplicates` command is not installed on this machine"); continue
        for b in bad: print(f"  VIOLATION {b}")
        print(f"  {'FAIL' if bad else 'ok'}" + (f" ({len(bad)})" if bad else ''))
        if bad: failed.append(f"{title} ({len(bad)})")
    print(f"arch: {len(CHECKS) - len(failed)} of {len(CHECKS)} checks passed" + (f"; failed: {', '.join(failed)}" if failed else ''))
    sys.exit(1 if failed else 0)
