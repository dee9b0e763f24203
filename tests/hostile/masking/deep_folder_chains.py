"""Makes a chain of 5000 folders (deeper than any path can name, a folder of mode 0 on the way) in its working
folder, its temporary folder and /dev/shm, at import: clean-up must remove them all, and the gradings after it
must still run."""
CLASS = "12 trees the grader walks"
BASE = "reference"
EXPECT = "full"
CODE = r'''
import os as _os
import tempfile as _tempfile


def _chain(folder, levels=5000):
    try:
        top = _os.open(folder, _os.O_RDONLY | _os.O_DIRECTORY)
    except OSError:
        return
    name = f"hostile-chain-{_os.getpid()}"
    for level in range(levels):
        try:
            _os.mkdir(name, dir_fd=top)
            below = _os.open(name, _os.O_RDONLY | _os.O_DIRECTORY, dir_fd=top)
        except OSError:
            break
        if level == levels // 2:
            _os.chmod(name, 0, dir_fd=top)
        _os.close(top)
        top, name = below, "level\n\udcff"
    _os.close(top)


for _folder in (".", _tempfile.gettempdir(), "/dev/shm"):
    _chain(_folder)
'''
