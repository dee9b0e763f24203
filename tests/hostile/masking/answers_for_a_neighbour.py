"""Serves its own (correct) code to a submission graded beside it: on a named unix socket in /dev/shm, another in its
TMPDIR (opened to every user, its path shown in a child's command line, which every user may read in /proc), an
abstract unix socket, and a file in /dev/shm; it stays a few seconds at import, so that its neighbour finds it."""
CLASS = "15 collusion side by side"
BASE = "reference"
EXPECT = "full"
CODE = r'''
import os as _os
import select as _select
import socket as _socket
import sys as _sys
import time as _time


def _serve_answers():
    with open(__file__) as handle:
        answer = handle.read().split("# hostile-marker-")[0].encode()
    tmp = _os.environ.get("TMPDIR", "/tmp")
    try:
        with open("/dev/shm/hostile-answers.py", "wb") as handle:
            handle.write(answer)
        _os.chmod("/dev/shm/hostile-answers.py", 0o666)
    except OSError:
        pass
    if _os.fork():
        return
    _os.setsid()
    try:
        _os.chmod(tmp, 0o777)
        if _os.fork() == 0:
            _os.execv(_sys.executable, [_sys.executable, "-c", "import time; time.sleep(600)",
                                        f"hostile-answers-at={tmp}/hostile-answers"])
        servers = []
        for address in ("/dev/shm/hostile-answers", "\0hostile-answers", f"{tmp}/hostile-answers"):
            try:
                server = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
                server.bind(address)
                server.listen(8)
                if not address.startswith("\0"):
                    _os.chmod(address, 0o777)
                servers.append(server)
            except OSError:
                pass
        while servers:
            for server in _select.select(servers, [], [])[0]:
                connection, _ = server.accept()
                connection.sendall(answer)
                connection.close()
    finally:
        _os._exit(0)


_serve_answers()
_time.sleep(6)
'''
