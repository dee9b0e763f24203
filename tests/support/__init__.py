"""What the harness's tests share beyond fixtures and hooks (``tests/conftest.py`` keeps those), imported as
``from support.x import ...`` (pytest puts ``tests/`` on the path: ``pythonpath`` in pyproject.toml):
``submissions`` (the course, masking submissions built from the reference and graded with the real batch),
``machine`` (root or not, a private /tmp folder, a chain of folders past PATH_MAX), ``catalogue`` (the hostile
catalogue's cases), ``lm`` (the LM reference, a tiny preset and world, the retraining run alone), ``classmates`` (a
synthetic class), ``browser`` (Chromium for the report's pages), ``opened`` (what people open, read as they read it)
and ``not_linux`` (a system without Linux's layers, simulated)."""
