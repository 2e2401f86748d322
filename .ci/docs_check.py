"""Junk check on the rendered docs site (`python .ci/docs_check.py [_proc/_docs]`, run by `.ci/docs`).

Reads every HTML page (the main content only: navbar and sidebar are the same everywhere) and fails, naming
the page and the offending line, when a page shows:
- progress-bar:   fastprogress/tqdm bar text (`█`, `Epoch 1/10 :` lines) or an HTML `<progress>` bar;
- warning:        `Warning:` or `warnings.warn` (a warning printed into a saved output);
- builder-path:   `site-packages`, or an absolute path of a home, temp, venv or checkout directory
                  (`/root`, `/tmp`, `/work`, `/check`, `/home`, `/Users`, this machine's venv, home, temp dir, repo);
- class-as-def:   a class or dataclass whose API signature starts with `def`;
- raw-link:       a markdown link `[text](url)` shown raw inside an API signature;
- no-param-table: an API entry whose signature has parameters but no parameter table under it;
- test-first:     on an API page, a visible test cell (fastcore `test_*` calls or `assert`) before the first
                  visible example cell (fastcore's rhythm: definition, example; tests hidden or at the end).
It also prints, per page, the visible code lines in test cells vs example cells (import-only cells count as neither).
"""
from __future__ import annotations
import ast, html, re, sys, sysconfig, tempfile
from collections import defaultdict
from pathlib import Path

root = Path(__file__).resolve().parent.parent

def _between(h: str, start: str, end: str) -> str:
    i = h.find(start)
    if i < 0: return h
    j = h.rfind(end)
    return h[i:j] if j > i else h[i:]

def text_lines(h: str) -> list:
    "The visible text of an HTML fragment, as lines (scripts, styles and tags dropped, entities decoded)."
    h = re.sub(r'<(script|style)\b.*?</\1>', '', h, flags=re.S | re.I)
    h = re.sub(r'<br\s*/?>|</(p|div|li|tr|h\d|pre)>', '\n', h, flags=re.I)
    return [l for l in html.unescape(re.sub(r'<[^>]+>', '', h)).split('\n') if l.strip()]

# ---------------------------------------------------------------- what counts as junk in the text
def builder_path_re() -> re.Pattern:
    "Absolute paths of the machine that builds the site: usual home/temp/checkout roots, and this machine's own."
    fixed = ['/root', '/tmp', '/work', '/check', '/home', '/Users', '/var/folders', '/private/var']
    mine = {sys.prefix, sys.base_prefix, sys.exec_prefix, sysconfig.get_paths()['purelib'], str(Path.home()),
            tempfile.gettempdir(), str(root)}
    alts = sorted({re.escape(p.rstrip('/')) for p in fixed + [m for m in mine if m and m != '/']}, key=len, reverse=True)
    # a path starts the word: not `a/tmp` (a relative path) nor `https://x/home` (a URL), and ends at a separator
    return re.compile(r'(?<![\w.~/-])(?:' + '|'.join(alts) + r')(?=/|\b)|site-packages')

_TEXT_RULES = [
    ('progress-bar', re.compile(r'█|\bEpoch \d+/\d+\b')),
    ('warning', re.compile(r'Warning:|warnings\.warn')),
    ('builder-path', builder_path_re()),
]

# ---------------------------------------------------------------- API entries
def class_names() -> set:
    "Top-level classes of the package that no module defines as a function too."
    classes, funcs = set(), set()
    for f in (root / 'fasterai').rglob('*.py'):
        for n in ast.parse(f.read_text()).body:
            if isinstance(n, ast.ClassDef): classes.add(n.name)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)): funcs.add(n.name)
    return classes - funcs

_ENTRY = re.compile(r'<h([2-4]) id="([^"]*)"[^>]*>(.*?)</h\1>\s*(?:<div class="code-copy-outer-scaffold">)?'
                    r'<div class="sourceCode"[^>]*><pre[^>]*><code[^>]*>(.*?)</code></pre>', re.S)
_LINK = re.compile(r'\[[^\]\n]+\]\([^)\s]+\)')

def _has_params(sig: str) -> bool:
    "Whether a rendered signature (old `def f(a, # comment` style or new) takes parameters besides self."
    i = sig.find('(')
    if i < 0: return False
    body = re.sub(r'#[^\n]*', '', sig[i + 1:])
    body = body[:body.rfind(')')] if ')' in body else body
    return any(p.strip() not in ('', 'self', 'cls', '*', '/') for p in body.split(','))

def api_entries(h: str) -> list:
    "(heading, signature text, has table, start offset) for each `show_doc` entry of a page."
    out, ms = [], list(_ENTRY.finditer(h))
    for k, m in enumerate(ms):
        end = ms[k + 1].start() if k + 1 < len(ms) else len(h)
        cell_end = h.find('<div id="cell-', m.end())      # an entry ends with its cell
        if 0 <= cell_end < end: end = cell_end
        heading = html.unescape(re.sub(r'<[^>]+>', '', m.group(3))).strip()
        sig = html.unescape(re.sub(r'<[^>]+>', '', m.group(4)))
        if not re.match(r'\s*(@\w+\s+)*(async\s+def|def|class)\b', sig): continue
        out.append((heading, sig, '<table' in h[m.end():end], m.start()))
    return out

# ---------------------------------------------------------------- visible code cells
_CELL = re.compile(r'<div id="cell-\d+" class="cell[^"]*">')
_CODE = re.compile(r'<pre class="[^"]*\bcell-code\b[^"]*"><code[^>]*>(.*?)</code></pre>', re.S)
_TEST = re.compile(r'^\s*(?:test_\w*\(|assert\b|with\s+ExceptionExpected\b)', re.M)

def _kind(src: str) -> str:
    "'test' (fastcore test calls or assert), 'import' (imports only: neither test nor example), else 'example'."
    if _TEST.search(src): return 'test'
    body = [l for l in src.split('\n') if l.strip() and not l.lstrip().startswith('#')]
    if body and all(re.match(r'\s*(from\s+\S+\s+)?import\b', l) or l.startswith((' ', '\t')) for l in body): return 'import'
    return 'example'

def code_cells(h: str) -> list:
    "(source, offset) of every visible input code cell."
    out = []
    starts = [m.start() for m in _CELL.finditer(h)] + [len(h)]
    for a, b in zip(starts, starts[1:]):
        m = _CODE.search(h, a, b)
        if m: out.append((html.unescape(re.sub(r'<[^>]+>', '', m.group(1))), a))
    return out

# ---------------------------------------------------------------- the check
def check_page(page: Path, site: Path, classes: set) -> tuple:
    h = page.read_text(encoding='utf-8')
    main = _between(h, '<main', '</main>')
    fails = []
    for line in text_lines(main):
        for cat, rx in _TEXT_RULES:
            m = rx.search(line)
            if m: fails.append((cat, line.strip()[:160]))
    if '<progress' in main: fails.append(('progress-bar', 'an HTML <progress> bar'))
    entries = api_entries(main)
    for heading, sig, table, _ in entries:
        first = sig.strip().split('\n')[0]
        if heading.split('.')[-1] in classes and '.' not in heading and re.match(r'\s*(async\s+)?def\b', sig):
            fails.append(('class-as-def', f'{heading}: {first[:100]}'))
        if _LINK.search(sig): fails.append(('raw-link', f'{heading}: {_LINK.search(sig).group(0)[:100]}'))
        if _has_params(sig) and not table: fails.append(('no-param-table', heading))
    cells = [(src, o, _kind(src)) for src, o in code_cells(main)]
    n_test = sum(len(src.strip('\n').split('\n')) for src, _, k in cells if k == 'test')
    n_ex = sum(len(src.strip('\n').split('\n')) for src, _, k in cells if k == 'example')
    if entries:
        first_ex = next((o for src, o, k in cells if k == 'example'), None)
        early = [src for src, o, k in cells if k == 'test' and (first_ex is None or o < first_ex)]
        if early: fails.append(('test-first', f'{len(early)} visible test cell(s) before the first example, '
                                               f'the first: {early[0].strip().splitlines()[0][:90]}'))
    return fails, n_test, n_ex, len(entries)

def main(site: Path) -> int:
    pages = sorted(p for p in site.rglob('*.html') if 'site_libs' not in p.parts)
    if not pages: print(f'docs check: no pages under {site}'); return 1
    classes = class_names()
    by_cat, n_bad = defaultdict(list), 0
    print(f"{'page':42} {'api':>4} {'test lines':>11} {'example lines':>14}")
    for p in pages:
        rel = p.relative_to(site).as_posix()
        fails, n_test, n_ex, n_api = check_page(p, site, classes)
        print(f'{rel:42} {n_api:>4} {n_test:>11} {n_ex:>14}' + ('   FAIL' if fails else ''))
        if fails: n_bad += 1
        for cat, what in fails: by_cat[cat].append((rel, what))
    for cat, items in by_cat.items():
        print(f'\n{cat}: {len(items)} on {len({r for r, _ in items})} page(s)')
        shown = defaultdict(int)
        for rel, what in items:
            shown[rel] += 1
            if shown[rel] <= 5: print(f'  {rel}: {what}')
        for rel, n in shown.items():
            if n > 5: print(f'  {rel}: ... and {n - 5} more')
    print(f"\ndocs check: {len(pages)} pages, {n_bad} failing" + (f" ({', '.join(sorted(by_cat))})" if by_cat else ''))
    return 1 if n_bad else 0

if __name__ == '__main__':
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else root / '_proc' / '_docs'))
