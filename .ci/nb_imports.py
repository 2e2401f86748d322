"""nbdev's docs build executes every code cell that contains an import (and every export cell) to render
API docs. A test cell that also imports something would then run at docs time too: slow, and it fails
when earlier test cells did not run. So imports go in import-only cells. Hidden cells (`#| hide`) that export
nothing are exempt: `.ci/docs_build.py` runs only their top-level imports at docs time.

`python .ci/nb_imports.py` lists offending cells (exit 1 if any); `--fix` moves top-level imports of such
cells into an import-only cell just before them (nested imports must be moved by hand)."""
import ast, json, re, sys, secrets
from pathlib import Path

root = Path(__file__).resolve().parent.parent
_show = re.compile(r'^#\|\s*(export|exports|exporti|exec_doc)\b', re.M)

def _warn_call(n):
    "A bare `warnings.xxx(...)` call, as used to silence a noisy import."
    return isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Attribute) \
        and isinstance(n.value.func.value, ast.Name) and n.value.func.value.id == 'warnings'

def _importish(n):
    "An import, or a `with` block holding only imports and warnings calls (it is cheap to run at docs time)."
    if isinstance(n, (ast.Import, ast.ImportFrom)): return True
    return isinstance(n, ast.With) and all(_importish(b) or _warn_call(b) for b in n.body)

def offending(cell):
    "(top-level import statements, has nested imports) if the cell mixes imports with other code, else None."
    if cell['cell_type'] != 'code': return None
    src = ''.join(cell['source'])
    if _show.search(src) or 'nbdev_export()' in src: return None
    if re.search(r'^#\|\s*eval:\s*false', src, re.M | re.I): return None
    if re.search(r'^#\|\s*hide\b', src, re.M): return None     # the docs build runs only its imports (docs_build.py)
    try: tree = ast.parse('\n'.join(l for l in src.split('\n') if not l.lstrip().startswith(('%', '!'))))
    except SyntaxError: return None
    imps = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    others = [n for n in tree.body if not _importish(n)]
    if not imps or not others: return None
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    return top, len(top) < len(imps)

def fix(path: Path) -> list:
    nb = json.loads(path.read_text()); cells, manual = [], []
    for c in nb['cells']:
        o = offending(c)
        if o is None: cells.append(c); continue
        top, nested = o
        if nested or not top: manual.append(''.join(c['source'])[:200]); cells.append(c); continue
        lines = ''.join(c['source']).split('\n')
        drop = set()
        for n in top: drop.update(range(n.lineno - 1, n.end_lineno))
        directives = [l for l in lines if l.startswith('#|')]
        imp = [lines[i] for i in sorted(drop)]
        rest = [l for i, l in enumerate(lines) if i not in drop]
        while rest and not rest[0].strip(): rest.pop(0)
        mk = lambda ls: [l + '\n' for l in ls[:-1]] + [ls[-1]] if ls else []
        new = dict(c, source=mk(directives + imp), outputs=[], execution_count=None)
        if 'id' in c: new['id'] = secrets.token_hex(4)
        cells += [new, dict(c, source=mk(rest))]
    nb['cells'] = cells
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n')
    return manual

if __name__ == '__main__':
    paths = [Path(p) for p in sys.argv[1:] if not p.startswith('--')] or sorted((root / 'nbs').rglob('*.ipynb'))
    bad = 0
    for p in paths:
        if '.ipynb_checkpoints' in str(p): continue
        if '--fix' in sys.argv:
            for m in fix(p): print(f"{p}: move nested imports by hand:\n{m}\n"); bad += 1
        else:
            for c in json.loads(p.read_text())['cells']:
                if offending(c) is not None:
                    bad += 1; print(f"{p}: a cell mixes imports with other code:\n  " + ''.join(c['source'])[:160].replace('\n', '\n  '))
    if bad: sys.exit(f"{bad} notebook cell(s) mix imports with other code: nbdev's docs build would execute them")
    print('notebook imports: ok')
