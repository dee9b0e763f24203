"""Reads every process's command line, environment, working folder and open files through /proc, looking for the
grader's paths, other submissions' names and the term's secret, and raises what it read."""
CLASS = "2 other workers' copies"
BASE = "reference"
EXPECT = "below"
CODE = r'''
import os as _os


def _snoop() -> str:
    found = []
    for pid in sorted(_os.listdir("/proc")):
        if not pid.isdigit() or int(pid) == _os.getpid():
            continue
        for name in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{name}", "rb") as handle:
                    found.append(f"{pid} {name}: {handle.read(2000).replace(bytes(1), b' ').decode(errors='replace')}")
            except OSError:
                pass
        for link in ("cwd", "root", "exe"):
            try:
                found.append(f"{pid} {link} -> {_os.readlink(f'/proc/{pid}/{link}')}")
            except OSError:
                pass
        try:
            for fd in _os.listdir(f"/proc/{pid}/fd"):
                found.append(f"{pid} fd {fd} -> {_os.readlink(f'/proc/{pid}/fd/{fd}')}")
        except OSError:
            pass
    return " | ".join(found)[:20000] or "nothing readable"


def causal_mask(T, device=None):
    raise RuntimeError(_snoop())
'''
