"""Architecture checks for fasterai/, run by .ci/run before the tests. Each check prints what it finds;
the script exits 1 if any is violated.

1. torch-pruning is wrapped by one adapter module: no other module names `torch_pruning`.
2. Imports only go down the layers (parsed with `ast`: absolute, relative and function-level imports).
3. No compression kind is told apart by comparing its name string (`== 'pruning'`): kinds carry behaviour.
4. No copy-paste of six lines or more (`duplicates`, a workplace tool: skipped where it is not installed).
5. No dispatch on a kind's tool (`isinstance(x, Quantizer)`) or on a kind's name (`.name in kinds`): kinds carry behaviour.
6. A class's methods do not depend on what was imported: `@patch` only in the module that defines the class.
7. How the code reads: no line over 120 characters (nbdev's generated `__all__` aside), no statements joined by `;`.
8. No module over 500 lines (`_modidx.py` aside), no function over 60 lines.
9. fastcore's rhythm: at least 85% of export cells (import cells aside) are followed by a test before the next one.
"""
import ast, io, json, re, shutil, subprocess, sys, tokenize
from pathlib import Path

# The one module that may import (or name) torch_pruning: the adapter over its dependency graph.
TP_ADAPTER = 'fasterai/core/graph.py'
# Files that only re-export or index other modules' names; they may name what those modules name.
REEXPORTS = {'__init__.py', 'all.py', '_modidx.py'}
# Layer rules: a module under the key (a package prefix) must not import anything under the values.
# `fasterai.analysis` is the old path of `fasterai.analyze`; `fasterai.export` (the runtimes' exporters) sits above the
# planner; `fasterai.cli`, the command line, is above every layer.
UPPER = {'core': ('sparse', 'prune', 'quantize', 'analyze', 'analysis', 'plan', 'export', 'cli'),
         'sparse': ('analyze', 'analysis', 'plan', 'export', 'cli'),
         'prune': ('analyze', 'analysis', 'plan', 'export', 'cli'),
         'quantize': ('analyze', 'analysis', 'plan', 'export', 'cli'),
         'analyze': ('plan', 'export', 'cli'), 'analysis': ('plan', 'export', 'cli'), 'plan': ('export', 'cli'),
         'export': ('cli',), 'demo': ('cli',)}
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
        sub = mod.split('.')[1] if mod.count('.') else ''
        forbidden = [f"fasterai.{u}" for u in UPPER.get(sub, ())]
        for line, target in imported(root / rel, mod):
            n += 1
            why = next((f"{f} is above fasterai.{sub}" for f in forbidden if under(target, f)), None)
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

KIND_TOOLS = ('Quantizer', 'Sparsifier', 'Pruner', 'SparsityCompression', 'QuantizationCompression', 'PruningCompression')
NAME_IN_KINDS = re.compile(r"\.name\s+in\s+(self\.)?kinds\b")

def check_kind_dispatch() -> list[str]:
    "`isinstance(x, <a kind's tool or class>)` outside the module defining it, and `.name in kinds` tests."
    bad = []
    for rel, mod in modules():
        if rel.name in REEXPORTS: continue
        text = (root / rel).read_text(encoding='utf-8')
        defined = {n.name for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ClassDef)}
        for node in ast.walk(ast.parse(text)):
            if not (isinstance(node, ast.Call) and getattr(node.func, 'id', None) == 'isinstance' and len(node.args) == 2): continue
            kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
            hit = [k.id for k in kinds if isinstance(k, ast.Name) and k.id in KIND_TOOLS and k.id not in defined]
            if hit: bad.append(f"{rel}:{node.lineno}: isinstance(..., {', '.join(hit)}) dispatches on a kind's tool")
        for i, line in enumerate(text.split('\n'), 1):
            if NAME_IN_KINDS.search(line): bad.append(f"{rel}:{i}: {line.strip()} (a kind's name tested)")
    return bad

def _patched_class(fn:ast.FunctionDef) -> str|None:
    "The class a `@patch`-decorated function attaches to (its first argument's annotation), or None if not patched."
    patched = any((isinstance(d, ast.Name) and d.id == 'patch') or (isinstance(d, ast.Call) and getattr(d.func, 'id', None) == 'patch')
                  for d in fn.decorator_list)
    if not patched or not fn.args.args or fn.args.args[0].annotation is None: return None
    ann = fn.args.args[0].annotation
    return ann.id if isinstance(ann, ast.Name) else ast.unparse(ann)

def check_patches() -> list[str]:
    "`@patch` onto a class defined in another module."
    bad = []
    for rel, _ in modules():
        if rel.name in REEXPORTS: continue
        tree = ast.parse((root / rel).read_text(encoding='utf-8'))
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and (cls := _patched_class(node)) and cls not in defined:
                bad.append(f"{rel}:{node.lineno}: @patch {node.name} onto {cls}, a class of another module")
    return bad

# How the code reads (issue 20): limits every module of fasterai/ keeps.
MAX_LINE, MAX_MODULE, MAX_FUNCTION, MIN_RHYTHM = 120, 500, 60, 85

def _generated_all(line:str) -> bool:
    "nbdev's own `__all__` line: it wraps the names at 120 characters, then prefixes `__all__ = ` (not ours to wrap)."
    return line.startswith('__all__ = [')

def _module_texts():
    "(path, text) of every module of fasterai/ that is written from the notebooks (`_modidx.py` aside)."
    for rel, _ in modules():
        if rel.name != '_modidx.py': yield rel, (root / rel).read_text(encoding='utf-8')

def check_lines() -> list[str]:
    "Lines over MAX_LINE characters (nbdev's generated `__all__` aside) and statements joined by `;`."
    bad = []
    for rel, text in _module_texts():
        bad += [f"{rel}:{i}: {len(l)} characters" for i, l in enumerate(text.split('\n'), 1)
                if len(l) > MAX_LINE and not _generated_all(l)]
        bad += [f"{rel}:{t.start[0]}: statements joined by ';'"
                for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.OP and t.string == ';']
    return bad

def check_sizes() -> list[str]:
    "Modules over MAX_MODULE lines, functions over MAX_FUNCTION lines."
    bad = []
    for rel, text in _module_texts():
        n = len(text.split('\n'))
        if n > MAX_MODULE: bad.append(f"{rel}: {n} lines (at most {MAX_MODULE})")
        bad += [f"{rel}:{f.lineno}: {f.name} is {f.end_lineno - f.lineno + 1} lines (at most {MAX_FUNCTION})"
                for f in ast.walk(ast.parse(text)) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                and f.end_lineno - f.lineno + 1 > MAX_FUNCTION]
    return bad

def _imports_only(src:str) -> bool:
    "A cell of imports (and directives) only: nothing in it to test."
    body = [l for l in src.split('\n') if l.strip() and not l.lstrip().startswith('#')]
    try: tree = ast.parse('\n'.join(body))
    except SyntaxError: return False
    return all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in tree.body)

def rhythm() -> tuple[int, int, list]:
    "(export cells, those followed by a test before the next export cell, the untested ones as 'notebook: first line')."
    cells, tested, untested = 0, 0, []
    for nb in sorted((root / 'nbs').rglob('*.ipynb')):
        srcs = [''.join(c['source']) for c in json.load(open(nb))['cells'] if c['cell_type'] == 'code']
        exports = [i for i, s in enumerate(srcs) if re.search(r'^#\|\s*export', s, re.M)]
        for k, i in enumerate(exports):
            nxt = exports[k + 1] if k + 1 < len(exports) else len(srcs)
            if _imports_only(srcs[i]): continue
            cells += 1
            if any(re.search(r'\btest_\w+\(|^\s*assert\b', s, re.M) for s in srcs[i + 1:nxt]): tested += 1
            else:
                code = [l for l in srcs[i].split('\n') if l.strip() and not l.startswith('#|')]
                untested.append(f"{nb.relative_to(root)}: {code[0][:60] if code else ''}")
    return cells, tested, untested

def check_rhythm() -> list[str]:
    "fastcore's rhythm: at least MIN_RHYTHM % of export cells (imports aside) followed by their test."
    cells, tested, untested = rhythm()
    share = 100 * tested / max(cells, 1)
    print(f"  export cells followed by a test before the next export: {tested} of {cells} ({share:.0f}%)")
    return [] if share >= MIN_RHYTHM else [f"{share:.0f}% < {MIN_RHYTHM}%; untested: {u}" for u in untested]

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
          ('no kind-name string comparisons', check_kind_strings), ('no duplicated code (duplicates)', check_duplicates),
          ('no dispatch on a kind\'s tool or name', check_kind_dispatch), ('@patch only where the class lives', check_patches),
          (f'lines within {MAX_LINE} characters, one statement per line', check_lines),
          (f'modules within {MAX_MODULE} lines, functions within {MAX_FUNCTION}', check_sizes),
          (f'at least {MIN_RHYTHM}% of export cells followed by their test', check_rhythm)]

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
