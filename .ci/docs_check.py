"""Checks of the rendered docs site (`python .ci/docs_check.py [_proc/_docs] [--counts FILE] [--enforce-all]`, run by `.ci/docs`).

Reads every HTML page and counts, per page, what breaks each rule below (the text rules read the main content
only: navbar and sidebar are the same everywhere). A rule in `ENFORCED` fails the build when its count is not 0
on some page; a rule in `PENDING_PAGE_FIXES` is reported ("reported, not enforced") until the pages are fixed.
`--counts FILE` writes the count of every rule on every page to FILE; `--enforce-all` enforces the pending rules too.

Junk on a page:
- progress-bar:    fastprogress/tqdm bar text (`█`, `Epoch 1/10 :` lines) or an HTML `<progress>` bar;
- warning:         `Warning:` or `warnings.warn` (a warning printed into a saved output);
- builder-path:    `site-packages`, or an absolute path of a home, temp, venv or checkout directory
                   (`/root`, `/tmp`, `/work`, `/check`, `/home`, `/Users`, this machine's venv, home, temp dir, repo);
- factory:         `<factory>`, a dataclass `field(default_factory=...)` default shown as Python's placeholder;
- wide-output:     an output line (a cell's `<pre>` output) longer than `COLUMN` characters: at 1400 px the page
                   column holds 83 monospace characters (measured once with headless Chromium, see `COLUMN`), so
                   the end of a longer line is hidden;
- wide-signature:  an API signature line longer than `COLUMN` characters (the builder puts one parameter a line
                   when the whole signature does not fit the column);
- wide-code:       a line of visible example code longer than `COLUMN` characters (it scrolls sideways: readers
                   miss its end).
API entries (the `show_doc` entries of a page; public = a name that neither starts with `_` nor is a dunder):
- class-as-def:    a class or dataclass whose API signature starts with `def`;
- raw-link:        a markdown link `[text](url)` shown raw inside an API signature, or in a page's text (nbdev links
                  backticked names inside a link's own text; the builder repairs those);
- no-param-table:  an API entry whose signature has parameters but no parameter table under it;
- empty-details:   a row of a public entry's parameter table (Type | Default | Details) with no Details;
- returns-param:   a Returns row whose Details is a parameter's text: the `# comment` of a parameter (read from
                   the source) or the Details of a parameter row (a docment after the last parameter, on the
                   `) -> X:` line, used to become the Returns description);
- no-source:       a public entry (function, class, method, property) with no `source` link.
Links:
- dead-anchor:     a relative link `page.html#anchor` or `#anchor` whose page has no element with that `id`
                   (or a relative link to a page that does not exist).
Examples and tests (visible code cells: fastcore `test_*` calls, `assert` or `ExceptionExpected` make a test
cell; import-only cells count as neither test nor example):
- test-first:      on an API page, a visible test cell before the first visible example cell (fastcore's
                   rhythm: definition, example; tests hidden or at the end);
- test-ratio:      on an API page, visible test lines more than 10 % of the visible example lines (1 a page);
- tutorial-tests:  visible test lines on a tutorial page (`tutorials/*`), counted in lines;
- tutorial-figure: a tutorial page with no figure (`<img>` in the main content) (1 a page).
The site:
- site-chrome:     a page without a favicon (`<link rel="icon">` to a file of the site) or without a link in the navbar
                   to the repository (settings.ini's `git_url`).
It also prints, per page, the number of API entries and the visible code lines in test cells vs example cells.
"""
from __future__ import annotations
import ast, html, importlib, inspect, io, re, sys, sysconfig, tempfile, textwrap, tokenize
from collections import defaultdict
from pathlib import Path
from urllib.parse import unquote, urlsplit

root = Path(__file__).resolve().parent.parent

# Rules that fail the build. A rule moves here from `PENDING_PAGE_FIXES` once no page breaks it.
ENFORCED = {'progress-bar', 'warning', 'builder-path', 'class-as-def', 'raw-link', 'no-param-table', 'test-first',
            'factory', 'dead-anchor', 'no-source', 'returns-param', 'site-chrome', 'wide-signature',
            'empty-details', 'test-ratio', 'tutorial-tests', 'tutorial-figure', 'wide-output',
            'wide-code'}
# Rules the pages still break: reported, not enforced; a new rule starts here and moves to ENFORCED at 0.
PENDING_PAGE_FIXES = set()
RULES = ['progress-bar', 'warning', 'builder-path', 'factory', 'wide-output', 'wide-signature', 'wide-code',
         'class-as-def', 'raw-link', 'no-param-table', 'empty-details', 'returns-param', 'no-source', 'dead-anchor',
         'test-first', 'test-ratio', 'tutorial-tests', 'tutorial-figure', 'site-chrome']
PER_PAGE = {'test-ratio', 'tutorial-figure'}       # rules counted once a page (the summary says `pages`)
assert set(RULES) == ENFORCED | PENDING_PAGE_FIXES and not ENFORCED & PENDING_PAGE_FIXES

# Monospace characters that fit the page column at a 1400 px wide window. Measured with headless Chromium on a page
# of this site (`chromium --headless --window-size=1400,900`, a 120-character output line, the width of its `<pre>`
# over the width of 10 of its characters): the `<pre>` is 744 px wide, a character 8.92 px (14.875 px SFMono/Liberation
# Mono), so 83.4 characters; a screenshot shows an 83-character line whole and the 84th character cut.
COLUMN = 83
MAX_TEST_RATIO = 0.10

def _between(h: str, start: str, end: str) -> str:
    i = h.find(start)
    if i < 0: return h
    j = h.rfind(end)
    return h[i:j] if j > i else h[i:]

def _strip(h: str) -> str: return html.unescape(re.sub(r'<[^>]+>', '', h))

def text_lines(h: str) -> list:
    "The visible text of an HTML fragment, as lines (scripts, styles and tags dropped, entities decoded)."
    h = re.sub(r'<(script|style)\b.*?</\1>', '', h, flags=re.S | re.I)
    h = re.sub(r'<br\s*/?>|</(p|div|li|tr|h\d|pre)>', '\n', h, flags=re.I)
    return [l for l in _strip(h).split('\n') if l.strip()]

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
    ('factory', re.compile(r'<factory>')),
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

# an entry: `<hr />`, the source link if any, the heading, the signature if any (a property has none)
_ENTRY = re.compile(r'<hr />\s*(?P<src><p><a [^>]*>source</a></p>\s*)?<h(?P<lvl>[2-4]) id="(?P<id>[^"]*)"[^>]*>(?P<title>.*?)</h(?P=lvl)>'
                    r'\s*(?:<div class="code-copy-outer-scaffold">)?(?:<div class="sourceCode"[^>]*><pre[^>]*><code[^>]*>(?P<sig>.*?)</code></pre>)?', re.S)
_LINK = re.compile(r'\[[^\]\n]+\]\([^)\s]+\)')
_RAW_MD_LINK = re.compile(r'\]\([^)\s]+\.(?:ipynb|html|md)(?:#[^)\s]*)?\)')

def _has_params(sig: str) -> bool:
    "Whether a rendered signature (old `def f(a, # comment` style or new) takes parameters besides self."
    i = sig.find('(')
    if i < 0: return False
    body = re.sub(r'#[^\n]*', '', sig[i + 1:])
    body = body[:body.rfind(')')] if ')' in body else body
    return any(p.strip() not in ('', 'self', 'cls', '*', '/') for p in body.split(','))

def is_public(heading: str) -> bool:
    "A public name: its last part neither starts with `_` nor is a dunder."
    last = heading.split('.')[-1]
    return bool(last) and not last.startswith('_')

def table_rows(h: str) -> list:
    "(name, type, default, details) of each row of the first parameter table of an entry's HTML, as text."
    m = re.search(r'<table.*?</table>', h, re.S)
    if not m: return []
    rows = []
    for tr in re.findall(r'<tr>(.*?)</tr>', m.group(0), re.S):
        tds = re.findall(r'<td[^>]*>(.*?)</td>', tr, re.S)
        if len(tds) >= 4: rows.append(tuple(' '.join(_strip(t).split()) for t in tds[:4]))
    return rows

def api_entries(h: str) -> list:
    "dict(heading, sig, html, has_src, start) for each `show_doc` entry of a page (`sig` None for a property)."
    out, ms = [], list(_ENTRY.finditer(h))
    for k, m in enumerate(ms):
        end = ms[k + 1].start() if k + 1 < len(ms) else len(h)
        cell_end = h.find('<div id="cell-', m.end())      # an entry ends with its cell
        if 0 <= cell_end < end: end = cell_end
        heading = _strip(m.group('title')).strip()
        sig = _strip(m.group('sig')) if m.group('sig') is not None else None
        if sig is not None and not re.match(r'\s*(@\w+\s+)*(async\s+def|def|class)\b', sig): continue
        out.append(dict(heading=heading, sig=sig, html=h[m.end():end], has_src=bool(m.group('src')), start=m.start()))
    return out

# ---------------------------------------------------------------- the source, for returns-param
def _norm(s: str) -> str:
    "Text reduced to its letters and digits, for comparing a rendered Details cell with a `# comment`."
    s = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', s)
    return re.sub(r'\W+', '', s.lower())

def page_modules() -> dict:
    "Page path (`analyze/results.html`) -> the modules documented on it, from nbdev's `_modidx`."
    try: from fasterai._modidx import d
    except ImportError: return {}
    out = defaultdict(set)
    for mod, syms in d.get('syms', {}).items():
        for v in syms.values(): out[v[0].split('#')[0]].add(mod)
    return out

def _resolve(mods: set, heading: str):
    for mod in sorted(mods):
        try: obj = importlib.import_module(mod)
        except Exception: continue
        for part in heading.split('.'):
            obj = getattr(obj, part, None)
            if obj is None: break
        if obj is not None: return obj
    return None

def param_comments(obj) -> set:
    "The `# comment`s written on the lines of a function's parameters (`self` and `cls` too), normalised."
    f = inspect.unwrap(obj.fget if isinstance(obj, property) else obj)
    if not inspect.isfunction(f): return set()
    try: src = textwrap.dedent(inspect.getsource(f))
    except (OSError, TypeError): return set()
    try: tree = ast.parse(src)
    except SyntaxError: return set()
    fn = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None: return set()
    a = fn.args
    lines = {p.end_lineno for p in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]}
    out = set()
    try:
        for t in tokenize.generate_tokens(io.StringIO(src).readline):
            if t.type == tokenize.COMMENT and t.start[0] in lines: out.add(_norm(t.string.lstrip('#')))
            if t.start[0] > fn.body[0].lineno: break
    except (tokenize.TokenError, IndentationError): pass
    return out - {''}

# ---------------------------------------------------------------- visible code cells
_CELL = re.compile(r'<div id="cell-\d+" class="cell[^"]*">')
_CODE = re.compile(r'<pre class="[^"]*\bcell-code\b[^"]*"><code[^>]*>(.*?)</code></pre>', re.S)
_TEST = re.compile(r'^\s*(?:test_\w*\(|assert\b|with\s+ExceptionExpected\b)', re.M)
_OUT_PRE = re.compile(r'<div class="cell-output[^"]*">\s*<pre(?:\s[^>]*)?>(?:<code[^>]*>)?(.*?)(?:</code>)?</pre>', re.S)

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
        if m: out.append((_strip(m.group(1)), a))
    return out

# ---------------------------------------------------------------- links
_IDS = re.compile(r'\bid="([^"]*)"')
_HREF = re.compile(r'<a\s[^>]*?href="([^"]*)"')

class Site:
    "The pages of a site, and the ids on each (read once)."
    def __init__(self, site: Path):
        self.site, self._ids = site, {}
    def ids(self, page: Path):
        page = page.resolve()
        if page not in self._ids:
            self._ids[page] = set(html.unescape(i) for i in _IDS.findall(page.read_text(encoding='utf-8'))) \
                if page.is_file() else None
        return self._ids[page]

def dead_links(h: str, page: Path, site: Site) -> list:
    "Relative links of a page whose target page or `#anchor` does not exist."
    out = []
    for href in (html.unescape(x) for x in _HREF.findall(h)):
        u = urlsplit(href)
        if u.scheme or u.netloc or href.startswith('//') or (not u.path and not u.fragment): continue
        target = (page.parent / unquote(u.path)) if u.path else page
        if target.is_dir(): target = target / 'index.html'
        if target.suffix != '.html': continue              # a figure, a stylesheet: not an anchor
        ids = site.ids(target)
        if ids is None: out.append(f'{href} (no such page)')
        elif u.fragment and unquote(u.fragment) not in ids: out.append(href)
    return out

def repo_url() -> str:
    "The repository, from settings.ini: `git_url`, else https://github.com/<user>/<repo>."
    import configparser
    c = configparser.ConfigParser(); c.read(root / 'settings.ini')
    d = c['DEFAULT']
    return (d.get('git_url') or f"https://github.com/{d.get('user')}/{d.get('repo') or d.get('lib_name')}").rstrip('/')

# ---------------------------------------------------------------- the check
def check_page(page: Path, site: Site, classes: set, mods: set) -> tuple:
    "({rule: [what, ...]} of a page, visible test lines, visible example lines, API entries)."
    rel = page.relative_to(site.site).as_posix()
    h = page.read_text(encoding='utf-8')
    main = _between(h, '<main', '</main>')
    fails = defaultdict(list)
    for line in text_lines(main):
        for cat, rx in _TEXT_RULES:
            if rx.search(line): fails[cat].append(line.strip()[:160])
    if '<progress' in main: fails['progress-bar'].append('an HTML <progress> bar')
    prose = re.sub(r'<(pre|code)\b.*?</\1>', '', main, flags=re.S | re.I)   # a markdown link shown raw in the text (not in code)
    for line in text_lines(prose):
        if (m := _RAW_MD_LINK.search(line)): fails['raw-link'].append(f'in the text: {m.group(0)[:100]}')
    for m in _OUT_PRE.finditer(main):
        for line in _strip(m.group(1)).split('\n'):
            if len(line.rstrip()) > COLUMN: fails['wide-output'].append(f'{len(line.rstrip())} chars: {line.strip()[:90]}')
    entries = api_entries(main)
    for e in entries:
        heading, sig = e['heading'], e['sig']
        if is_public(heading) and not e['has_src']: fails['no-source'].append(heading)
        if sig is None: continue
        for line in sig.split('\n'):
            if len(line.rstrip()) > COLUMN: fails['wide-signature'].append(f'{heading}: {len(line.rstrip())} chars: {line.strip()[:80]}')
        first = sig.strip().split('\n')[0]
        if heading.split('.')[-1] in classes and '.' not in heading and re.match(r'\s*(async\s+)?def\b', sig):
            fails['class-as-def'].append(f'{heading}: {first[:100]}')
        if _LINK.search(sig): fails['raw-link'].append(f'{heading}: {_LINK.search(sig).group(0)[:100]}')
        rows = table_rows(e['html'])
        if _has_params(sig) and not rows: fails['no-param-table'].append(heading)
        params = [r for r in rows if r[0] != 'Returns']
        if is_public(heading):
            fails['empty-details'] += [f'{heading}({r[0]})' for r in params if not r[3]]
        ret = next((r for r in rows if r[0] == 'Returns'), None)
        if ret and ret[3]:
            same = [r[0] for r in params if r[3] and _norm(r[3]) == _norm(ret[3])]
            obj = _resolve(mods, heading) if not same else None
            if same or (obj is not None and _norm(ret[3]) in param_comments(obj)):
                fails['returns-param'].append(f'{heading}: Returns reads "{ret[3][:70]}"' + (f' (= {same[0]})' if same else ''))
    fails['dead-anchor'] += dead_links(_between(h, '<body', '</body>'), page, site)
    cells = [(src, o, _kind(src)) for src, o in code_cells(main)]
    for src, _, _ in cells:
        for line in src.split('\n'):
            if len(line.rstrip()) > COLUMN: fails['wide-code'].append(f'{len(line.rstrip())} chars: {line.strip()[:90]}')
    n_test = sum(len(src.strip('\n').split('\n')) for src, _, k in cells if k == 'test')
    n_ex = sum(len(src.strip('\n').split('\n')) for src, _, k in cells if k == 'example')
    tutorial = rel.startswith('tutorials/')
    if entries and not tutorial:
        first_ex = next((o for src, o, k in cells if k == 'example'), None)
        early = [src for src, o, k in cells if k == 'test' and (first_ex is None or o < first_ex)]
        if early: fails['test-first'].append(f'{len(early)} visible test cell(s) before the first example, '
                                             f'the first: {early[0].strip().splitlines()[0][:90]}')
        if n_test > MAX_TEST_RATIO * n_ex:
            fails['test-ratio'].append(f'{n_test} visible test lines vs {n_ex} example lines '
                                       f'({n_test / max(n_ex, 1):.0%} > {MAX_TEST_RATIO:.0%})')
    if tutorial:
        if n_test: fails['tutorial-tests'] += [f'{len(src.strip().splitlines())} lines: {src.strip().splitlines()[0][:90]}'
                                               for src, _, k in cells if k == 'test']
        if '<img' not in main: fails['tutorial-figure'].append('no <img> in the main content')
    head = _between(h, '<head', '</head>')
    nav = h[h.find('<nav class="navbar'):h.find('</nav>', h.find('<nav class="navbar'))] if '<nav class="navbar' in h else ''
    icon = re.search(r'<link rel="icon" href="([^"]+)"', head)
    if not icon: fails['site-chrome'].append('no favicon (<link rel="icon">)')
    elif not urlsplit(icon.group(1)).scheme and not (page.parent / unquote(icon.group(1))).is_file():
        fails['site-chrome'].append(f'favicon {icon.group(1)} is not in the site')
    if repo_url() not in [x.rstrip('/') for x in _HREF.findall(nav)]:
        fails['site-chrome'].append(f'no link to the repository ({repo_url()}, settings.ini git_url) in the navbar')
    return fails, n_test, n_ex, len(entries)

def count(rule: str, items: list) -> int:
    "A rule's count on a page: 1 a failing page for `PER_PAGE` rules, lines for tutorial-tests, else one an item."
    if rule in PER_PAGE: return min(len(items), 1)
    if rule == 'tutorial-tests': return sum(int(w.split()[0]) for w in items)    # items read `N lines: ...`
    return len(items)

def write_counts(path: Path, site: Path, rows: list) -> None:
    "One line a page: the count of every rule there, and the visible test and example lines."
    short = {r: r for r in RULES}
    with open(path, 'w') as f:
        f.write(f'# docs-check counts on {site} (rules in ENFORCED fail the build; per-page rules count 1 a page)\n')
        f.write(f"# enforced: {' '.join(r for r in RULES if r in ENFORCED)}\n")
        f.write(f"# reported, not enforced: {' '.join(r for r in RULES if r in PENDING_PAGE_FIXES)}\n")
        f.write(' '.join(['page', 'api', 'test_lines', 'example_lines'] + [short[r] for r in RULES]) + '\n')
        for rel, fails, n_test, n_ex, n_api in rows:
            f.write(' '.join([rel, str(n_api), str(n_test), str(n_ex)] + [str(count(r, fails.get(r, []))) for r in RULES]) + '\n')
        tot = {r: sum(count(r, fs.get(r, [])) for _, fs, *_ in rows) for r in RULES}
        f.write(' '.join(['TOTAL', '-', '-', '-'] + [str(tot[r]) for r in RULES]) + '\n')
        f.write('\n# what each count is, page by page\n')
        for rel, fails, *_ in rows:
            for r in RULES:
                for what in fails.get(r, []): f.write(f'{r}\t{rel}\t{what}\n')

def main(site: Path, counts: Path | None = None) -> int:
    pages = sorted(p for p in site.rglob('*.html') if 'site_libs' not in p.parts)
    if not pages: print(f'docs check: no pages under {site}'); return 1
    sys.path.insert(0, str(root))
    classes, pmods, s = class_names(), page_modules(), Site(site)
    rows = []
    print(f"{'page':42} {'api':>4} {'test lines':>11} {'example lines':>14}")
    for p in pages:
        rel = p.relative_to(site).as_posix()
        fails, n_test, n_ex, n_api = check_page(p, s, classes, pmods.get(rel, set()))
        bad = sorted(r for r in fails if fails[r] and r in ENFORCED)
        print(f'{rel:42} {n_api:>4} {n_test:>11} {n_ex:>14}' + (f"   FAIL ({', '.join(bad)})" if bad else ''))
        rows.append((rel, fails, n_test, n_ex, n_api))
    failing = set()
    for rule in RULES:
        items = [(rel, what) for rel, fails, *_ in rows for what in fails.get(rule, [])]
        if not items: continue
        n = sum(count(rule, fails.get(rule, [])) for _, fails, *_ in rows)
        pages_hit = list(dict.fromkeys(rel for rel, _ in items))
        tag = 'FAIL' if rule in ENFORCED else 'reported, not enforced'
        if rule in ENFORCED: failing.add(rule)
        print(f'\n{rule}: {n} on {len(pages_hit)} page(s) ({tag})')
        shown = defaultdict(int)
        for rel, what in items:
            shown[rel] += 1
            if shown[rel] <= 5: print(f'  {rel}: {what}')
        for rel, k in shown.items():
            if k > 5: print(f'  {rel}: ... and {k - 5} more')
    tot = {r: sum(count(r, fails.get(r, [])) for _, fails, *_ in rows) for r in RULES}
    print('\ndocs-check: rule counts: ' + ' '.join(f"{r}={tot[r]}{' pages' if r in PER_PAGE else ''}" for r in RULES))
    print(f"docs-check: enforced: {' '.join(r for r in RULES if r in ENFORCED)}")
    print(f"docs-check: reported, not enforced (pending page fixes): "
          + ' '.join(f'{r}={tot[r]}' for r in RULES if r in PENDING_PAGE_FIXES))
    if counts: write_counts(counts, site, rows); print(f'docs-check: counts per page in {counts}')
    n_bad = sum(1 for _, fails, *_ in rows if any(fails.get(r) for r in ENFORCED))
    print(f"docs check: {len(pages)} pages, {n_bad} failing" + (f" ({', '.join(sorted(failing))})" if failing else ''))
    return 1 if failing else 0

if __name__ == '__main__':
    args = sys.argv[1:]
    if '--enforce-all' in args:                         # try the pending rules as if enforced (before moving them)
        args.remove('--enforce-all'); ENFORCED |= PENDING_PAGE_FIXES; PENDING_PAGE_FIXES.clear()
    counts = None
    if '--counts' in args:
        i = args.index('--counts'); counts = Path(args[i + 1]); del args[i:i + 2]
    sys.exit(main(Path(args[0]) if args else root / '_proc' / '_docs', counts))
