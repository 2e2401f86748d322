"""Self-test of `.ci/docs_check.py`: each rule below fails on a defect planted in a page that passes it.

`python .ci/docs_check_selftest.py [SITE]` (no build needed; CI can run it before `.ci/docs`). The pages are a small
API page written here in the HTML smalldocs makes (title block, prose, a `show_doc` entry, a code cell), and, when a
built site is given (or `_proc/_docs` exists), a copy of its `analyze/results.html`. For each rule: the clean page has
a count of 0, the page with the defect planted has a count above 0. Prints one line a rule and exits 1 on a miss.
"""
from __future__ import annotations
import re, shutil, sys, tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import docs_check as C

REPO = C.repo_url()
SRC = f'{REPO}/blob/{C.repo_branch()}/fasterai/core/schedule.py'
_line = next(i for i, l in enumerate((C.root / 'fasterai/core/schedule.py').read_text().split('\n'), 1)
             if re.match(r'def \w+', l))

CLEAN = f'''<!DOCTYPE html><html><head><link rel="icon" href="../favicon.png"></head><body>
<nav class="navbar"><a href="{REPO}">GitHub</a></nav>
<main class="content" id="quarto-document-content"><header id="title-block-header"><h1 class="title">Schedule</h1>
<div class="description">When compression happens.</div></header>
<p>A schedule maps training progress to compression progress. Here is one:</p>
<div id="cell-3" class="cell"><div class="sourceCode cell-code"><pre class="sourceCode python cell-code"><code>from fasterai.core.schedule import sched
sched(0.5)</code></pre></div>
<div class="cell-output cell-output-display"><pre><code>0.5</code></pre></div></div>
<div class="cell-output cell-output-display">
<table class="dataframe"><thead><tr><th></th><th>step</th><th>value</th></tr></thead>
<tbody><tr><th>0</th><td>1</td><td>0.5</td></tr></tbody></table></div>
<div id="cell-4" class="cell"><div class="cell-output cell-output-display cell-output-markdown">
<hr />
<p><a href="{SRC}#L{_line}" target="_blank" style="float:right; font-size:smaller">source</a></p>
<h3 id="sched" class="anchored">sched</h3>
<div class="sourceCode"><pre class="sourceCode python"><code><span class="kw">def</span> sched(pos: float)</code></pre></div>
<p><em>The value at `pos`.</em></p>
<div class="sd-table"><table class="caption-top table"><thead><tr><th></th><th>Type</th><th>Default</th><th>Details</th></tr></thead>
<tbody><tr><td>pos</td><td><code>float</code></td><td></td><td>training progress, 0 to 1</td></tr></tbody></table></div>
</div></div>
<section id="more" class="level2"><h2>More</h2><p>Text.</p></section>
</main></body></html>'''

def _wide_df(n: int = 14) -> str:
    cols = ''.join(f'<th>column_name_{i}</th>' for i in range(n))
    vals = ''.join(f'<td>{1234.5678 + i}</td>' for i in range(n))
    return f'<div class="cell-output cell-output-display"><table class="dataframe"><thead><tr><th></th>{cols}</tr></thead>' \
           f'<tbody><tr><th>0</th>{vals}</tr></tbody></table></div>'

def _after_header(extra: str):
    "Plant `extra` after the page's title block (the site's own `<header>` comes first)."
    def plant(h):
        i = h.find('</header>', h.find('id="title-block-header"')) + len('</header>')
        return h[:i] + '\n' + extra + h[i:]
    return plant

def _before_section(extra: str):
    return lambda h: re.sub(r'(<section id=)', lambda m: extra + '\n' + m.group(1), h, count=1)

def _png(width: int, height: int, dpi: int) -> str:
    "An inline `<img>` of a PNG header (IHDR, pHYs at `dpi`, an empty IDAT): what the figure rule reads."
    import base64, struct, zlib
    def chunk(kind, data): return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
    png = (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, 8, 6, 0, 0, 0))
           + chunk(b'pHYs', struct.pack('>IIB', round(dpi / 0.0254), round(dpi / 0.0254), 1))
           + chunk(b'IDAT', b'') + chunk(b'IEND', b''))
    return (f'<div class="cell-output cell-output-display"><div><figure class="figure"><p><img '
            f'src="data:image/png;base64,{base64.b64encode(png).decode()}" class="img-fluid figure-img"></p></figure>'
            f'</div></div>')

_WRAPPED_OUT = ('<div id="cell-99" class="cell"><div class="cell-output cell-output-stdout"><pre><code>'
                '   layer  params  delta  \\\n0  conv1     864  -0.02  \n\n   status\n0  measured</code></pre></div></div>')
# rule -> (what is planted, a function of the page's HTML that plants it); the pages have a `<section id=` and a header
PLANTS = [
    ('bad-source', "a source link to a notebook cell the builder ran (`<ipython-input-1-…>`)",
     lambda h: re.sub(r'href="[^"]*"(?=[^>]*>source</a>)',
                      f'href="{REPO}/blob/main/%3Cipython-input-1-6efa96dac4d4%3E#L1"', h, count=1)),
    ('dangling-caption', "a paragraph ending in ':' whose cell is hidden (a heading follows)",
     _before_section('<p>The tests check three layers:</p>')),
    ('makers-words', "a private name, 'hidden test' and a commit hash in the prose",
     _after_header('<p>It calls <code>_validate</code> (a hidden test checks it), measured at commit e1b048d.</p>')),
    ('makers-words', "the build machine in the prose ('where this page was built')",
     _after_header('<p>llama.cpp is not installed where this page was built.</p>')),
    ('wide-table', "a 14-column DataFrame (about 1,400 px) in an output", _before_section(_wide_df())),
    ('wide-table', "a text output that pandas wrapped with a trailing '\\'", _before_section(_WRAPPED_OUT)),
    ('wide-code', "a shell line of 110 characters in a code block of the prose (not a cell)",
     _before_section('<div class="sourceCode" id="cb99"><pre class="sourceCode sh code-with-copy"><code class="sourceCode '
                     'bash"><span class="ex">pip</span> install "fasterai @ git+https://github.com/fasterai/fasterai" '
                     '&amp;&amp; pip install -e ".[fastai,transformers]"</code></pre></div>')),
    ('small-figure', "a row of seven panels 21 inches wide (4,200 px at 200 dpi): its text 5 px tall in the column",
     _before_section(_png(4200, 500, 200))),
    ('no-alt', "a figure without alt text", _before_section(_png(1600, 800, 200))),
    ('missing-figure', "a code cell ending in `res.plot();` saved without its output (no figure under it)",
     _before_section('<div id="cell-98" class="cell"><div class="sourceCode cell-code"><pre class="sourceCode python '
                     'cell-code"><code>res.plot();</code></pre></div></div>')),
    ('dash-flag', "a parameter table's Details with `--budget` made an en dash by smart punctuation (`with –budget: ...`)",
     lambda h: h.replace('<td>training progress, 0 to 1</td>', '<td>with –budget and –target RUNTIME: the plan</td>')
     if '<td>training progress, 0 to 1</td>' in h else _before_section('<p>With –budget: a plan within it.</p>')(h)),
    ('unimported-name', "a first example that calls a helper the page defines in a hidden cell",
     _after_header('<p>First:</p><div id="cell-2" class="cell"><div class="sourceCode cell-code"><pre class="sourceCode '
                   'python cell-code"><code>model = tiny_model()\nmodel</code></pre></div></div>')),
    ('late-example', "six long paragraphs between the title and the first example",
     _after_header(('<p>' + 'Why this exists, at length. ' * 20 + '</p>\n') * 6)),
]

_CACHE = {}
def count(page: Path, rule: str) -> int:
    site = C.Site(page.parent.parent)
    if not _CACHE: _CACHE.update(classes=C.class_names(), private=C.private_names())
    fails, *_ = C.check_page(page, site, _CACHE['classes'], set(), _CACHE['private'])
    return C.count(rule, fails.get(rule, []))

def run(name: str, clean: str, where: Path) -> list:
    "Plant each defect in `clean` (written under `where`) and report: (rule, clean count, planted count)."
    page = where / 'analyze' / f'{name}.html'
    page.parent.mkdir(parents=True, exist_ok=True)
    (where / 'favicon.png').write_bytes(b'')
    out = []
    for rule, what, plant in PLANTS:
        page.write_text(clean, encoding='utf-8'); before = count(page, rule)
        planted = plant(clean)
        if planted == clean: out.append((rule, before, None, what)); continue
        page.write_text(planted, encoding='utf-8'); out.append((rule, before, count(page, rule), what))
    return out

def main(site: Path | None) -> int:
    tmp = Path(tempfile.mkdtemp())
    pages = [('synthetic', CLEAN)]
    real = site / 'analyze' / 'results.html' if site else None
    if real and real.is_file():
        shutil.copytree(site, tmp / 'site', ignore=shutil.ignore_patterns('*.ipynb'))
        pages.append(('results', real.read_text(encoding='utf-8')))
    ok = True
    for name, clean in pages:
        where = tmp / 'site' if name != 'synthetic' else tmp / 'synthetic'
        for rule, before, after, what in run(name, clean, where):
            # the synthetic page passes every rule; a real page may already break one (then: one more, or the page fails)
            good = after is not None and (after > before or (rule in C.PER_PAGE and after == 1)) \
                and (before == 0 or name != 'synthetic')
            ok &= good
            print(f"{'ok  ' if good else 'MISS'} {rule:17} {name:10} clean {before}, planted {after}: {what}")
    shutil.rmtree(tmp, ignore_errors=True)
    print('docs check self-test: ' + ('every rule fails on its planted defect' if ok else 'a rule missed its defect'))
    return 0 if ok else 1

if __name__ == '__main__':
    arg = Path(sys.argv[1]) if len(sys.argv) > 1 else C.root / '_proc' / '_docs'
    sys.exit(main(arg if arg.is_dir() else None))
