"""Write README.md from nbs/index.ipynb (nbdev_readme needs Quarto, which this machine cannot install).
Markdown cells are copied, code cells become ```python blocks, text outputs ``` blocks; `#| hide` cells
and directive lines are dropped. Links between pages are relative in the notebook (so the site works
from a local copy) and become absolute links to the published site in README.md (GitHub and PyPI show
it outside the site). `--check` fails if README.md is not what index.ipynb gives."""
import configparser, json, re, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent

def site_url() -> str:
    "The published docs site, from settings.ini (`doc_host` + `doc_baseurl`), with a trailing slash."
    cfg = configparser.ConfigParser(); cfg.read(root / 'settings.ini')
    d = cfg['DEFAULT']
    return d['doc_host'].rstrip('/') + '/' + d['doc_baseurl'].strip('/') + '/'

def absolute_links(md: str, site: str) -> str:
    "`[text](page.ipynb#anchor)` -> `[text](<site>page.html#anchor)`; other links are left alone."
    return re.sub(r'\]\((?![a-z]+:|/|#)([^)\s]+?)\.(?:ipynb|qmd|md)(#[^)\s]*)?\)',
                  lambda m: f"]({site}{m.group(1)}.html{m.group(2) or ''})", md)

def render(nb_path: Path) -> str:
    nb = json.loads(nb_path.read_text())
    out = []
    for c in nb['cells']:
        src = ''.join(c['source'])
        if c['cell_type'] == 'markdown':
            # the nbdev title block: '# Title' then '> description'
            out.append(absolute_links(src.strip(), site_url()))
            continue
        lines = src.split('\n')
        dirs = [l for l in lines if l.startswith('#|')]
        if any(re.match(r'#\|\s*(hide|include:\s*false)', d) for d in dirs): continue
        code = '\n'.join(l for l in lines if not l.startswith('#|')).strip()
        if code: out.append(f"```python\n{code}\n```")
        texts = []
        for o in c.get('outputs', []):
            if o.get('output_type') == 'stream' and o.get('name') == 'stdout': texts.append(''.join(o['text']))
            elif o.get('output_type') in ('execute_result', 'display_data') and 'text/plain' in o.get('data', {}) \
                    and 'image/png' not in o['data'] and 'text/html' not in o['data']:
                texts.append(''.join(o['data']['text/plain']))
        text = ''.join(t if t.endswith('\n') else t + '\n' for t in texts).strip('\n')
        if text: out.append(f"```\n{text}\n```")
    return '\n\n'.join(out) + '\n'

if __name__ == '__main__':
    md = render(root / 'nbs' / 'index.ipynb')
    readme = root / 'README.md'
    if '--check' in sys.argv:
        if not readme.exists() or readme.read_text() != md:
            sys.exit('README.md is out of date: run `python .ci/readme.py` and commit it')
        print('README.md is up to date')
    else:
        readme.write_text(md); print('wrote README.md')
