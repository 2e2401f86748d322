"""Write .ci/constraints.txt, the exact set CI installs (`pip install -c .ci/constraints.txt -e ".[dev]"`),
from a venv where fasterai[dev] is installed and tested: run it with that venv's python after a green CI
(`~/.cache/fasterai-ci/venv/bin/python .ci/lock.py`). It walks settings.ini's `requirements`,
`fastai_requirements` and `dev_requirements` through the installed distributions' metadata, so only what the project resolves is locked:
no editable or local lines, nothing installed by hand beside it, no pip/setuptools/wheel.
`--check` fails if the venv differs from the file (a package missing, or at another version).

`--low` does the same for a venv at the low end of the torch range (.ci/low_torch builds them): only fasterai's
`requirements` and the smoke suite's torchvision and transformers (no fastai, no docs tools), written to
`.ci/constraints-low-torch<version>.txt` after the venv's torch; each such file is one venv that CI tests."""
import sys
from configparser import ConfigParser
from importlib.metadata import distribution, PackageNotFoundError
from pathlib import Path
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

root = Path(__file__).resolve().parent.parent
LOW = '--low' in sys.argv
TOOLS = {'pip', 'setuptools', 'wheel'}      # upgraded separately in .ci/run, as `pip freeze` leaves them out
SMOKE = {'torchvision', 'transformers'}     # what the low-torch venvs add to `requirements`: the smoke suite's models

def declared() -> list[Requirement]:
    "settings.ini's requirement lists (--low: `requirements` and the smoke suite's): what this checkout declares."
    cfg = ConfigParser(delimiters=['=']); cfg.read(root / 'settings.ini', encoding='utf-8')
    lists = ('requirements', 'fastai_requirements', 'export_requirements', 'dev_requirements')
    reqs = [(k, Requirement(r)) for k in lists for r in cfg['DEFAULT'].get(k, '').split()]
    return [r for k, r in reqs if not LOW or k == 'requirements' or r.name in SMOKE]

def lock_file() -> Path:
    "The file this venv is locked in: .ci/constraints.txt, or with --low the one named after its torch."
    if not LOW: return root / '.ci' / 'constraints.txt'
    return root / '.ci' / f"constraints-low-torch{distribution('torch').version}.txt"

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
    what = (f"`pip install -c .ci/{lock_file().name} -e . {' '.join(sorted(SMOKE))}` (see .ci/low_torch)" if LOW else
            "`pip install -c .ci/constraints.txt -e \".[dev]\"` (see .ci/run)")
    head = (f"# The exact set CI tests: {what}.\n"
            f"# Written by .ci/lock.py{' --low' if LOW else ''} from a passing venv; "
            "settings.ini holds the ranges users get.\n"
            f"# Python {sys.version_info.major}.{sys.version_info.minor}, {sys.platform}.\n")
    return head + ''.join(f"{n}=={v}\n" for n, v in sorted(pins.items(), key=lambda p: p[0].lower()))

if __name__ == '__main__':
    pins, out = resolved(), lock_file()
    if '--check' in sys.argv:
        want = {canonicalize_name(l.split('==')[0]): l.split('==')[1] for l in out.read_text().split('\n') if '==' in l}
        have = {canonicalize_name(n): v for n, v in pins.items()}
        diff = sorted(f"  {n}: locked {want.get(n, '-')}, installed {have.get(n, '-')}" for n in want.keys() | have.keys()
                      if want.get(n) != have.get(n))
        if diff: sys.exit(f"the venv is not the locked set (.ci/{out.name}):\n" + '\n'.join(diff))
        print(f"venv matches .ci/{out.name} ({len(want)} packages)")
    else:
        out.write_text(render(pins)); print(f"wrote {out.relative_to(root)} ({len(pins)} packages)")
