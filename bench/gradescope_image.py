"""An autograder zip's image built as Gradescope builds it, on a fresh Debian system, then a reference graded in it.

    sudo .venv/bin/python bench/gradescope_image.py [--assignment masking] [--system DIR] [--wheels /opt/wheels]

``--system``: a root file system made by ``debootstrap --variant=minbase bookworm DIR http://deb.debian.org/debian``
(Gradescope's base images are Ubuntu's, whose archive this project's machines cannot reach; Debian 12's Python, 3.11,
is one the grader supports as Ubuntu 22.04's 3.10 and 24.04's 3.12 are). It is copied first, so one debootstrap
serves every run. Then, as Gradescope does: the zip unpacked in ``/autograder/source``, ``setup.sh`` run there as root
in a chroot (``/proc``, ``/sys``, ``/dev`` bound in; Debian's archive and PyPI reachable), with the CPU build of torch
carried in (``--wheels``: a folder holding it, given to pip as ``PIP_FIND_LINKS``, since PyTorch's index is not
reachable from here); then the reference copied to ``/autograder/submission`` and ``/autograder/run_autograder`` run
without namespaces. Prints each step's time and the score; the exit status is 1 unless the reference got full marks
both in setup.sh's self-test and from run_autograder. Too heavy for CI (a Debian system, torch and the rest: minutes,
over a gigabyte): run by hand, figures in docs/performance.md ("Gradescope's image").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from autograder import course
from autograder.authoring import dist
from autograder.sandbox import permissions

BINDS = ("proc", "sys", "dev")


@contextlib.contextmanager
def bound(system: Path):
    """``/proc``, ``/sys`` and ``/dev`` of this machine bound into ``system`` for the block, and its DNS settings."""
    mounted = []
    try:
        for name in BINDS:
            subprocess.run(["mount", "--rbind", f"/{name}", str(system / name)], check=True)
            mounted.append(system / name)
        shutil.copy2("/etc/resolv.conf", system / "etc" / "resolv.conf")
        yield
    finally:
        for path in reversed(mounted):
            subprocess.run(["umount", "--recursive", "--lazy", str(path)], check=False)


def chroot(system: Path, command: str, env: dict[str, str]) -> tuple[float, int]:
    """Run ``command`` with bash in the chroot, its output shown as it comes; (seconds, exit status)."""
    started = time.monotonic()
    environment = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", **env}
    if permissions.UIDS_ENV in os.environ:  # the chroot's grader leases the host's uids: from this grader's pool
        environment[permissions.UIDS_ENV] = os.environ[permissions.UIDS_ENV]
    status = subprocess.run(["chroot", str(system), "/bin/bash", "-c", command], env=environment).returncode
    return time.monotonic() - started, status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", default="masking")
    parser.add_argument("--system", type=Path, required=True, help="a debootstrapped root file system (copied)")
    parser.add_argument("--wheels", type=Path, default=Path("/opt/wheels"), help="a folder holding torch's CPU wheel")
    options = parser.parse_args()
    name = options.assignment
    with tempfile.TemporaryDirectory(prefix="gradescope-image-", dir=options.system.parent) as folder:
        system = Path(folder) / "root"
        started = time.monotonic()
        subprocess.run(["cp", "-a", str(options.system), str(system)], check=True)
        print(f"copied the Debian system in {time.monotonic() - started:.0f} s", flush=True)
        zip_path = dist.build_gradescope([name], Path(folder))[0]
        source = system / "autograder" / "source"
        with zipfile.ZipFile(zip_path) as archive:
            archive.extractall(source)
        for script in ("setup.sh", "run_autograder"):
            (source / script).chmod(0o755)
        shutil.copy2(source / "run_autograder", system / "autograder" / "run_autograder")
        shutil.copytree(options.wheels, system / "wheels")
        # PyTorch's index, which setup.sh names and which also serves torch's own requirements, is not reachable from
        # here: torch comes from --wheels, and what it requires from PyPI.
        # This machine reaches PyPI through a proxy its own certificates vouch for: pip in the image trusts them too.
        shutil.copy2("/etc/ssl/certs/ca-certificates.crt", system / "host-certificates.crt")
        pip = {"PIP_FIND_LINKS": "/wheels", "PIP_EXTRA_INDEX_URL": "https://pypi.org/simple", "PIP_RETRIES": "0",
               "PIP_TIMEOUT": "10", "PIP_CERT": "/host-certificates.crt"}
        with bound(system):
            seconds, status = chroot(system, "cd /autograder/source && ./setup.sh", pip)
            print(f"setup.sh: exit status {status} in {seconds:.0f} s (its self-test graded the reference)", flush=True)
            if status != 0:
                return 1
            shutil.copytree(course.load(name).solution_dir, system / "autograder" / "submission")
            seconds, status = chroot(system, "cd /autograder && AUTOGRADER_NAMESPACES=0 ./run_autograder", {})
        results = json.loads((system / "autograder" / "results" / "results.json").read_text())
        total = results["extra_data"]["max_score"]
        print(f"run_autograder: exit status {status} in {seconds:.0f} s: {results['score']:g} / {total:g} "
              f"({results['extra_data'].get('status')}; {results['extra_data'].get('isolation', '')[:200]})")
        full = results["score"] == total > 0
        print("FULL MARKS" if full else "NOT FULL MARKS")
        return 0 if full else 1


if __name__ == "__main__":
    sys.exit(main())
