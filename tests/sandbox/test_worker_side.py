"""The line between the trusted grader and the student side: what a worker is given. Which modules may import which is
checked by the import contracts (tests/house/test_layers.py)."""

from __future__ import annotations


def test_the_terms_secret_travels_in_the_job_not_in_an_environment(tmp_path, monkeypatch):
    """A runner's environment and command line can be read more widely than its stdin: the secret goes by stdin, and
    a worker's environment holds no path and no secret at all."""
    from autograder.batch.runners import Runners
    from autograder.sandbox.config import Limits
    from autograder.sandbox.isolation import Isolation
    from autograder.sandbox.process import Sandbox

    monkeypatch.setenv("AUTOGRADER_SECRET", "term-secret")
    runners = Runners(Isolation.detect())
    runners.scratch = tmp_path
    assert "AUTOGRADER_SECRET" not in runners.environment()
    worker = Sandbox(tmp_path, {}, Limits(), Isolation.detect())._environment()
    assert "term-secret" not in str(worker) and not [v for k, v in worker.items() if k != "PATH" and "/" in v]
