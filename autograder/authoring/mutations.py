"""Mistakes beyond the catalogue: tensor-aware mutation operators over what students write in ``solutions/``.

The hand-written catalogue (``tests/mutants/``) holds the mistakes its authors thought of; these operators make the
small slips nobody listed, one at a time, in every line a student writes (inside the solution markers,
``markers.solution_line_numbers``; never inside an f-string, a message's text), in ``.py`` files and in notebook code
cells alike:

- ``dim``: an axis moved (``dim=-1`` to ``-2``, ``transpose(-2, -1)`` to ``transpose(-3, -1)``, ``softmax(x, 1)``);
- ``slice``: a bound or an index off by one (``x[:, :-1]`` to ``x[:, :-2]``, ``x[0]`` to ``x[1]``);
- ``drop``: a call left out (``scores.masked_fill(...)`` to ``scores``, ``self.dropout(y)`` to ``y``,
  ``math.sqrt(d)`` to ``d``, a statement such as ``optimizer.zero_grad()`` to ``pass``);
- ``swap``: two arguments, or the operands of a non-commutative operator, exchanged;
- ``mode``: training and evaluation flipped (``.train()`` and ``.eval()``, ``self.training``, ``no_grad``);
- ``constant``: a number changed (``10000`` to ``1000``, ``n`` to ``n + 1``, ``0.5`` to ``1.0``);
- ``compare``: a comparison or a logical operator flipped (``<`` and ``<=``, ``&`` and ``|``, ``not x`` to ``x``);
- ``arith``: an arithmetic operator changed (``+`` and ``-``, ``*`` and ``/``, ``@`` to ``*``, ``-x`` to ``x``).

Why our own operators and not mutmut or cosmic-ray: both mutate an importable package and run its own test command
on it in place, with generic operators (a number plus one, a string changed, an operator flipped). The references
here are graded as submissions are, through the sandboxed grader, from a copy of the folder, and two of them live in
notebooks; and the slips that matter in tensor code (an axis, a dropped mask, a train/eval flip) are not among
those tools' operators. A mutant is a whole file text, so it is graded exactly as a student's file would be.

A mutant's ``id`` is stable while the function it lives in keeps its code: the file, the function, the operator and
a digest of what changed (and which occurrence of that change in the function it is), never a line number.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from autograder import course
from autograder.authoring.markers import enclosing_functions, solution_line_numbers

OPERATORS = ("dim", "slice", "drop", "swap", "mode", "constant", "compare", "arith")
# Functions and methods whose integer arguments are axes.
AXIS_CALLS = frozenset({
    "softmax", "log_softmax", "sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "cumsum", "cumprod",
    "unsqueeze", "squeeze", "flip", "norm", "var", "std", "logsumexp", "size", "transpose", "chunk", "cat", "stack",
    "roll", "repeat_interleave", "gather", "narrow", "select", "movedim", "flatten", "all", "any", "prod", "sort",
    "topk", "diff"})
AXIS_KEYWORDS = frozenset({"dim", "axis", "dims", "dim0", "dim1"})
# Receivers whose functions drop to their first argument (``torch.exp(x)`` to ``x``), and not to the receiver.
NAMESPACES = frozenset({"torch", "math", "nn", "F", "functional", "np", "numpy", "random"})
# Calls that build a value rather than transform their first argument: dropping them says nothing.
BUILDERS = frozenset({
    "zeros", "ones", "full", "empty", "arange", "linspace", "tensor", "as_tensor", "randn", "rand", "randint",
    "randperm", "zeros_like", "ones_like", "full_like", "empty_like", "randn_like", "rand_like", "stack", "cat",
    "Generator", "manual_seed", "device", "Linear", "Embedding", "LayerNorm", "Dropout", "Parameter", "ModuleList",
    "Sequential", "where", "no_grad", "enable_grad", "inference_mode", "isfinite", "isnan", "get", "setdefault",
    "append", "extend", "join", "format", "startswith", "endswith", "index", "count", "open", "read_text", "split",
    "range", "len", "enumerate", "zip", "list", "tuple", "dict", "set", "isinstance", "super", "print", "next",
    "iter", "any", "all", "type", "getattr", "hasattr", "Path", "str", "int", "float", "bool", "min", "max", "sum",
    "map", "filter", "items", "keys", "values", "view", "reshape", "expand", "numel", "dim", "size", "item",
    "tolist", "parameters", "named_parameters", "state_dict", "load_state_dict", "register_buffer", "to"})
# Methods whose removal leaves the same value in every test (a copy, a layout, a read): not worth a grading.
NO_OPS = frozenset({"contiguous", "clone", "detach", "cpu", "numpy", "tolist", "item", "numel", "dim", "size"})
# Calls whose arguments commute (swapping them changes nothing) or whose arguments are axes (the ``dim`` operator).
SYMMETRIC = frozenset({"maximum", "minimum", "max", "min", "add", "mul", "eq", "ne", "logical_and", "logical_or",
                       "isclose", "allclose", "equal", "zip", "hypot", "transpose", "swapaxes", "dict", "setdefault"})


@dataclass(frozen=True)
class Mutation:
    """One mutant: ``text`` is the whole mutated file (a notebook's JSON for a cell of ``file``)."""

    file: str
    function: str
    operator: str
    line: int
    before: str
    after: str
    text: str = field(repr=False)
    digest: str

    @property
    def id(self) -> str:
        """Stable while the function keeps its code: file, function, operator and a digest of the change."""
        return f"{self.file}:{self.function}:{self.operator}:{self.digest}"

    @property
    def change(self) -> str:
        """What changed, as read in the reference (``dim=-1 -> dim=-2``)."""
        return f"{self.before} -> {self.after}"

    def materialize(self, assignment: course.Assignment, into: Path) -> Path:
        """The reference with this mutation applied, written into the new folder ``into``; returns it."""
        shutil.copytree(assignment.solution_dir, into, symlinks=False)  # a carried file's link becomes a copy
        (into / self.file).write_text(self.text)
        return into


def generate(assignment: course.Assignment, operators: tuple[str, ...] = OPERATORS,
             functions: tuple[str, ...] = ()) -> list[Mutation]:
    """Every mutant of ``assignment``'s own files (``functions``: only in those, by qualified name), in file order."""
    found: list[Mutation] = []
    for name in assignment.own_files:
        path = assignment.solution_dir / name
        if path.suffix == ".ipynb":
            notebook = json.loads(path.read_text())
            for index, cell in enumerate(notebook["cells"]):
                if cell.get("cell_type") != "code":
                    continue
                source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]

                def rebuilt(text: str, index: int = index, notebook: dict = notebook) -> str:
                    changed = copy.deepcopy(notebook)
                    changed["cells"][index]["source"] = text
                    return json.dumps(changed, indent=1)

                found += _mutations(name, source, rebuilt, operators, functions)
        else:
            found += _mutations(name, path.read_text(), lambda text: text, operators, functions)
    return found


def _mutations(file: str, source: str, rebuilt, operators, functions) -> list[Mutation]:
    """The mutants of one unit of code (a module, a notebook cell); ``rebuilt(text)`` is the file holding ``text``."""
    lines = set(solution_line_numbers(source))
    if not lines:
        return []
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a notebook cell of magics: nothing a student writes is mutated there
        return []
    owners = _owners(tree)
    data = source.encode()
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line.encode()))
    tops = {line: index for index, top in enumerate(tree.body) for line in range(top.lineno, top.end_lineno + 1)}
    originals: dict[int, str] = {}
    out, seen, occurrences = [], set(), {}
    for node, operator, replacement in _candidates(tree, lines, operators):
        owner = owners.get(node.lineno, "<module>")
        if functions and owner not in functions:
            continue
        start = starts[node.lineno - 1] + node.col_offset
        end = starts[node.end_lineno - 1] + node.end_col_offset
        before, after = data[start:end].decode(), ast.unparse(replacement)
        text = (data[:start] + (after if isinstance(node, ast.stmt) else f"({after})").encode() + data[end:]).decode()
        try:
            mutated = ast.parse(text)
        except SyntaxError:
            continue
        top = tops[node.lineno]  # the top-level statement it changed: the same one, at the same place, in both trees
        if top not in originals:
            originals[top] = ast.dump(tree.body[top])
        changed = ast.dump(mutated.body[top])
        if changed == originals[top] or (top, changed) in seen:  # no change, or one made already
            continue
        seen.add((top, changed))
        key = (owner, operator, before, after)
        occurrences[key] = occurrences.get(key, 0) + 1
        digest = hashlib.sha256("\x1f".join(map(str, (*key, occurrences[key]))).encode()).hexdigest()[:8]
        out.append(Mutation(file, owner, operator, node.lineno, " ".join(before.split()), after, rebuilt(text),
                            digest))
    return out


def _owners(tree: ast.Module) -> dict[int, str]:
    """Line -> the qualified name of the function around it, or of the top-level name a statement assigns."""
    owners = enclosing_functions(tree)
    for statement in tree.body:
        if isinstance(statement, ast.Assign | ast.AnnAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            for line in range(statement.lineno, (statement.end_lineno or statement.lineno) + 1):
                owners.setdefault(line, names[0] if names else "<module>")
    return owners


def _candidates(tree: ast.Module, lines: set[int], operators) -> Iterator[tuple[ast.AST, str, ast.AST]]:
    """(node, operator, replacement node) for every node that starts on a solution line."""
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    subscripts = [node for node in ast.walk(tree) if isinstance(node, ast.Subscript)]
    axis = {id(arg) for node in calls if _name(node.func) in AXIS_CALLS for arg in node.args
            if _integer(arg) is not None}
    axis |= {id(k.value) for node in calls for k in node.keywords if k.arg in AXIS_KEYWORDS}
    index = {id(node.slice) for node in subscripts}
    index |= {id(element) for node in subscripts if isinstance(node.slice, ast.Tuple) for element in node.slice.elts}
    bounds = [node for node in ast.walk(tree) if isinstance(node, ast.Slice)]
    bound = {id(value) for node in bounds for value in (node.lower, node.upper) if value is not None}
    # the 1 of an axis, an index or a bound -1 belongs to it, and is no constant of its own
    signed = {id(node.operand) for node in ast.walk(tree) if isinstance(node, ast.UnaryOp) and id(node) in
              axis | index | bound and _integer(node) is not None}
    marks = Marks(axis, index, bound, signed)
    # what an f-string formats is a message's text: a change there changes no value a test could grade
    messages = {id(inner) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for inner in ast.walk(node)}
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) not in lines or id(node) in messages:
            continue
        for operator in operators:
            for replacement in _OPERATORS[operator](node, marks):
                yield node, operator, replacement


@dataclass(frozen=True)
class Marks:
    """What the nodes of one unit are, by ``id``: an ``axis`` argument, an ``index``, a slice ``bound``, or the
    number under the minus sign of one of those (``signed``)."""

    axis: set[int]
    index: set[int]
    bound: set[int]
    signed: set[int]


def _name(func: ast.AST) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _integer(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _number(value: int) -> ast.AST:
    return ast.Constant(value) if value >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-value))


def _dim(node, marks):
    """An axis moved to its neighbour: -1 and -2 swap, -3 to -2, 0 and 1 swap, 2 to 1."""
    value = _integer(node) if id(node) in marks.axis else None
    if value is not None:
        yield _number({-1: -2, -2: -1, 0: 1, 1: 0}.get(value, value + 1 if value < 0 else value - 1))


def _slice(node, marks):
    """A slice bound one off either way; an integer index one further from the start or the end."""
    if id(node) in marks.bound:
        for op in (ast.Add(), ast.Sub()):
            yield ast.BinOp(node, op, ast.Constant(1))
    elif id(node) in marks.index and _integer(node) is not None:
        value = _integer(node)
        yield _number(value + 1 if value >= 0 else value - 1)


def _drop(node, marks):
    """A call left out: a method to its receiver, a function to its first argument, a statement to ``pass``."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        yield ast.Pass()
        return
    if not isinstance(node, ast.Call) or _name(node.func) in BUILDERS:
        return
    first = node.args[0] if node.args and not isinstance(node.args[0], ast.Starred) else None
    func = node.func
    if isinstance(func, ast.Attribute):
        root = func.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and (root.id in NAMESPACES or root.id == "self"):
            if first is not None:
                yield first
        elif func.attr not in NO_OPS:
            yield func.value
    elif isinstance(func, ast.Name) and first is not None:
        yield first


def _swap(node, marks):
    """Two neighbouring positional arguments exchanged, or the operands of ``-``, ``/``, ``//``, ``%``, ``**``,
    ``@``."""
    if isinstance(node, ast.Call) and _name(node.func) not in SYMMETRIC:
        for index in range(len(node.args) - 1):
            a, b = node.args[index], node.args[index + 1]
            if isinstance(a, ast.Starred) or isinstance(b, ast.Starred) or ast.dump(a) == ast.dump(b):
                continue
            changed = copy.copy(node)
            changed.args = [*node.args[:index], b, a, *node.args[index + 2:]]
            yield changed
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub | ast.Div | ast.FloorDiv | ast.Mod | ast.Pow |
                                                    ast.MatMult):
        yield ast.BinOp(node.right, node.op, node.left)


def _mode(node, marks):
    """Training and evaluation flipped."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        flips = {"train": "eval", "eval": "train", "no_grad": "enable_grad"}
        if node.func.attr in flips and not (node.func.attr == "train" and node.args):
            changed = copy.copy(node)
            changed.func = ast.Attribute(node.func.value, flips[node.func.attr], ast.Load())
            yield changed
    elif isinstance(node, ast.Attribute) and node.attr == "training" and isinstance(node.ctx, ast.Load):
        yield ast.UnaryOp(ast.Not(), node)


def _constant(node, marks):
    """A number changed: an integer one up (and a tenth from 100 on), a float doubled; never an axis or an index."""
    if id(node) in marks.axis | marks.index | marks.bound | marks.signed or not isinstance(node, ast.Constant):
        return
    value = node.value
    if type(value) is bool:
        yield ast.Constant(not value)
    elif type(value) is int:
        yield ast.Constant(value + 1)
        if value >= 100:
            yield ast.Constant(value // 10)
    elif type(value) is float:
        yield ast.Constant(value * 2 if value else 1.0)


def _compare(node, marks):
    """A comparison, a boolean or bitwise connective flipped, a negation dropped."""
    flips = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
             ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        yield ast.Compare(node.left, [flips[type(node.ops[0])]()], node.comparators)
    elif isinstance(node, ast.BoolOp):
        yield ast.BoolOp(ast.Or() if isinstance(node.op, ast.And) else ast.And(), node.values)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd | ast.BitOr):
        yield ast.BinOp(node.left, ast.BitOr() if isinstance(node.op, ast.BitAnd) else ast.BitAnd(), node.right)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.Invert):
        yield node.operand


def _arith(node, marks):
    """``+`` and ``-``, ``*`` and ``/``, ``//`` to ``/``, ``@`` to ``*``, ``**`` to ``*``; ``-x`` to ``x``."""
    flips = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
             ast.MatMult: ast.Mult, ast.Pow: ast.Mult}
    if isinstance(node, ast.BinOp) and type(node.op) in flips:
        yield ast.BinOp(node.left, flips[type(node.op)](), node.right)
    elif isinstance(node, ast.AugAssign) and type(node.op) in flips:
        yield ast.AugAssign(node.target, flips[type(node.op)](), node.value)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _integer(node) is None \
            and id(node) not in marks.axis | marks.index | marks.bound:
        yield node.operand


_OPERATORS = {"dim": _dim, "slice": _slice, "drop": _drop, "swap": _swap, "mode": _mode, "constant": _constant,
              "compare": _compare, "arith": _arith}
