"""Every file that must never reach students carries the canary line the distribution scan looks for."""

from autograder.course import CANARY, REPO_ROOT, SUITES_DIR


def test_hidden_tests_and_mutants_carry_the_canary():
    files = [*SUITES_DIR.glob("*/hidden/**/*.py"), *(REPO_ROOT / "tests" / "mutants").glob("*/*.py")]
    files = [f for f in files if f.name != "__init__.py"]
    assert files
    missing = [str(f.relative_to(REPO_ROOT)) for f in files if CANARY not in f.read_text()]
    assert not missing, f"add the line '# {CANARY}' to: {missing}"
