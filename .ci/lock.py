"""Write .ci/constraints.txt, the exact set CI installs (`pip install -c .ci/constraints.txt -e ".[dev]"`),
from a venv where fasterai[dev] is installed and tested: run it with that venv's python after a green CI
(`~/.cache/fasterai-ci/venv/bin/python .ci/lock.py`). It walks settings.ini's `requirements`,
`fastai_requirements` and `dev_requirements` through the installed distributions' metadata, so only what the project resolves is locked:
no editable or local lines, nothing installed by hand beside it, no pip/setuptools/wheel.
`--check` fails if the venv differs from the file (a package missing, or at another version)."""
import sys
from configparser import ConfigParser
from importlib.metadata import distribution, PackageNotFoundError
from pathlib import Path
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

root = Path(__file__).resolve().parent.parent
out = root / '.ci' / 'constraints.txt'
TOOLS = {'pip', 'setuptools', 'wheel'}      # upgraded separately in .ci/run, as `pip freeze` leaves them out

def declared() -> list[Requirement]:
    "settings.ini's `requirements` and `dev_requirements`: what this checkout declares (not an older install's metadata)."
    cfg = ConfigParser(delimiters=['=']); cfg.read(root / 'settings.ini', encoding='utf-8')
    return [Requirement(r) for k in ('requirements', 'fastai_requirements', 'dev_requirements') for r in cfg['DEFAULT'].get(k, '').split()]

def resolved() -> dict[str, str]:
    "The installed distributions the declared requirements need, transitively, as name -> version."
    seen, todo = {}, [(r.name, set(r.extras)) for r in declared() if not r.marker or r.marker.evaluate()]
    while todo:
        name, extras = todo.pop()
        try: dist = distribution(name)
        except PackageNotFoundError: sys.exit(f"{name} is required but not installed in {sys.prefix}")
        key = canonicalize_name(dist.metadata['Name'])
        done = seen.get(key)
        if done is not None and extras <= done[1]: continue
        seen[key] = (dist.version, extras | (done[1] if done else set()), dist.metadata['Name'])
        for r in map(Requirement, dist.requires or []):
            if r.marker and not any(r.marker.evaluate({'extra': e}) for e in (extras or {''})): continue
            todo.append((r.name, set(r.extras)))
    return {n: v for k, (v, _, n) in seen.items() if k != 'fasterai' and k not in TOOLS}

def render(pins: dict[str, str]) -> str:
    head = ("# The exact set CI tests: `pip install -c .ci/constraints.txt -e \".[dev]\"` (see .ci/run).\n"
            "# Written by .ci/lock.py from a passing venv; settings.ini holds the ranges users get.\n"
            f"# Python {sys.version_info.major}.{sys.version_info.minor}, {sys.platform}.\n")
    return head + ''.join(f"{n}=={v}\n" for n, v in sorted(pins.items(), key=lambda p: p[0].lower()))

if __name__ == '__main__':
    pins = resolved()
    if '--check' in sys.argv:
        want = {canonicalize_name(l.split('==')[0]): l.split('==')[1] for l in out.read_text().split('\n') if '==' in l}
        have = {canonicalize_name(n): v for n, v in pins.items()}
        diff = sorted(f"  {n}: locked {want.get(n, '-')}, installed {have.get(n, '-')}" for n in want.keys() | have.keys()
                      if want.get(n) != have.get(n))
        if diff: sys.exit("the venv is not the locked set (.ci/constraints.txt):\n" + '\n'.join(diff))
        print(f"venv matches .ci/constraints.txt ({len(want)} packages)")
    else:
        out.write_text(render(pins)); print(f"wrote {out.relative_to(root)} ({len(pins)} packages)")
