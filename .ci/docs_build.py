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
  a Type | Default | Details table as nbdev's Quarto `show_doc` renders it (a Returns row when the return is
  described: its type alone is in the signature), links in the details rendered
  (a fastcore `Param(help, type)` annotation of a command-line function shows as its type and help).
- `snapshot_outputs`/`restore_outputs`: nbdev re-runs import and export cells to render the API. Their
  docs-time outputs (a warning printed by an import, with this machine's paths) replaced the outputs saved in
  the notebook. The page now shows what the notebook saved, so it is the same on any machine.
- `relative_links`: nbdev links backticked names to `https://<doc_host>/<baseurl>/...`; the pages link
  relatively instead, so a local copy of the site (or a preview) stays on itself.
- `source_url`: every entry's `source` link is read with `inspect` (file and `def` line), so methods nbdev's
  lookup does not know get one too (attached with `@_method(C, 'name')`, made inside a function, `@patch`ed
  context managers); nbdev's lookup is the fallback.
- `_defaults`: a dataclass field's `default_factory` shows as what it makes (`{}`, `[]`, `Factory()`), not
  Python's `<factory>`.
- `param_table`: a comment on the line of the last parameter and the `) -> X:` (`bits) -> nn.Module:  # bits
  for ...`) documents that parameter (docments gives it to the return); signatures wrap at 83 characters, the
  page column at 1400 px.
- `shown_imports`: an API page's first example shows the imports it needs (pasted, it runs).
- `figure_alts`: every figure gets an alt text, its caption (the prose just above its cell) or the call that drew it.
- `fix_name_links` (after all notebooks are processed): a link nbdev made for a backticked name lands on an
  anchor that exists: a method's entry, an anchor on the name's own page (the named criteria), or no link
  (private helpers and names without an entry).
"""
from __future__ import annotations
import ast, copy, dataclasses, inspect, json, re, sys, textwrap
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

def _factory_str(f) -> str:
    "What a dataclass `field(default_factory=f)` makes, as a reader would write it: `{}`, `[]`, else `f()`."
    try: v = f()
    except Exception: v = None                    # a factory that needs more than itself: shown as its call
    if type(v) in (dict, list, tuple, set, frozenset, str, int, float, bool) and len(repr(v)) <= 40: return repr(v)
    return f"{getattr(f, '__name__', type(v).__name__)}()".replace('<lambda>()', f'{type(v).__name__}(...)')

def _defaults(sym, sig: inspect.Signature) -> dict:
    "Parameter name -> its default as written: a dataclass field's `default_factory` (Python shows `<factory>`) as what it makes."
    fields = {f.name: f for f in dataclasses.fields(sym)} if inspect.isclass(sym) and dataclasses.is_dataclass(sym) else {}
    out = {}
    for p in sig.parameters.values():
        f = fields.get(p.name)
        if f is not None and f.default_factory is not dataclasses.MISSING and p.default is not inspect.Parameter.empty \
                and repr(p.default) == '<factory>': out[p.name] = _factory_str(f.default_factory)
        else: out[p.name] = _default_str(p.default)
    return out

def _sig_params(sig: inspect.Signature, skip_self: bool, defaults: dict | None = None) -> list:
    "Parameter strings of `sig` in order, with the `*` and `/` markers Python needs to read it back."
    out, star, slash = [], False, False
    defaults = defaults or {}
    ps = list(sig.parameters.values())
    if skip_self and ps and ps[0].name in ('self', 'cls'): ps = ps[1:]
    for p in ps:
        if p.kind == p.POSITIONAL_ONLY: slash = True
        elif slash: out.append('/'); slash = False
        if p.kind == p.VAR_POSITIONAL: star = True
        if p.kind == p.KEYWORD_ONLY and not star: out.append('*'); star = True
        s = ('*' if p.kind == p.VAR_POSITIONAL else '**' if p.kind == p.VAR_KEYWORD else '') + p.name
        a, d = _anno_str(p.annotation), defaults.get(p.name, _default_str(p.default))
        if a.startswith('Param('): a = 'Param(...)'     # a command-line option: its help goes to the table
        if a: s += f': {a}'
        if d: s += f' = {d}' if a else f'={d}'
        out.append(s)
    if slash: out.append('/')
    return out

def format_signature(prefix: str, name: str, params: list, ret: str = '', width: int = 83) -> str:
    "`prefix name(params) -> ret` on one line if it fits in `width` (the page column at 1400 px), else one parameter per line."
    tail = f') -> {ret}' if ret else ')'
    one = f"{prefix} {name}({', '.join(params)}{tail}"
    if len(one) <= width or not params: return one
    return f"{prefix} {name}(\n" + ''.join(f'    {p},\n' for p in params) + tail

def _cell(s: str) -> str:
    "Text safe inside a markdown table cell (pipes escaped, one line)."
    return ' '.join(str(s).split()).replace('|', '\\|')

def _code(s: str) -> str: return f'`{_cell(s)}`' if s else ''

_FLAG = re.compile(r'(?<![\w-])(--[a-z][\w-]*)')
def _flags(s: str) -> str:
    """Command-line flags (`--budget`) of a docment set as code outside code spans: plain, the site's smart punctuation
    turns `--` into an en dash (`–budget`), which a shell refuses."""
    parts = str(s).split('`')
    # kept on one line: a narrow Details column would otherwise break `--model` after its first hyphen
    return '`'.join(_FLAG.sub(r'`\1`{style="white-space:nowrap"}', p) if i % 2 == 0 else p for i, p in enumerate(parts))

def _script_param(sym, anno: str):
    "A fastcore `Param(help, type, ...)` annotation (a command-line option) as (type name, help), else None."
    if not anno.startswith('Param('): return None
    from fastcore.script import Param
    try: p = eval(anno, getattr(inspect.unwrap(sym), '__globals__', {}))
    except (NameError, SyntaxError, TypeError): return None    # not fastcore's Param after all: shown as written
    if not isinstance(p, Param): return None
    return (getattr(p.type, '__name__', '') if p.type else ''), (p.help or '')

def _last_param_comment(sym, skip_self: bool) -> tuple:
    "(name, comment) when the last parameter and the `) -> X:` line share a line that ends with a comment, else (None, None)."
    import ast, io, textwrap, tokenize
    try: src = textwrap.dedent(inspect.getsource(sym))
    except (OSError, TypeError): return None, None
    try: fn = next(n for n in ast.walk(ast.parse(src)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    except (SyntaxError, StopIteration): return None, None
    a = fn.args
    ps = a.posonlyargs + a.args + ([a.vararg] if a.vararg else []) + a.kwonlyargs + ([a.kwarg] if a.kwarg else [])
    if skip_self and ps and ps[0].arg in ('self', 'cls'): ps = ps[1:]
    if not ps: return None, None
    line = ps[-1].end_lineno
    try:
        for t in tokenize.generate_tokens(io.StringIO(src).readline):
            if t.type == tokenize.COMMENT and t.start[0] == line: return ps[-1].arg, t.string.lstrip('#').strip()
            if t.start[0] > line: break
    except (tokenize.TokenError, IndentationError): pass
    return None, None

def _exported(sym):
    """The same class as exported in the package, or None. A class defined while the notebook is processed has no
    source file docments can read (a dataclass' field comments were lost); its exported twin has one."""
    if not inspect.isclass(sym): return None
    try: from fasterai._modidx import d
    except ImportError: return None
    import importlib
    for mod, syms in d['syms'].items():
        if f"{mod}.{sym.__qualname__}" in syms:
            try: return getattr(importlib.import_module(mod), sym.__qualname__, None)
            except Exception: return None
    return None

def _documented(sym):
    """Where `sym`'s parameter comments are: a dataclass that writes its own `__init__` (`init=False`, e.g. a kind's
    configuration) documents them there, not on its fields (docments reads a dataclass' fields)."""
    dc = getattr(sym, '__dataclass_params__', None) if inspect.isclass(sym) else None
    return sym.__init__ if dc is not None and not dc.init else sym

def param_table(sym, sig: inspect.Signature, skip_self: bool) -> str:
    "The Type | Default | Details markdown table of `sym`'s parameters (docments give the details)."
    from fastcore.docments import docments
    # args_kwargs: else a `**kwargs` comment reads as the return's
    try: docs = docments(_documented(sym), full=False, returns=True, args_kwargs=True)
    except (OSError, TypeError): docs = {}          # no source to read comments from (a builtin, a C type)
    if not any(docs.values()) and (exported := _exported(sym)) is not None:
        try: docs = docments(exported, full=False, returns=True, args_kwargs=True)
        except (OSError, TypeError): pass
    if docs.get('return'):
        # `def f(self, x) -> int:  # about x`: docments gives the comment to the return; it is the last parameter's
        nm, comment = _last_param_comment(sym, skip_self)
        if nm and not docs.get(nm) and comment == docs['return'].strip(): docs[nm], docs['return'] = docs['return'], None
    defaults = _defaults(sym, sig)
    rows = []
    for i, p in enumerate(sig.parameters.values()):
        if skip_self and i == 0 and p.name in ('self', 'cls'): continue
        nm = ('\\*' if p.kind == p.VAR_POSITIONAL else '\\*\\*' if p.kind == p.VAR_KEYWORD else '') + p.name
        anno, doc = _anno_str(p.annotation), docs.get(p.name) or ''
        if (sp := _script_param(sym, anno)): anno, doc = sp[0], doc or sp[1]
        rows.append(f"| {nm} | {_code(anno)} | {_code(defaults[p.name])} | {_cell(_flags(doc))} |")
    if not rows: return ''
    ret, rdoc = _anno_str(sig.return_annotation), docs.get('return')
    # a Returns row only when the return is described: its type alone is in the signature (`-> X`) already
    if rdoc: rows.append(f"| **Returns** | {_code(ret)} |  | {_cell(_flags(rdoc))} |")
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
        params = _sig_params(sig, skip_self=not is_cls, defaults=_defaults(unwrapped, sig))
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

def _src_object(sym):
    "The function or class behind `sym` (a property's getter, a classmethod's function, a decorator's wrapped function)."
    o = sym.fget if isinstance(sym, property) else sym
    o = getattr(o, '__func__', o)                       # a classmethod or staticmethod object
    return inspect.unwrap(o) if callable(o) else o

def _lines_in_repo(o):
    "(path relative to the repository, source lines, first line) when `o` is defined in a file of the repository, else None."
    try: src = inspect.getsourcefile(o)
    except (TypeError, OSError): return None          # a builtin; a class of `__main__` (a notebook cell)
    if not src or not Path(src).is_file(): return None  # `<ipython-input-1-…>`: a notebook cell run by the builder
    try: rel = Path(src).resolve().relative_to(root.resolve())
    except ValueError: return None                      # defined outside this repository (fastcore, torch)
    try: lines, start = inspect.getsourcelines(o)
    except (TypeError, OSError): return None
    return rel, lines, start

def _import_quietly(mod: str):
    "Import a module of the package without letting its import-time warnings reach the page being built."
    import contextlib, importlib, io, warnings
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter('ignore')
        try: return importlib.import_module(mod)
        except Exception: return None

def _exported_twins(sym, names) -> list:
    """The objects of the package that `sym` (defined while its notebook is processed, in a notebook cell) was exported as:
    `names` (`Class.method`, `func`) looked up in the modules `_modidx.py` lists them in (else in every module of the
    package, for a method attached under another name), those with the same source first."""
    try: from fasterai._modidx import d
    except ImportError: return []
    try: own = textwrap.dedent(inspect.getsource(_src_object(sym)))
    except (OSError, TypeError): own = None
    names = list(dict.fromkeys(x for x in names if x))
    listed = [m for m, syms in d['syms'].items() if any(f'{m}.{n}' in syms for n in names)]
    found = []
    for mod in listed or list(d['syms']):
        if (obj := _import_quietly(mod)) is None: continue
        for n in names:
            o = obj
            for part in n.split('.'):
                o = inspect.getattr_static(o, part, None) if inspect.isclass(o) else getattr(o, part, None)
                if o is None: break
            if o is None or inspect.ismodule(o): continue
            try: same = own is not None and textwrap.dedent(inspect.getsource(_src_object(o))) == own
            except (OSError, TypeError): same = False
            found.append((not same, o)); break
    return [o for _, o in sorted(found, key=lambda t: t[0])]

def source_url(sym, name: str | None = None) -> str | None:
    """The GitHub link to the line of the repository's file that defines `sym` (function, class, method, property,
    classmethod), read with `inspect`: `<git_url>/blob/<branch>/fasterai/<module>.py#L<line of the def>`.

    The builder runs each notebook's export cells, so what `show_doc` gets is defined in a notebook cell (its source
    file is `<ipython-input-1-…>`, no file of the repository): the link then reads the same name in the exported module
    (`name`, else the qualified name), preferring the object whose source is the cell's. nbdev's lookup knows only the
    names in `_modidx.py`: not a method attached under another name (`@_method(C, 'to_csv') def _to_csv`), nor one made
    inside a function (`to_json`), nor a `@patch`ed context manager; `inspect` does."""
    from nbdev.config import get_config
    o = _src_object(sym)
    where = _lines_in_repo(o)
    if where is None:
        for twin in _exported_twins(sym, [name, _qualname(sym, o), getattr(o, '__qualname__', None)]):
            if (where := _lines_in_repo(_src_object(twin))) is not None: break
    if where is None: return None
    rel, lines, start = where
    off = next((i for i, l in enumerate(lines) if re.match(r'\s*(async\s+def|def|class)\b', l)), 0)   # the line after the decorators
    cfg = get_config()
    return f"{cfg.git_url.rstrip('/')}/blob/{cfg.branch}/{rel.as_posix()}#L{start + off}"

def _repo_file_url(url: str | None) -> str | None:
    "nbdev's source link, if it names a file of the repository (its lookup can give a notebook cell's `<ipython-input…>`)."
    from nbdev.config import get_config
    base = f"{get_config().git_url.rstrip('/')}/blob/{get_config().branch}/"
    if not url or not url.startswith(base): return None
    return url if (root / url[len(base):].split('#')[0]).is_file() else None

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
            src = source_url(self.raw, self.raw_name) or _repo_file_url(NbdevLookup().code(full) or NbdevLookup().code(self.fn))
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
    ordered, shown, alts = make_ordered_show_docs(), make_shown_imports(), make_figure_alts()
    class DocsFilter(base):
        def base_procs(self):
            procs = [ordered if p is P.add_show_docs else p for p in super().base_procs()]
            i = procs.index(P.exec_show_docs)
            return procs[:i] + [snapshot_outputs, P.exec_show_docs, restore_outputs] + procs[i + 1:]
        def xtra_procs(self): return super().xtra_procs() + [make_relative_links(None), shown, alts]
    S.FilterDefaults = DocsFilter
    run_for_docs = P._do_eval
    def do_eval(cell):
        """nbdev's rule, except that of a hidden cell exporting nothing (a test and its setup) only the top-level imports
        run to build the page (annotations shown by `show_doc` may need them; the test's code may need what no page runs)."""
        d = cell.directives_
        if cell.cell_type == 'code' and 'hide' in d and not d.keys() & {'export', 'exports', 'exporti', 'exec_doc'}:
            try: body = ast.parse('\n'.join(l for l in cell.source.splitlines() if not l.startswith('#|'))).body
            except SyntaxError: return None
            imports = [ast.unparse(n) for n in body if isinstance(n, (ast.Import, ast.ImportFrom))]
            if not imports: return None
            cell.source = '\n'.join(imports)           # the cell itself is dropped from the page later (hidden)
            return True
        return run_for_docs(cell)
    P._do_eval = do_eval

# ---------------------------------------------------------------- the first example's imports, shown
# A reader pastes the first example of an API page and it must run: its page shows the imports of every name it reads
# that no visible cell above it binds (the notebook imports them in a hidden cell, or defines them there). The lines
# go at the top of that example: a name of the package from its page's own module if that module exports it, else from
# the module that defines it; other names from THIRD_PARTY. `.ci/docs_check.py` (`unimported-name`) fails a page
# whose first example still reads a name nothing visible binds.
THIRD_PARTY = {
    'torch': 'import torch', 'nn': 'from torch import nn', 'F': 'import torch.nn.functional as F',
    'torchvision': 'import torchvision', 'np': 'import numpy as np', 'pd': 'import pandas as pd',
    'plt': 'import matplotlib.pyplot as plt', 'hf': 'import transformers as hf', 'Path': 'from pathlib import Path',
    'OrderedDict': 'from collections import OrderedDict', 'mock': 'from unittest import mock',
    'cpu_offload': 'from accelerate import cpu_offload', 'Learner': 'from fastai.learner import Learner',
    **{m: f'import {m}' for m in ('copy', 'json', 'math', 'os', 're', 'subprocess', 'sys', 'tempfile', 'textwrap',
                                  'time', 'warnings')},
}
NO_IMPORTS_SHOWN = ('tutorials/', 'benchmarks/', 'demo/', 'index.ipynb')

def package_names() -> dict:
    "{name: module} of every name the package exports, at the module that defines it (else the first exporting it)."
    import importlib, fasterai._modidx as mi
    where, anywhere = {}, {}
    for mod in mi.d['syms']:
        try: m = importlib.import_module(mod)
        except Exception: continue
        for n in getattr(m, '__all__', []):
            if getattr(getattr(m, n, None), '__module__', None) == mod: where.setdefault(n, mod)
            anywhere.setdefault(n, mod)
    return {**anywhere, **where}

FIXTURE = ('fixture', None, None)      # a name a hidden cell of the page defines: it has no import

def notebook_imports(nb_json: dict) -> tuple:
    """({name: (module or None, imported name, asname)}, [modules star-imported]) of every import statement of a
    notebook's code cells, hidden ones included: what each name means on that page."""
    from docs_check import parse_cell
    named, star = {}, []
    for c in nb_json['cells']:
        if c['cell_type'] != 'code': continue
        src = ''.join(c['source'])
        tree = parse_cell('\n'.join(l for l in src.splitlines() if not l.startswith('#|')))
        if tree and re.search(r'^#\|\s*(hide|include:\s*false)\b', src, re.M) and not re.search(r'^#\|\s*export', src, re.M):
            for n in tree.body:                # a hidden cell's own definitions: the page's fixtures, no import
                bound = [n.name] if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else \
                        [t.id for t in getattr(n, 'targets', [getattr(n, 'target', None)]) if isinstance(t, ast.Name)]
                for b in bound: named.setdefault(b, FIXTURE)
        for n in ast.walk(tree) if tree else []:
            if isinstance(n, ast.ImportFrom) and n.module and not n.level:
                for a in n.names:
                    if a.name == '*': star.append(n.module)
                    else: named.setdefault(a.asname or a.name, (n.module, a.name, a.asname))
            elif isinstance(n, ast.Import):
                for a in n.names: named.setdefault(a.asname or a.name.split('.')[0], (None, a.name, a.asname))
    return named, star

def import_lines(free: list, own: str | None, names: dict, page_imports: tuple = ({}, []), width: int = 83) -> tuple:
    """`(import lines, names with none)` of the names `free`, wrapped at `width`: as the page imports them (its import
    statements, hidden ones included, then the modules it star-imports), else from `own` (the page's module), else
    from the package module that defines them, else THIRD_PARTY. A name a hidden cell of the page defines has none."""
    named, star = page_imports
    exports = lambda mod: set(getattr(sys.modules.get(mod), '__all__', ())) if mod else set()
    mods, lines, unplaced = {}, set(), []
    for n in free:
        if named.get(n) == FIXTURE: unplaced.append(n)      # the page's own hidden helper: shadows any package name
        elif n in named:
            mod, orig, asname = named[n]
            if mod is None: lines.add(f"import {orig}" + (f" as {asname}" if asname else ''))
            else: mods.setdefault(mod, []).append(orig + (f" as {asname}" if asname else ''))
        elif (m := next((m for m in star if n in exports(m)), None)): mods.setdefault(m, []).append(n)
        elif n in exports(own): mods.setdefault(own, []).append(n)
        elif n in names: mods.setdefault(names[n], []).append(n)
        elif n in THIRD_PARTY: lines.add(THIRD_PARTY[n])
        else: unplaced.append(n)
    out = sorted(lines)
    for mod, ns in sorted(mods.items()):
        line = f"from {mod} import {', '.join(ns)}"
        out += [line] if len(line) <= width else textwrap.wrap(f"from {mod} import ({', '.join(ns)})", width,
                                                                subsequent_indent=' ' * 4, break_long_words=False)
    return out, unplaced

def _after_options(source: str, lines: list) -> str:
    "`source` with `lines` inserted after its leading `#|` options and `%%` cell magics (which must stay first)."
    head = source.splitlines(keepends=True)
    k = 0
    while k < len(head) and head[k].startswith(('#|', '%%')): k += 1
    return ''.join(head[:k]) + '\n'.join(lines) + '\n' + ''.join(head[k:])

def make_shown_imports():
    """A processor class that writes, at the top of an API page's first example, the imports it needs (see above): the
    example is its first visible code cell that is neither a test nor imports, with the code cells right after it
    (no prose or entry between), as a reader pastes them."""
    from nbdev.process import Processor
    sys.path.insert(0, str(root / '.ci'))
    from docs_check import _kind, read_before_bound, _builtin_names
    names = {}
    class shown_imports(Processor):
        def end(self):
            rel = Path(self.nb.path_).resolve().relative_to((root / 'nbs').resolve()).as_posix()
            if rel.startswith(NO_IMPORTS_SHOWN): return
            raw = Path(self.nb.path_).read_text(encoding='utf-8')
            own = re.search(r'#\|\s*default_exp\s+([\w.]+)', raw)
            own = f'fasterai.{own.group(1)}' if own else None
            def shown(c):                      # a code cell the page shows (nbdev's show_doc cells carry `#| echo: false`)
                return (c.cell_type == 'code' and c.source.strip() and not re.match(r'show_doc\(', c.source)
                        and not re.search(r'^#\|\s*(echo|include):\s*false', c.source, re.M)
                        and not {'echo:', 'include:'} & {k for k, v in c.directives_.items() if v == ['false']})
            cells = self.nb.cells
            first = next((i for i, c in enumerate(cells) if shown(c) and _kind(c.source) == 'example'), None)
            if first is None: return
            if not names: names.update(package_names())
            page_imports = notebook_imports(json.loads(raw))
            # the examples as a reader pastes them: the first is every shown cell up to the first example and the code
            # cells right after it; each later one, a run of shown code cells. Each gets, at its top, the imports of
            # the names it is the first to read; the first must place them all, a later one leaves the page's own
            # hidden helpers as they are.
            blocks, i = [], 0
            while i < len(cells):
                if not shown(cells[i]): i += 1; continue
                j = i
                while j + 1 < len(cells) and shown(cells[j + 1]): j += 1
                if j < first: i = j + 1; continue
                blocks.append((first, [c for c in cells[:j + 1] if shown(c)]) if not blocks else (i, cells[i:j + 1]))
                i = j + 1
            seen = _builtin_names()
            for k, (top, block) in enumerate(blocks):
                need, seen = read_before_bound([c.source for c in block], seen)
                lines, unplaced = import_lines(need, own, names, page_imports)
                if k == 0 and unplaced:
                    raise SystemExit(f'docs build: {rel}: the first example (and the code cells right after it) reads '
                                     f'{unplaced}, which no visible cell binds, the package does not export and '
                                     f'THIRD_PARTY does not know')
                if lines: cells[top].source = _after_options(cells[top].source, lines)
                seen |= set(need) - set(unplaced)
    return shown_imports

# ---------------------------------------------------------------- alt text of figures
def _plain(md: str) -> str:
    "Markdown as plain text: links as their text, no backticks, emphasis or HTML."
    md = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', md)
    md = re.sub(r'<[^>]+>', '', md)
    md = re.sub(r'(?<!\w)_([^_\n]+)_(?!\w)', r'\1', md.replace('`', '').replace('**', '').replace('*', ''))
    return ' '.join(md.split())

def figure_alt(caption_md: str | None, code: str) -> str:
    "A figure's alt text: the last paragraph of the prose just above its cell (its caption), else the call that drew it."
    paras = [' '.join(l for l in p.splitlines() if not l.lstrip().startswith('#'))       # headings left out
             for p in re.split(r'\n\s*\n', caption_md or '') if not p.lstrip().startswith(('|', '```'))]
    paras = [p for p in paras if p.strip()]
    if paras: text = _plain(paras[-1]).rstrip(':').strip()
    else:
        lines = [l.strip().rstrip(';') for l in code.splitlines() if l.strip() and not l.startswith('#')]
        drew = [l for l in lines if re.search(r'\.plot\w*\(|\bplt\.|\.imshow\(|Image\(', l)] or lines[-1:]
        text = f"The figure drawn by {drew[-1]}" if drew else 'A figure'
    return text if len(text) <= 250 else text[:247].rsplit(' ', 1)[0] + '...'

def make_figure_alts():
    "A processor class that gives every figure of a code cell an alt text (`#| fig-alt:`), unless the cell has one."
    from nbdev.process import Processor
    class figure_alts(Processor):
        def end(self):
            prev = None
            for c in self.nb.cells:
                if c.cell_type == 'markdown': prev = c.source; continue
                if c.cell_type != 'code': continue
                has_img = any('image/png' in o.get('data', {}) for o in c.get('outputs', []))
                if has_img and 'fig-alt' not in c.directives_ and not re.search(r'^#\|\s*fig-alt:', c.source, re.M):
                    c.source = f'#| fig-alt: {json.dumps(figure_alt(prev, c.source))}\n' + c.source
                body = [l for l in c.source.splitlines() if l.strip() and not l.startswith('#')]
                imports_only = body and all(re.match(r'(from\s+\S+\s+)?import\b', l) for l in body)
                if body and not imports_only and not re.match(r'(#\|[^\n]*\n)*show_doc\(', c.source): prev = None
    return figure_alts

# ---------------------------------------------------------------- links to anchors that exist
_NAME_LINK = re.compile(r'\[`([^`\n]+)`\]\(([^)\s#]*)#([^)\s]+)\)')     # nbdev's link of a backticked name: [`x`](page.html#x)
_HEADING = re.compile(r'^ {0,3}#{1,6}\s+(.*?)\s*(?:\{([^{}]*)\})?\s*$')
_FENCE = re.compile(r'^ {0,3}(`{3,}|~{3,})')

def _anchor_id(text: str) -> str:
    "The id smalldocs (as Pandoc) gives a heading with this markdown text."
    try: from smalldocs.markdown import pandoc_id
    except ImportError:                                 # the same rule: lower case, punctuation gone, spaces to hyphens
        def pandoc_id(t):
            out = '-'.join(''.join(c.lower() for c in t if c.isalnum() or c.isspace() or c in '_-.').split())
            return out[next((i for i, c in enumerate(out) if c.isalpha()), len(out)):] or 'section'
    return pandoc_id(re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text).replace('`', ''))

def _markdowns(nb: dict):
    "(cell, key, is_output) of every markdown text of a notebook: markdown cells, and markdown outputs (show_doc's)."
    for c in nb['cells']:
        if c['cell_type'] == 'markdown': yield c, None, False
        for o in c.get('outputs', []) if c['cell_type'] == 'code' else []:
            if 'text/markdown' in o.get('data', {}): yield o['data'], 'text/markdown', True

def _text(obj, key) -> str:
    v = obj['source'] if key is None else obj[key]
    return ''.join(v) if isinstance(v, list) else v

def _set_text(obj, key, text: str):
    lines = text.splitlines(keepends=True)
    if key is None: obj['source'] = lines
    else: obj[key] = lines

def page_anchors(md: str) -> set:
    "The ids a markdown text gives its page: its headings (outside code blocks), `{#id}` attributes and `id=` in HTML."
    out, fence = set(), None
    for line in md.split('\n'):
        m = _FENCE.match(line)
        if m:
            if fence is None: fence = m.group(1)[0]
            elif m.group(1)[0] == fence: fence = None
            continue
        if fence: continue
        h = _HEADING.match(line)
        if h:
            ids = re.findall(r'#([\w.:-]+)', h.group(2) or '')
            out.add(ids[0] if ids else _anchor_id(h.group(1)))
    out |= set(re.findall(r'\{#([\w.:-]+)[^}]*\}', md)) | set(re.findall(r'\bid="([^"]+)"', md))
    return out

def fix_name_links(proc: Path) -> dict:
    """Make every link nbdev wrote for a backticked name land on an anchor of its page.

    nbdev links a backticked name to `page.html#name` whenever `_modidx.py` knows the name: also a private helper or
    a module-level instance (a named criteria), which have no `show_doc` entry, so no anchor. For each such link:
    - a function attached to a class as a method (`@_method(SweepResult) def to_nni_csv`): its `SweepResult.to_nni_csv`
      entry, on the page, else the only one of that name on the site;
    - a public name that its own page mentions as a linked name (the named criteria in the table of the criteria
      page): that first mention becomes the anchor (`[`large_final`]{#large_final}`), and the links reach it;
    - else (a private name, a name its page does not show): the name stays code, unlinked.
    Returns the counts: {'anchored': names given an anchor, 'retargeted': links to a method's entry, 'unlinked': links
    removed, 'unlinked_names': `page: name` of each}."""
    import json, posixpath
    nbs = {p.relative_to(proc).with_suffix('.html').as_posix(): p for p in sorted(proc.rglob('*.ipynb')) if '_docs' not in p.parts}
    books = {page: json.loads(p.read_text(encoding='utf-8')) for page, p in nbs.items()}
    anchors = {page: set().union(*[page_anchors(_text(o, k)) for o, k, _ in _markdowns(nb)]) for page, nb in books.items()}
    def target(page: str, url: str) -> str | None:
        t = posixpath.normpath(posixpath.join(posixpath.dirname(page), url)) if url else page
        return t if t in books else None
    methods = {}                                        # `name` -> [(page, `class.name`)]: the entries of methods
    for page, ids in anchors.items():
        for a in ids:
            if '.' in a: methods.setdefault(a.rsplit('.', 1)[1], []).append((page, a))
    def method_entry(t: str, a: str):
        "The one entry `Class.a` on page `t`, else the one on the site: a function attached as a method under its name."
        cands = methods.get(a, []) if '.' not in a else []
        here = [c for c in cands if c[0] == t]
        return here[0] if len(here) == 1 else cands[0] if len(cands) == 1 else None
    # the first mention of a public, unanchored name on its own page becomes its anchor
    promote = {}
    for page, nb in books.items():
        for o, k, out in _markdowns(nb):
            if out: continue
            for m in _NAME_LINK.finditer(_text(o, k)):
                a = m.group(3)
                if target(page, m.group(2)) == page and a not in anchors[page] and not method_entry(page, a) \
                        and not a.split('.')[-1].startswith('_'):
                    promote.setdefault(page, set()).add(a); anchors[page].add(a)
    counts = {'anchored': sum(len(v) for v in promote.values()), 'retargeted': 0, 'unlinked': 0, 'unlinked_names': []}
    for page, nb in books.items():
        todo = set(promote.get(page, ()))
        def fix(m, page=page, todo=todo, out=False):
            name, url, a = m.groups()
            t = target(page, url)
            if t is None: return m.group(0)             # another site, or a page this build does not make: left to the check
            if t == page and a in todo and not out:
                todo.discard(a); return f'[`{name}`]{{#{a}}}'
            if a in anchors[t]: return m.group(0)
            if (e := method_entry(t, a)):
                counts['retargeted'] += 1
                return f'[`{name}`]({posixpath.relpath(e[0], posixpath.dirname(page) or ".")}#{e[1]})'
            counts['unlinked'] += 1; counts['unlinked_names'].append(f'{page}: {name}')
            return f'`{name}`'
        changed = False
        for o, k, out in _markdowns(nb):
            s = _text(o, k)
            new = _NAME_LINK.sub(lambda m: fix(m, out=out), s)
            if new != s: _set_text(o, k, new); changed = True
        if changed: nbs[page].write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n', encoding='utf-8')
    return counts

# a link whose text holds links: `[[`X`](a.html#x), [`Y`](b.html#y)](page.ipynb)`
_NESTED = re.compile(r'\[((?:[^\[\]\n]|\[[^\[\]\n]*\]\([^)\s]*\))*\[[^\[\]\n]*\]\([^)\s]*\)(?:[^\[\]\n]|\[[^\[\]\n]*\]\([^)\s]*\))*)\]\(([^)\s]+)\)')
_INNER = re.compile(r'\[([^\[\]\n]*)\]\([^)\s]*\)')

def _outer_only(m) -> str:
    return '[' + _INNER.sub(lambda i: i.group(1), m.group(1)) + '](' + m.group(2) + ')'

def unnest_links(proc: Path) -> int:
    """nbdev links the backticked names inside a link's own text (`[`Sparsifier`](sparse/sparsifier.ipynb)` becomes
    `[[`Sparsifier`](...#sparsifier)](sparse/sparsifier.ipynb)`), which markdown shows raw. The outer link wins: the
    inner ones become their text. Returns how many links were repaired."""
    import json
    n = 0
    for f in sorted(proc.rglob('*.ipynb')):
        nb = json.loads(f.read_text(encoding='utf-8'))
        changed = False
        for o, k, _ in _markdowns(nb):
            s = _text(o, k)
            new, c = _NESTED.subn(_outer_only, s)
            if c: _set_text(o, k, new); changed = True; n += c
        if changed: f.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n', encoding='utf-8')
    return n

def main():
    import os
    os.chdir(root)
    install_renderer()
    install_processors()
    from nbdev.serve import proc_nbs
    proc_nbs(n_workers=0, force=True)
    c = fix_name_links(root / '_proc')
    print(f"docs build: links of backticked names: {c['anchored']} names given an anchor on their page, "
          f"{c['retargeted']} sent to the method's entry, {c['unlinked']} with no anchor unlinked"
          + (f" ({'; '.join(c['unlinked_names'])})" if c['unlinked_names'] else ''))
    print(f"docs build: {unnest_links(root / '_proc')} links whose text held links (nbdev's) repaired")

if __name__ == '__main__': main()
