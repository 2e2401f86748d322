"""Process the notebooks for the offline docs site (no Quarto here): nbdev's own processors, plus what
smalldocs cannot do from a signature alone. Writes `_proc/`, which `smalldocs render _proc` turns into the site.

Why a build script rather than settings.ini keys (`renderer =`, `procs =`): those keys would also apply to
`nbdev_test` and to the Quarto build of the public site, where `.ci/` is not importable. Here they apply to
the offline build only, in this process (the notebooks are processed one after the other, `n_workers=0`).

What it adds to nbdev 2.4's processing:
- `add_show_docs_ordered`: several definitions in one exported cell are documented in source order
  (nbdev 2.4 inserts their `show_doc` cells last first).
- `ApiRenderer` replaces nbdev's `show_doc` markdown. nbdev 2.4 prints each parameter's docment as a
  `# comment` inside one long `def` block (clipped on a narrow page, classes shown as `def`, markdown links
  shown raw). Here: the signature alone (`class` for classes and dataclasses, `def` for functions, the
  keyword-only `*` kept, `Class.method` names for patched methods and context managers), the docstring, then
  a Type | Default | Details table as nbdev's Quarto `show_doc` renders it, links in the details rendered
  (a fastcore `Param(help, type)` annotation of a command-line function shows as its type and help).
- `snapshot_outputs`/`restore_outputs`: nbdev re-runs import and export cells to render the API. Their
  docs-time outputs (a warning printed by an import, with this machine's paths) replaced the outputs saved in
  the notebook. The page now shows what the notebook saved, so it is the same on any machine.
- `relative_links`: nbdev links backticked names to `https://<doc_host>/<baseurl>/...`; the pages link
  relatively instead, so a local copy of the site (or a preview) stays on itself.
"""
from __future__ import annotations
import copy, dataclasses, inspect, re, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------- the API renderer
def _anno_str(a) -> str:
    "An annotation as written in the source (`from __future__ import annotations` keeps it a string)."
    if a is inspect.Parameter.empty: return ''
    if isinstance(a, str): return a
    return inspect.formatannotation(a)

def _default_str(d) -> str:
    "A default value as a reader would write it: functions and classes by name, the rest by repr."
    if d is inspect.Parameter.empty: return ''
    if inspect.isfunction(d) or inspect.isclass(d) or inspect.isbuiltin(d): return d.__name__
    return repr(d)

def _sig_params(sig: inspect.Signature, skip_self: bool) -> list:
    "Parameter strings of `sig` in order, with the `*` and `/` markers Python needs to read it back."
    out, star, slash = [], False, False
    ps = list(sig.parameters.values())
    if skip_self and ps and ps[0].name in ('self', 'cls'): ps = ps[1:]
    for p in ps:
        if p.kind == p.POSITIONAL_ONLY: slash = True
        elif slash: out.append('/'); slash = False
        if p.kind == p.VAR_POSITIONAL: star = True
        if p.kind == p.KEYWORD_ONLY and not star: out.append('*'); star = True
        s = ('*' if p.kind == p.VAR_POSITIONAL else '**' if p.kind == p.VAR_KEYWORD else '') + p.name
        a, d = _anno_str(p.annotation), _default_str(p.default)
        if a.startswith('Param('): a = 'Param(...)'     # a command-line option: its help goes to the table
        if a: s += f': {a}'
        if d: s += f' = {d}' if a else f'={d}'
        out.append(s)
    if slash: out.append('/')
    return out

def format_signature(prefix: str, name: str, params: list, ret: str = '', width: int = 88) -> str:
    "`prefix name(params) -> ret` on one line if it fits in `width`, else one parameter per line."
    tail = f') -> {ret}' if ret else ')'
    one = f"{prefix} {name}({', '.join(params)}{tail}"
    if len(one) <= width or not params: return one
    return f"{prefix} {name}(\n" + ''.join(f'    {p},\n' for p in params) + tail

def _cell(s: str) -> str:
    "Text safe inside a markdown table cell (pipes escaped, one line)."
    return ' '.join(str(s).split()).replace('|', '\\|')

def _code(s: str) -> str: return f'`{_cell(s)}`' if s else ''

def _script_param(sym, anno: str):
    "A fastcore `Param(help, type, ...)` annotation (a command-line option) as (type name, help), else None."
    if not anno.startswith('Param('): return None
    from fastcore.script import Param
    try: p = eval(anno, getattr(inspect.unwrap(sym), '__globals__', {}))
    except (NameError, SyntaxError, TypeError): return None    # not fastcore's Param after all: shown as written
    if not isinstance(p, Param): return None
    return (getattr(p.type, '__name__', '') if p.type else ''), (p.help or '')

def param_table(sym, sig: inspect.Signature, skip_self: bool) -> str:
    "The Type | Default | Details markdown table of `sym`'s parameters (docments give the details)."
    from fastcore.docments import docments
    try: docs = docments(sym, full=False, returns=True, args_kwargs=True)   # else a `**kwargs` comment reads as the return's
    except (OSError, TypeError): docs = {}          # no source to read comments from (a builtin, a C type)
    rows = []
    for i, p in enumerate(sig.parameters.values()):
        if skip_self and i == 0 and p.name in ('self', 'cls'): continue
        nm = ('\\*' if p.kind == p.VAR_POSITIONAL else '\\*\\*' if p.kind == p.VAR_KEYWORD else '') + p.name
        anno, doc = _anno_str(p.annotation), docs.get(p.name) or ''
        if (sp := _script_param(sym, anno)): anno, doc = sp[0], doc or sp[1]
        rows.append(f"| {nm} | {_code(anno)} | {_code(_default_str(p.default))} | {_cell(doc)} |")
    if not rows: return ''
    ret, rdoc = _anno_str(sig.return_annotation), docs.get('return')
    if rdoc or (ret and ret != 'None' and not inspect.isclass(sym)):
        rows.append(f"| **Returns** | {_code(ret)} |  | {_cell(rdoc or '')} |")
    return '|  | **Type** | **Default** | **Details** |\n|---|---|---|---|\n' + '\n'.join(rows)

def _qualname(sym, unwrapped) -> str:
    "`Class.method` for methods added with `@patch`, also when a decorator (a context manager) wraps them."
    for o in (sym, getattr(sym, 'fget', None), unwrapped):
        q = getattr(o, '__qualname__', None)
        if q and '.' in q and '<locals>' not in q: return q
    return getattr(unwrapped, '__qualname__', None) or getattr(unwrapped, '__name__', None) or type(sym).__name__

def _docstring(obj) -> str:
    "The object's own docstring (not one inherited from a base class), without a dataclass' generated one."
    d = obj.__dict__.get('__doc__') if inspect.isclass(obj) else getattr(obj, '__doc__', None)
    if not isinstance(d, str): return ''
    if dataclasses.is_dataclass(obj) and d.startswith(obj.__name__ + '('): return ''
    return inspect.cleandoc(d)

def render_api(sym, name: str | None = None, title_level: int = 3, src_url: str | None = None) -> str:
    "Markdown for one public definition: source link, heading, signature, docstring, parameter table."
    prop = isinstance(sym, property)
    unwrapped = sym.fget if prop else inspect.unwrap(sym) if callable(sym) else sym
    nm = name or _qualname(sym, unwrapped)
    md = '---\n\n'
    if src_url: md += f'[source]({src_url}){{target="_blank" style="float:right; font-size:smaller"}}\n\n'
    md += f"{'#' * title_level} {nm}\n\n"
    is_cls = inspect.isclass(unwrapped)
    sig = None
    if callable(unwrapped) and not prop:
        try: sig = inspect.signature(unwrapped)
        except (TypeError, ValueError): pass       # a builtin without a signature: heading and docstring only
    if sig is not None:
        params = _sig_params(sig, skip_self=not is_cls)
        ret = '' if is_cls else _anno_str(sig.return_annotation)
        prefix = 'class' if is_cls else 'async def' if inspect.iscoroutinefunction(unwrapped) else 'def'
        if inspect.isgeneratorfunction(unwrapped) and getattr(sym, '__code__', None) is not None \
                and Path(sym.__code__.co_filename).name == 'contextlib.py': prefix = '@contextmanager\n' + prefix
        md += f"```python\n{format_signature(prefix, nm.split('.')[-1], params, ret)}\n```\n\n"
    doc = _docstring(unwrapped)
    if doc:
        first, _, rest = doc.partition('\n\n')
        md += f"*{' '.join(first.split())}*\n\n" + (rest.strip() + '\n\n' if rest.strip() else '')
    if sig is not None:
        tbl = param_table(unwrapped, sig, skip_self=not is_cls)
        if tbl: md += tbl + '\n'
    return md

def install_renderer():
    "Make nbdev's `show_doc` use `render_api` (nbdev looks `BasicMarkdownRenderer` up at each call)."
    import nbdev.showdoc as sd
    from nbdev.doclinks import NbdevLookup

    class ApiRenderer(sd.BasicMarkdownRenderer):
        def __init__(self, sym, name=None, title_level=3, **kw):
            self.raw, self.raw_name = sym, name
            super().__init__(sym, name=name, title_level=title_level, **kw)
        def _repr_markdown_(self):
            raw = self.raw.fget if isinstance(self.raw, property) else self.raw
            unwrapped = inspect.unwrap(raw) if callable(raw) else raw
            full = f"{getattr(unwrapped, '__module__', '')}.{_qualname(self.raw, unwrapped)}"   # `Class.method` for patched methods
            src = NbdevLookup().code(full) or NbdevLookup().code(self.fn)
            return render_api(self.raw, self.raw_name, self.title_level, src)
    sd.BasicMarkdownRenderer = ApiRenderer

# ---------------------------------------------------------------- processors
_KEEP = '_saved_outputs'

def snapshot_outputs(cell):
    "Remember the outputs saved in the notebook, before nbdev re-runs import and export cells."
    if cell.cell_type == 'code': cell[_KEEP] = copy.deepcopy(cell.get('outputs', []))

def restore_outputs(cell):
    "Put the saved outputs back on every cell but the `show_doc` ones: the builder's stderr never reaches a page."
    if cell.cell_type != 'code' or _KEEP not in cell: return
    saved = cell.pop(_KEEP)
    if not re.search(r'^show_doc\(', cell.source, re.M) and 'exec_doc' not in cell.directives_: cell['outputs'] = saved

def make_relative_links(nb):
    "A processor class that rewrites `<doc_host><baseurl>/page.html` links as links relative to this page."
    from nbdev.config import get_config
    from nbdev.process import Processor
    cfg = get_config()
    site = f"{cfg.doc_host.rstrip('/')}/{cfg.doc_baseurl.strip('/')}/".replace('//', '/').replace(':/', '://')
    class relative_links(Processor):
        def begin(self):
            rel = Path(self.nb.path_).resolve().relative_to((root / cfg.nbs_path).resolve())
            self.up = '../' * (len(rel.parts) - 1)
        def _fix(self, s: str) -> str: return s.replace(f']({site}', f']({self.up}')
        def cell(self, cell):
            if cell.cell_type == 'markdown': cell.source = self._fix(cell.source)
            for o in cell.get('outputs', []):
                md = o.get('data', {}).get('text/markdown')
                if md is not None: o['data']['text/markdown'] = [self._fix(s) for s in md]
    return relative_links

def make_ordered_show_docs():
    "nbdev's `add_show_docs`, except that several definitions in one cell are documented in source order (nbdev reverses them)."
    import nbdev.processors as P
    from execnb.nbio import mk_cell
    from fastcore.foundation import L
    class add_show_docs_ordered(P.add_show_docs):
        def begin(self):
            nb = self.nb
            exports = L(cell for cell in nb.cells if P._want_doc(cell))
            trees = L(nb.cells).map(P.NbCell.parsed_).concat()
            shown_docs = {P._get_nm(t) for t in P._show_docs(trees)}
            for cell in reversed(exports):
                if P.cell_lang(cell) != 'python': raise ValueError(f"{cell.metadata.language} can't export:\n{cell.source}")
                for nm in reversed(P._def_names(cell, shown_docs)):      # inserted at the same place: last first
                    new_cell = mk_cell(f'show_doc({nm})')
                    new_cell.has_sd = True
                    nb.cells.insert(cell.idx_ + 1, new_cell)
            nb.has_docs_ = shown_docs or exports
    return add_show_docs_ordered

def install_processors():
    "Run snapshot/restore around nbdev's `exec_show_docs`, show_docs in source order, and relative links last."
    import nbdev.processors as P, nbdev.serve as S
    base = P.FilterDefaults
    ordered = make_ordered_show_docs()
    class DocsFilter(base):
        def base_procs(self):
            procs = [ordered if p is P.add_show_docs else p for p in super().base_procs()]
            i = procs.index(P.exec_show_docs)
            return procs[:i] + [snapshot_outputs, P.exec_show_docs, restore_outputs] + procs[i + 1:]
        def xtra_procs(self): return super().xtra_procs() + [make_relative_links(None)]
    S.FilterDefaults = DocsFilter

def main():
    import os
    os.chdir(root)
    install_renderer()
    install_processors()
    from nbdev.serve import proc_nbs
    proc_nbs(n_workers=0, force=True)

if __name__ == '__main__': main()
