"""Checks of the rendered docs site (`python .ci/docs_check.py [_proc/_docs] [--counts FILE] [--enforce-all]`, run by `.ci/docs`).

Reads every HTML page and counts, per page, what breaks each rule below (the text rules read the main content
only: navbar and sidebar are the same everywhere). Every rule is in `ENFORCED`: it fails the build when its count is
not 0 on some page, except on the pages `PENDING_PAGE_FIXES[rule]` lists (a temporary per-page allowlist: reported
there, "pending", until the page is fixed). `--counts FILE` writes the count of every rule on every page to FILE;
`--enforce-all` ignores the allowlist. `.ci/docs_check_selftest.py` plants one defect per rule in a copy of a page and
shows that the check fails on it.

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
                   miss its end), in a code cell or in a code block of the prose (an install line).
- wide-table:      a table (a DataFrame output, a markdown table) wider than the 749 px column at 1400 px, estimated
                   from its HTML (`table_width`, calibrated with Chromium), or a text output that pandas wrapped
                   with a trailing `\` (its last columns land in a second block).
- small-figure:    a figure (a PNG `<img>`, inline or a file) so wide in inches that the column shrinks its 10-point
                   text (matplotlib's default, tick labels included) under 8 px: the figure's inches from its PNG
                   (width over the dpi of its pHYs chunk), shown at most 749 px (or its `width=`).
- missing-figure:  a visible code cell whose last line is a plotting call (`r.plot();`, `s.plot_heatmap()`,
                   `plt.show()`) and whose cell shows no figure (`<img>`): the notebook was saved without the cell's
                   output (a cell added or edited and never run), so the figure the prose announces is missing.
The prose:
- dangling-caption: a paragraph ending in `:` followed by nothing it introduces (a paragraph, a heading, the end of
                   its section: the cell it announced is hidden), or a heading whose section is empty;
- makers-words:    written for the makers, not the users: a private name of the package (`_validate`) in the prose or
                   an API entry's text, "hidden test/cell", `.ci/`, a commit hash, a note to ourselves (TODO,
                   "not ours to fix"), and anywhere on the page (outputs too) a bench's HOLDS / DOES NOT HOLD.
API entries (the `show_doc` entries of a page; public = a name that neither starts with `_` nor is a dunder):
- class-as-def:    a class or dataclass whose API signature starts with `def`;
- raw-link:        a markdown link `[text](url)` shown raw inside an API signature, or in a page's text (nbdev links
                  backticked names inside a link's own text; the builder repairs those);
- dash-flag:       a command-line flag whose `--` the site's smart punctuation turned into a dash: an en or em dash
                   right after a space, a bracket or a quote and right before an option's name (`with –budget`),
                   outside code; a shell refuses it. A dash between words (`a — b`, `2–3`) does not count;
- no-param-table:  an API entry whose signature has parameters but no parameter table under it;
- empty-details:   a row of a public entry's parameter table (Type | Default | Details) with no Details;
- returns-param:   a Returns row whose Details is a parameter's text: the `# comment` of a parameter (read from
                   the source) or the Details of a parameter row (a docment after the last parameter, on the
                   `) -> X:` line, used to become the Returns description);
- no-source:       a public entry (function, class, method, property) with no `source` link.
- bad-source:      a `source` link that does not name a file of the repository: not `<git_url>/blob/<branch>/<path>#L<n>`,
                   no such file in the checkout (`<ipython-input-1-…>`), or line n not a `def`/`class` line of it.
Links:
- dead-anchor:     a relative link `page.html#anchor` or `#anchor` whose page has no element with that `id`
                   (or a relative link to a page that does not exist).
Examples and tests (visible code cells: fastcore `test_*` calls, `assert` or `ExceptionExpected` make a test
cell; import-only cells count as neither test nor example):
- test-first:      on an API page, a visible test cell before the first visible example cell (fastcore's
                   rhythm: definition, example; tests hidden or at the end);
- test-ratio:      on an API page, visible test lines more than 10 % of the visible example lines (1 a page);
- late-example:    on an API page (not benchmarks/, demo/), the first example cell's first lines are not on the first
                   screen (900 px at 1400 px wide), its top estimated from the HTML above it (`top_estimate`,
                   calibrated with Chromium) (1 a page);
- unimported-name: on an API page (not benchmarks/, demo/), a name the first example (its first visible cell, with
                   the code cells right after it) reads that no visible code cell up to there imports or defines
                   (builtins aside): the example does not run when pasted (1 a page);
- no-alt:          a figure (`<img>`) without alt text;
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
            'wide-code', 'bad-source', 'dangling-caption', 'makers-words', 'wide-table', 'late-example', 'small-figure',
            'missing-figure', 'dash-flag', 'unimported-name', 'no-alt'}
# TEMPORARY, per page: pages that still break an enforced rule, reported there and enforced everywhere else (a page
# not listed fails the build). Each entry is a page its owner fixes after the merge; then it leaves the list, and an
# empty list leaves only the rule. `--enforce-all` ignores the list.
PENDING_PAGE_FIXES: dict = {
    # empty: every page passes every enforced rule (2026-12-02)
}
RULES = ['progress-bar', 'warning', 'builder-path', 'factory', 'wide-output', 'wide-signature', 'wide-code',
         'wide-table', 'small-figure', 'missing-figure', 'no-alt', 'class-as-def', 'raw-link', 'dash-flag', 'no-param-table', 'empty-details', 'returns-param',
         'no-source', 'bad-source', 'dead-anchor', 'test-first', 'test-ratio', 'late-example', 'unimported-name', 'tutorial-tests',
         'tutorial-figure', 'dangling-caption', 'makers-words', 'site-chrome']
PER_PAGE = {'test-ratio', 'tutorial-figure', 'late-example', 'unimported-name'}      # rules counted once a page (the summary says `pages`)
assert set(RULES) == ENFORCED and set(PENDING_PAGE_FIXES) <= ENFORCED

def enforced(rule: str, page: str) -> bool:
    "Whether `rule` fails the build on `page` (a page of `PENDING_PAGE_FIXES[rule]` is only reported)."
    return rule in ENFORCED and page not in PENDING_PAGE_FIXES.get(rule, ())

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

_PRE = re.compile(r'<pre\b[^>]*>(.*?)</pre>', re.S)

def prose_code(h: str) -> list:
    "The text of every code block of the prose (a markdown code block): not a cell's code, output or API signature."
    taken = [m.span() for rx in (_OUT_PRE, _CODE) for m in rx.finditer(h)]
    taken += [m.span('sig') for m in _ENTRY.finditer(h) if m.group('sig') is not None]
    inside = lambda m: any(a <= m.start(1) and m.end(1) <= b for a, b in taken)
    return [_strip(re.sub(r'</?code[^>]*>', '', m.group(1))) for m in _PRE.finditer(h) if not inside(m)]

def _code_blocks(h: str):
    "(match of its code, cell start, cell end) of every visible input code cell."
    starts = [m.start() for m in _CELL.finditer(h)] + [len(h)]
    for a, b in zip(starts, starts[1:]):
        m = _CODE.search(h, a, b)
        if m: yield m, a, b

def code_cells(h: str) -> list:
    "(source, offset) of every visible input code cell."
    return [(_strip(m.group(1)), a) for m, a, _ in _code_blocks(h)]

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

# ---------------------------------------------------------------- source links
_SRC_LINK = re.compile(r'<a href="([^"]*)"[^>]*>source</a>')
_DEF_LINE = re.compile(r'\s*(?:async\s+def|def|class)\s+\w+')

def repo_branch() -> str:
    import configparser
    c = configparser.ConfigParser(); c.read(root / 'settings.ini')
    return c['DEFAULT'].get('branch', 'main')

def bad_sources(h: str, repo: Path = root) -> list:
    """`source` links that do not name a file of the repository: not `<git_url>/blob/<branch>/<path>#L<n>`, a path
    that is no file of the checkout (`<ipython-input-1-…>`: a notebook cell the builder ran), or a line that is not a
    `def`/`class` line of that file."""
    base, out, files = f'{repo_url()}/blob/{repo_branch()}/', [], {}
    for href in (html.unescape(x) for x in _SRC_LINK.findall(h)):
        if not href.startswith(base): out.append(f'{href[:100]} (not {base}…)'); continue
        path, _, frag = unquote(href[len(base):]).partition('#')
        f = repo / path
        if '..' in Path(path).parts or not f.is_file(): out.append(f'{path[:80]} (no such file in the repository)'); continue
        if path not in files: files[path] = f.read_text(encoding='utf-8', errors='replace').split('\n')
        n = int(frag[1:]) if re.fullmatch(r'L\d+', frag) else 0
        if not 1 <= n <= len(files[path]) or not _DEF_LINE.match(files[path][n - 1]):
            out.append(f'{path}#{frag} (not a def/class line of the file)')
    return out

# ---------------------------------------------------------------- prose: captions, makers' words
# `--flag` set as text: smart punctuation makes it `–flag` (en dash). Only a dash that starts a word (after a space,
# a bracket, a quote, `=`, `/`) and is followed by an option's name: `word — word` and `2–3` do not match.
_DASH_FLAG = re.compile(r'(?:^|(?<=[\s(\[{,;:/"\'“‘=]))[–—][a-z][a-z0-9]*(?:[-_][a-z0-9]+)*')

def prose_html(main: str) -> str:
    """The page's own text and its API entries' docstrings and tables: code blocks and the outputs of code cells
    (printed text, DataFrames, figures) removed, show_doc's markdown output kept."""
    h = re.sub(r'<pre\b.*?</pre>', '', main, flags=re.S | re.I)
    h = re.sub(r'<div class="cell-output (?![^"]*cell-output-markdown)[^"]*">.*?</div>', '', h, flags=re.S)
    return re.sub(r'<(script|style|table class="dataframe)\b.*?</(script|style|table)>', '', h, flags=re.S | re.I)

_CAPTION = re.compile(r'<p>((?:(?!</?p>).)*?):\s*</p>\s*(?P<next><(?:p|h\d|section|/section|/main|hr|footer)\b|$)', re.S)
_EMPTY_SECTION = re.compile(r'<h(?P<l>[2-4])\b[^>]*>(?P<t>.*?)</h(?P=l)>\s*(?:</section>|<section\b[^>]*class="level(?P<n>\d)"|$)', re.S)

def _one_line(h: str) -> str: return ' '.join(_strip(h).split())

def dangling_captions(main: str) -> list:
    """Text that announces what follows and is followed by nothing: a paragraph ending in `:` whose next element is
    prose, a heading or the end of its section (the cell it introduced is hidden), and a heading whose section is
    empty (a `Tests` section of hidden cells)."""
    body = main[main.find('</header>') + 9:] if '</header>' in main else main
    out = [f'"…{_one_line(m.group(1))[-70:]}:" then {m.group("next") or "the end of the page"}' for m in _CAPTION.finditer(body)]
    for m in _EMPTY_SECTION.finditer(body):
        if m.group('n') is None or int(m.group('n')) <= int(m.group('l')):
            out.append(f'section "{_strip(m.group("t")).strip()[:70]}" is empty')
    return out

def private_names() -> set:
    """Private names of the package (`_validate`, `_Request`): module-level and class-level definitions and
    assignments of `fasterai/` whose name starts with one `_` (not dunders, not `_repr_html_`-style protocols)."""
    out = set()
    for f in (root / 'fasterai').rglob('*.py'):
        if f.name == '_modidx.py': continue
        for n in ast.walk(ast.parse(f.read_text(encoding='utf-8'))):
            names = [n.name] if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else \
                    [t.id for t in n.targets if isinstance(t, ast.Name)] if isinstance(n, ast.Assign) else []
            out |= {x for x in names if x.startswith('_') and not x.startswith('__') and not x.endswith('_') and len(x) > 2}
    return out

# words written for the makers of the package, not its users: in the page's prose ...
MAKERS_PROSE = [
    ('a hidden test or cell', re.compile(r'\bhidden (?:tests?|cells?)\b|\(hidden\)', re.I)),
    ('the CI folder', re.compile(r'(?<![\w/])\.ci/')),
    ('a commit hash', re.compile(r'\bcommit\s+[0-9a-f]{7,40}\b|(?<![\w/#.-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b(?![\w.-])')),
    ('a note to ourselves', re.compile(r'\bnot ours to fix\b|\bTODO\b|\bFIXME\b|\bXXX\b')),
    ('the build machine or the notebook', re.compile(r'\bwhere this page was built\b|\bno downloads? (?:is|are) allowed\b|'
                                                  r'\bnothing may be downloaded\b|\bthe notebook (?:imports|runs|saves)\b|'
                                                  r'\bthis notebook\b|\bits cells do nothing\b|\barchitecture check\b|'
                                                  r'\bearlier runs?\b|\bnot re-(?:run|measured)\b', re.I)),
]
# ... and anywhere on the page, outputs included (a bench's pass/fail markers)
MAKERS_ANYWHERE = [('a bench assertion marker', re.compile(r'\bHOLDS\b|\bDOES NOT HOLD\b'))]

def makers_words(main: str, private: set) -> list:
    "Private names of the package and the makers' words (`MAKERS_PROSE`, `MAKERS_ANYWHERE`) on a page."
    out, prose = [], prose_html(main)
    # a private name in prose: in inline code or plain text, not as part of a longer name (`x._foo` counts)
    names = sorted(set(re.findall(r'(?<![\w])_[A-Za-z]\w+', _strip(prose))) & private)
    out += [f'private name {n}' for n in names]
    for line in text_lines(prose):
        for what, rx in MAKERS_PROSE:
            if (m := rx.search(line)): out.append(f'{what}: "{m.group(0)}" in "{line.strip()[:90]}"')
    for line in text_lines(main):
        for what, rx in MAKERS_ANYWHERE:
            if (m := rx.search(line)): out.append(f'{what}: "{m.group(0)}" in "{line.strip()[:90]}"')
    return out

# ---------------------------------------------------------------- widths of output tables, pandas' wrapped text
# A browser cannot run in CI, so the width of a table is estimated from its HTML. Calibrated once with headless
# Chromium (`--window-size=1400,900`, a script that reads `getBoundingClientRect()` of every table in `<main>`; 83 pages,
# DataFrames and the prose/markdown tables): the main column is 749 px wide; a DataFrame (nowrap, 0.85 rem, 0.75 rem
# padding each side, styles.css) is `DF_PX_CHAR` px a character of the longest cell of each column plus `DF_PX_COL` a
# column (least squares over the measured tables: within ±50 px, the largest error at 1,900 px). A markdown
# table takes the column's width and wraps its words: it is wider only when its longest words (and `code`, which does
# not wrap) do not fit, estimated the same way at `MD_PX_CHAR` a character (0.875 rem; no markdown table of the site
# measured wider than the column, and with this figure none is estimated wider: the widest at 735 px).
COLUMN_PX = 749
DF_PX_CHAR, DF_PX_COL, DF_PX_0 = 6.33, 39.1, -14.2
MD_PX_CHAR, MD_PX_COL = 6.5, 19.2

def _cells(table: str) -> list:
    "The rows of an HTML table, each a list of (text, nowrap segments) per cell."
    rows = []
    for tr in re.findall(r'<tr\b.*?</tr>', table, re.S):
        row = []
        for c in re.findall(r'<t[hd]\b[^>]*>(.*?)</t[hd]>', tr, re.S):
            codes = [' '.join(_strip(x).split()) for x in re.findall(r'<code\b[^>]*>(.*?)</code>', c, re.S)]
            words = ' '.join(_strip(re.sub(r'<code\b.*?</code>', ' ', c, flags=re.S)).split()).split()
            row.append((' '.join(_strip(c).split()), codes + words))
        rows.append(row)
    return rows

def table_width(table: str) -> float:
    "The estimated width in px of an HTML table at 1400 px (see `COLUMN_PX`): a DataFrame, else a markdown table."
    rows = _cells(table)
    ncol = max((len(r) for r in rows), default=0)
    if 'class="dataframe' in table[:80]:
        w = [max((len(r[i][0]) for r in rows if i < len(r)), default=0) for i in range(ncol)]
        return DF_PX_0 + DF_PX_CHAR * sum(w) + DF_PX_COL * ncol
    w = [max((len(x) for r in rows if i < len(r) for x in r[i][1]), default=0) for i in range(ncol)]
    return MD_PX_CHAR * sum(w) + MD_PX_COL * ncol

_WRAPPED = re.compile(r'\S\s+\\$')

def wide_tables(main: str) -> list:
    """Tables wider than the column (they scroll sideways: the last columns are not seen), and text outputs that pandas
    wrapped with a trailing `\` (its columns continue in a second block, under the first)."""
    out = []
    for t in re.findall(r'<table\b.*?</table>', main, re.S):
        w = table_width(t)
        if w > COLUMN_PX:
            head = ' | '.join(x for x, _ in (_cells(t) or [[]])[0] if x)[:60]
            out.append(f'table ~{w:.0f} px > {COLUMN_PX} px: {head}')
    for m in _OUT_PRE.finditer(main):
        lines = _strip(m.group(1)).split('\n')
        if any(_WRAPPED.search(l) for l in lines):
            out.append(f"text wrapped by pandas (a line ending in '\\'): {lines[0].strip()[:70]}")
    return out

# ---------------------------------------------------------------- where the first example is
# The top of a page's first example, in px at 1400 x 900, estimated from the HTML above it (a browser cannot run in
# CI). Calibrated once with headless Chromium (`getBoundingClientRect().top` of the first example cell of the 58 API
# pages, least squares over what precedes it): the title block, then per paragraph and per line of it (wrapped at
# `TOP_CPL` characters), per list item and line, per heading, per line of code (signatures included), per code block,
# per table row. RMS error 54 px, largest 190 px (a page of long lists).
# ---------------------------------------------------------------- figures
# A figure is drawn in inches (matplotlib: 10 pt text by default, tick labels included) and saved at some dpi (its
# PNG's pHYs chunk; these docs save at 200); the page shows it at most COLUMN_PX wide. Its 10-point text is then
# 10 / 72 * shown px / figure inches tall: a 10-inch figure in the column gives 10.4 px, the 21-inch row of seven
# panels that core/schedule had gave 5 px. Below MIN_FIGURE_TEXT_PX the labels are not read without zooming.
MIN_FIGURE_TEXT_PX = 8.0

def png_size(data: bytes) -> tuple | None:
    "(width px, height px, dpi) of a PNG's header (dpi from its pHYs chunk, else matplotlib's 100), or None."
    import struct
    if data[:8] != b'\x89PNG\r\n\x1a\n': return None
    w, h = struct.unpack('>II', data[16:24])
    dpi, i = 100.0, 8
    while i + 8 <= len(data):
        n, kind = struct.unpack('>I', data[i:i + 4])[0], data[i + 4:i + 8]
        if kind == b'pHYs' and n == 9:
            x, _, unit = struct.unpack('>IIB', data[i + 8:i + 17])
            if unit == 1 and x: dpi = x * 0.0254                      # pixels per metre
        if kind == b'IDAT': break
        i += 12 + n
    return w, h, dpi

def figure_text_px(width: int, dpi: float, shown_max: float | None = None) -> float:
    "Height in screen px of the figure's 10-point text once the page scales it to the column (or to its width attr)."
    shown = min(width, COLUMN_PX, shown_max or width)
    return 10 / 72 * shown / (width / dpi)

_PLOT_END = re.compile(r'(?:\.|\b)plot\w*\(.*\)\s*;?\s*$|\bplt\.show\(\)\s*;?\s*$')

def missing_figures(main: str) -> list:
    "The last line of each visible code cell that ends in a plotting call and shows no figure (no `<img>` in its cell)."
    out = []
    for m, _, b in _code_blocks(main):
        lines = [l for l in _strip(m.group(1)).split('\n') if l.strip() and not l.lstrip().startswith('#')]
        last = lines[-1].strip() if lines else ''
        if _PLOT_END.search(last) and not last.startswith('return') and '<img' not in main[m.end():b]:
            out.append(f'no figure under: {last[:90]}')
    return out

def small_figures(main: str, page: Path) -> list:
    "Figures (`<img>` PNGs, inline or files) whose 10-point text is under MIN_FIGURE_TEXT_PX tall in the column."
    import base64
    out = []
    for m in re.finditer(r'<img\b[^>]*>', main):
        tag = m.group(0)
        src = re.search(r'src="([^"]+)"', tag)
        if not src: continue
        src = src.group(1)
        if src.startswith('data:image/png;base64,'):
            data = base64.b64decode(src[len('data:image/png;base64,'):][:4096] + '==')
        elif src.lower().endswith('.png') and not urlsplit(src).scheme and (page.parent / unquote(src)).is_file():
            data = (page.parent / unquote(src)).read_bytes()[:4096]
        else: continue
        size = png_size(data)
        if not size: continue
        attr = re.search(r'\bwidth="?(\d+)', tag)
        px = figure_text_px(size[0], size[2], float(attr.group(1)) if attr else None)
        if px < MIN_FIGURE_TEXT_PX:
            out.append(f'a {size[0] / size[2]:.1f}-inch wide figure ({size[0]} px at {size[2]:.0f} dpi) shown at most '
                       f'{COLUMN_PX} px: its 10-pt text is {px:.1f} px tall')
    return out

FIRST_SCREEN_PX = 900                 # the window's height: what a reader sees before scrolling
EXAMPLE_VISIBLE_PX = 60               # the example's first lines (the top of its cell plus 3 lines) must be on it
TOP_CPL = 95
TOP_PX = dict(one=174.3, p_lines=27.5, p=16.8, li_lines=23.7, li=11.7, h2=61.2, h3=34.3, pre_lines=19.4, pre=23.8,
              tr=53.2)

def top_estimate(before: str) -> float:
    "The estimated top (px) of what follows the main content's HTML `before` (from `<main` on), at 1400 x 900."
    f = dict(one=1, h2=len(re.findall(r'<h2\b', before)), h3=len(re.findall(r'<h[34]\b', before)),
             pre=len(re.findall(r'<pre\b', before)), tr=len(re.findall(r'<tr\b', before)))
    for tag, cpl in (('p', TOP_CPL), ('li', TOP_CPL - 5)):
        items = [' '.join(_strip(x).split()) for x in re.findall(rf'<{tag}\b[^>]*>(.*?)</{tag}>', before, re.S)]
        f[tag], f[tag + '_lines'] = len(items), sum(max(1, -(-len(t) // cpl)) for t in items)
    f['pre_lines'] = sum(len(_strip(x).strip('\n').split('\n')) for x in re.findall(r'<pre\b[^>]*>(.*?)</pre>', before, re.S))
    return sum(TOP_PX[k] * v for k, v in f.items())

def late_example(main: str, cells: list) -> list:
    "An API page whose first example (a visible code cell that is neither a test nor imports) is below the first screen."
    first = next((o for src, o, k in cells if k == 'example'), None)
    if first is None: return ['no example on the page']
    top = top_estimate(main[:first])
    if top + EXAMPLE_VISIBLE_PX <= FIRST_SCREEN_PX: return []
    return [f'first example at ~{top:.0f} px (the first screen ends at {FIRST_SCREEN_PX} px): '
            f'{next(src for src, o, k in cells if o == first).strip().splitlines()[0][:70]}']

# ---------------------------------------------------------------- the first example runs when pasted
def parse_cell(src: str):
    "The AST of a cell's code, its shell (`!`) and magic (`%`) lines left out; None if it does not parse."
    try: return ast.parse('\n'.join(l for l in src.splitlines() if not l.lstrip().startswith(('!', '%'))))
    except SyntaxError: return None

def bound_and_used(tree) -> tuple:
    "(names a cell binds, names it reads): assignments, defs, classes, imports, arguments and `except ... as` bind."
    bound, used = set(), set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name): (used if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)): bound.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)): bound |= {(a.asname or a.name).split('.')[0] for a in n.names}
        elif isinstance(n, ast.arg): bound.add(n.arg)
        elif isinstance(n, ast.ExceptHandler) and n.name: bound.add(n.name)
    return bound, used

def read_before_bound(srcs: list, known: set) -> tuple:
    """`(names, bound)`: the names the cells `srcs` (in page order) read before any of them binds them and not in
    `known`, in the order first read; and `known` with every name the cells bind."""
    bound, free = set(known), []
    for s in srcs:
        tree = parse_cell(s)
        if tree is None: continue
        b, u = bound_and_used(tree)
        free += [n for n in sorted(u - bound - b) if n not in free]
        bound |= b
    return free, bound

def _builtin_names() -> set:
    "Python's builtins and IPython's `display` and `get_ipython`: names a pasted cell never needs to import."
    import builtins
    return set(dir(builtins)) | {'display', 'get_ipython'}

def unbound_names(srcs: list) -> list:
    """Names the cells `srcs` (in page order) read before any of them binds them, nor Python's builtins (nor IPython's
    `display`): a cell pasted before the one that imports a name fails on it."""
    return sorted(read_before_bound(srcs, _builtin_names())[0])

_BLOCK_END = re.compile(r'<h[1-6]\b|<p>(?!\s*<img)|class="[^"]*cell-output-markdown')   # prose, a heading or an API entry

def unimported_names(cells: list, main: str) -> list:
    """The names the first example of `cells` ((source, offset, kind) in page order) reads that nothing visible binds:
    the example is its first cell, with the code cells right after it (no prose, heading or entry between)."""
    i = next((i for i, (_, _, k) in enumerate(cells) if k == 'example'), None)
    if i is None: return []
    j = i
    while j + 1 < len(cells) and not _BLOCK_END.search(main[cells[j][1]:cells[j + 1][1]]): j += 1
    free = unbound_names([src for src, _, _ in cells[:j + 1]])
    return [f"{', '.join(free)} (first example: {cells[i][0].strip().splitlines()[0][:60]})"] if free else []

def repo_url() -> str:
    "The repository, from settings.ini: `git_url`, else https://github.com/<user>/<repo>."
    import configparser
    c = configparser.ConfigParser(); c.read(root / 'settings.ini')
    d = c['DEFAULT']
    return (d.get('git_url') or f"https://github.com/{d.get('user')}/{d.get('repo') or d.get('lib_name')}").rstrip('/')

# ---------------------------------------------------------------- the check
def check_page(page: Path, site: Site, classes: set, mods: set, private: set = frozenset()) -> tuple:
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
        fails['dash-flag'] += [f'"{m.group(0)}" in: {line.strip()[:100]}' for m in _DASH_FLAG.finditer(line)]
    for m in _OUT_PRE.finditer(main):
        for line in _strip(m.group(1)).split('\n'):
            if len(line.rstrip()) > COLUMN: fails['wide-output'].append(f'{len(line.rstrip())} chars: {line.strip()[:90]}')
    fails['wide-table'] += wide_tables(main)
    fails['bad-source'] += bad_sources(main)
    fails['dangling-caption'] += dangling_captions(main)
    fails['small-figure'] += small_figures(main, page)
    fails['missing-figure'] += missing_figures(main)
    fails['no-alt'] += [f'an <img> without alt text: {t[:80]}' for t in re.findall(r'<img\b[^>]*>', main)
                        if not re.search(r'\balt="[^"]+"', t)]
    fails['makers-words'] += makers_words(main, private)
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
    for src in prose_code(main):
        for line in src.split('\n'):
            if len(line.rstrip()) > COLUMN:
                fails['wide-code'].append(f'in the text, {len(line.rstrip())} chars: {line.strip()[:80]}')
    n_test = sum(len(src.strip('\n').split('\n')) for src, _, k in cells if k == 'test')
    n_ex = sum(len(src.strip('\n').split('\n')) for src, _, k in cells if k == 'example')
    tutorial = rel.startswith('tutorials/')
    if entries and not tutorial:
        first_ex = next((o for src, o, k in cells if k == 'example'), None)
        early = [src for src, o, k in cells if k == 'test' and (first_ex is None or o < first_ex)]
        if early: fails['test-first'].append(f'{len(early)} visible test cell(s) before the first example, '
                                             f'the first: {early[0].strip().splitlines()[0][:90]}')
        if not rel.startswith(('benchmarks/', 'demo/')):
            fails['late-example'] += late_example(main, cells)
            fails['unimported-name'] += unimported_names(cells, main)
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
        f.write(f"# reported, not enforced on some pages (PENDING_PAGE_FIXES): {' '.join(r for r in RULES if r in PENDING_PAGE_FIXES)}\n")
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
    classes, pmods, s, private = class_names(), page_modules(), Site(site), private_names()
    rows = []
    print(f"{'page':42} {'api':>4} {'test lines':>11} {'example lines':>14}")
    for p in pages:
        rel = p.relative_to(site).as_posix()
        fails, n_test, n_ex, n_api = check_page(p, s, classes, pmods.get(rel, set()), private)
        bad = sorted(r for r in fails if fails[r] and enforced(r, rel))
        print(f'{rel:42} {n_api:>4} {n_test:>11} {n_ex:>14}' + (f"   FAIL ({', '.join(bad)})" if bad else ''))
        rows.append((rel, fails, n_test, n_ex, n_api))
    failing = set()
    for rule in RULES:
        items = [(rel, what) for rel, fails, *_ in rows for what in fails.get(rule, [])]
        if not items: continue
        n = sum(count(rule, fails.get(rule, [])) for _, fails, *_ in rows)
        pages_hit = list(dict.fromkeys(rel for rel, _ in items))
        hard = [rel for rel in pages_hit if enforced(rule, rel)]
        tag = 'FAIL' if hard else 'reported on pages pending a fix (PENDING_PAGE_FIXES), not enforced there'
        if hard: failing.add(rule)
        print(f'\n{rule}: {n} on {len(pages_hit)} page(s) ({tag})')
        shown = defaultdict(int)
        for rel, what in items:
            shown[rel] += 1
            if shown[rel] <= 5: print(f"  {rel}{'' if enforced(rule, rel) else ' (pending)'}: {what}")
        for rel, k in shown.items():
            if k > 5: print(f'  {rel}: ... and {k - 5} more')
    tot = {r: sum(count(r, fails.get(r, [])) for _, fails, *_ in rows) for r in RULES}
    print('\ndocs-check: rule counts: ' + ' '.join(f"{r}={tot[r]}{' pages' if r in PER_PAGE else ''}" for r in RULES))
    print(f"docs-check: enforced: {' '.join(r for r in RULES if r in ENFORCED)}")
    pend = {r: sum(count(r, fs.get(r, [])) for rel, fs, *_ in rows if not enforced(r, rel)) for r in RULES}
    print(f"docs-check: reported, not enforced (PENDING_PAGE_FIXES, per page): "
          + ' '.join(f'{r}={pend[r]} on {len(PENDING_PAGE_FIXES[r])} page(s)' for r in RULES if r in PENDING_PAGE_FIXES))
    for rule, listed in PENDING_PAGE_FIXES.items():       # an allowlisted page that passes: its entry can go
        passing = sorted(rel for rel, fs, *_ in rows if rel in listed and not fs.get(rule))
        if passing: print(f"docs-check: PENDING_PAGE_FIXES['{rule}'] lists pages that pass it now (remove them): "
                          + ', '.join(passing))
    if counts: write_counts(counts, site, rows); print(f'docs-check: counts per page in {counts}')
    n_bad = sum(1 for rel, fails, *_ in rows if any(fails.get(r) and enforced(r, rel) for r in RULES))
    print(f"docs check: {len(pages)} pages, {n_bad} failing" + (f" ({', '.join(sorted(failing))})" if failing else ''))
    return 1 if failing else 0

if __name__ == '__main__':
    args = sys.argv[1:]
    if '--enforce-all' in args:                         # try the pending rules as if enforced (before moving them)
        args.remove('--enforce-all'); PENDING_PAGE_FIXES.clear()
    counts = None
    if '--counts' in args:
        i = args.index('--counts'); counts = Path(args[i + 1]); del args[i:i + 2]
    sys.exit(main(Path(args[0]) if args else root / '_proc' / '_docs', counts))
