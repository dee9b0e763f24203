#!/usr/bin/env bash
# Debian's Chromium and ChromeDriver, for tests/report/test_report.py's browser test, installed while `make test` does
# other work:
#   scripts/chromium.sh start   # as root, where chromium is missing: start installing it in the background
#   scripts/chromium.sh wait    # wait for that install to end; say so when chromium is still missing
# On a fresh machine the install is long (about a hundred packages, after `apt-get update` when the package
# lists are missing); started first, it overlaps building .venv and validating the suites. The background install
# holds a lock (flock) that `wait` takes: no process id to go stale between the two. Without root nothing is
# installed and the test skips, saying how to install Chromium.
set -euo pipefail
state=build/chromium
packages=(chromium chromium-driver)

case "${1:-}" in
start)
    command -v chromium >/dev/null && exit 0
    [ "$(id -u)" = 0 ] || exit 0
    mkdir -p "$state"
    exec 9>"$state/lock"
    flock 9
    # The subshell holds the lock until apt-get ends (apt-get and what it starts do not inherit it); its output goes
    # to the log, so that nothing of make's output stays open behind it.
    (
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq "${packages[@]}" 9>&- \
            || { apt-get update -qq 9>&- && apt-get install -y -qq "${packages[@]}" 9>&-; } || true
    ) >"$state/install.log" 2>&1 </dev/null &
    ;;
wait)
    [ -f "$state/lock" ] && flock "$state/lock" true
    command -v chromium >/dev/null \
        || echo "note: Chromium is not installed (see $state/install.log when make test ran as root);" \
            "tests/report/test_report.py skips its browser test"
    ;;
*)
    echo "usage: $0 start|wait" >&2
    exit 2
    ;;
esac
