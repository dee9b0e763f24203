# Two entry points, both self-contained on a fresh machine: `make demo` and `make test`.
# Everything runs from a local virtual environment (.venv), created on first use and
# rebuilt when pyproject.toml changes.

# Student code runs as unprivileged users, who must be able to run the venv's interpreter where namespaces are not
# available (as root in Docker): prefer the system's python3.11 to one under a private home (pyenv's, in /root).
PYTHON ?= $(shell /usr/bin/python3.11 -c "import ensurepip, venv" 2>/dev/null && echo /usr/bin/python3.11 || echo python3.11)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JOBS ?= 2

.PHONY: demo test lint build validate clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; install Python 3.11 or run make PYTHON=/path/to/python3.11"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,cluster]"
	@touch $(STAMP)

# The demo skips the lm retraining test (minutes per submission on a CPU); `make demo RETRAIN=1` runs it.
demo: $(STAMP)
	$(BIN)/autograder grade examples --out results/demo --jobs $(JOBS) $(if $(RETRAIN),,--skip-tag retraining)

# The class report's test drives Debian's Chromium; installed here when we are root, skipped (with a message) when not.
# The tests run $(JOBS) at a time, a test file per process, their threads waiting passively as side-by-side gradings'
# do, files marked slow first (tests/conftest.py; xdist would order files by their number of tests); those marked
# `alone` count sandbox processes and files machine-wide, so they run afterwards, by themselves.
test: $(STAMP) lint
	@command -v chromium >/dev/null || [ "$$(id -u)" != 0 ] || apt-get install -y -qq chromium chromium-driver \
		>/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null) \
		|| echo "note: could not install chromium; tests/test_report.py skips its browser test"
	$(BIN)/autograder build --check
	$(BIN)/autograder validate --jobs $(JOBS)
	OMP_WAIT_POLICY=PASSIVE $(BIN)/python -m pytest tests -m "not alone" -n $(JOBS) --dist loadfile \
		--no-loadscope-reorder --durations=15
	$(BIN)/python -m pytest tests -m alone --durations=5

lint: $(STAMP)
	$(BIN)/ruff check .

build: $(STAMP)
	$(BIN)/autograder build

validate: $(STAMP)
	$(BIN)/autograder validate --jobs $(JOBS)

clean:
	rm -rf $(VENV) results
