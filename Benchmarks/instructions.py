#!/usr/bin/env python3
"""Instructions per line by component, from callgrind output files of `hush eval` (scripts/bench-instructions.sh).

    python3 Benchmarks/instructions.py --lines N RUN.callgrind [--base BASE.callgrind --base-lines M]

A component is a set of functions, named by patterns on their mangled Swift names (below). Each
function's own instructions are split between the components by the share of its callers' inclusive
cost made from inside each (as gprof propagates time): a member is all inside its component; a function
of the session, CLI or server layers (a callback, e.g. the evaluation a store's `batch` wraps) or of
another component starts a context of its own. So each instruction is counted once, in the innermost
component (the store reads the pipeline makes are the store's, the rules it runs are the rules'), and
recursion (the parser's nested values) is not counted twice. "rest" is what no component holds
(reading lines, output, the session around the pipeline, teardown). With --base (the same command on
fewer lines), every figure is the difference of the two runs divided by the difference of their
lines: startup (policy load, the interpreter, opening the state file) cancels out. A flat profile
keeps no call stacks: a function called from several components is split by its callers' shares.
"""
import argparse
import re
import sys
from collections import defaultdict

# Mangled-name patterns (Swift 6 manglings; a function belongs to the first component that matches).
# The store is every function of InMemoryStateStore and SQLiteStateStore (their transaction wrappers
# included: a COMMIT is the store's; the work they wrap is a callback, see FOREIGN) except the
# deinitializers (`fD`/`fd`), which run from swift_release wherever the last reference goes.
COMPONENTS = [
    ("parse", r"^\$s8HushJSON10JSONParserO5parse"),
    # The fast reader (Envelope.read) parses and decodes in one pass: counted as decode.
    ("decode", r"^\$s8HushCore8EnvelopeV(6decode_|4read)"),
    ("rules", r"^\$s10HushPolicy0B11InterpreterC8runRules"),
    ("store", r"^\$s9HushState(08InMemoryB5Store|06SQLiteB5Store)C(?!.*f[Dd]$)"),
    ("write", r"^\$s8HushCore8DecisionV5write2to"),
    ("pipeline", r"^\$s8HushCore8PipelineV8evaluate_"),
]


def parse_callgrind(path):
    """Self cost per function and inclusive cost per (caller, callee) edge, with call counts."""
    names = {}
    self_cost = defaultdict(int)
    edges = defaultdict(int)
    calls = defaultdict(int)
    total = 0
    fn = None
    callee = None
    pending_call = None

    def name_of(value, table):
        m = re.match(r"\((\d+)\)(?:\s+(.*))?$", value)
        if not m:
            return value
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), m.group(1))

    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending_call is not None:
                    edges[(fn, callee)] += cost
                    calls[(fn, callee)] += pending_call
                    pending_call = None
                else:
                    self_cost[fn] += cost
                continue
            if line.startswith("fn="):
                fn = name_of(line[3:], names)
            elif line.startswith("cfn="):
                callee = name_of(line[4:], names)
            elif line.startswith("calls="):
                pending_call = int(line[6:].split()[0])
            elif line.startswith("summary:") or line.startswith("totals:"):
                total = max(total, int(line.split()[1]))
    if not total:
        total = sum(self_cost.values())
    return self_cost, edges, calls, total


# The layers above the components (the session, the CLI, the server): a call into them from inside a
# component is a callback (the closure `batch` runs, the summaries' `recording`), the caller's cost.
FOREIGN = r"^\$s(4Hush|7HushCLI|10HushServer)[0-9]"


def components(path):
    """Instructions per component: each function's own (self) cost, split between the components by
    the share of its callers' inclusive cost that runs inside each (gprof's propagation). A member of
    a component is all inside it; a foreign function (FOREIGN) or another component's member starts
    a context of its own. So each instruction is counted once, in the innermost component, and a
    store method's callback (the evaluation `batch` wraps) is not the store's."""
    self_cost, edges, calls, total = parse_callgrind(path)
    functions = set(self_cost) | {a for a, _ in edges} | {b for _, b in edges}
    member = {}
    for name in functions:
        for comp, pattern in COMPONENTS:
            if re.search(pattern, name):
                member[name] = comp
                break
    foreign = {name for name in functions if name not in member and re.search(FOREIGN, name)}
    callers = defaultdict(list)
    for (a, b), cost in edges.items():
        if a != b and cost > 0:
            callers[b].append((a, cost))
    # Callers before callees (a depth-first order of the call graph), so that a few sweeps settle.
    callees = defaultdict(list)
    for (a, b) in edges:
        callees[a].append(b)
    order, seen = [], set()
    for root in sorted(functions, key=lambda f: len(callers[f])):
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(callees[root]))]
        while stack:
            f, it = stack[-1]
            g = next(it, None)
            if g is None:
                order.append(f)
                stack.pop()
            elif g not in seen:
                seen.add(g)
                stack.append((g, iter(callees[g])))
    order.reverse()
    free = [g for g in order if g not in member and g not in foreign and callers[g]]
    net = {}
    for comp, _ in COMPONENTS:
        share = {g: 1.0 for g, c in member.items() if c == comp}
        for _ in range(200):
            change = 0.0
            for g in free:
                into = callers[g]
                whole = sum(cost for _, cost in into)
                f = sum(cost * share.get(a, 0.0) for a, cost in into) / whole
                change = max(change, abs(f - share.get(g, 0.0)))
                share[g] = f
            if change < 1e-9:
                break
        net[comp] = sum(self_cost.get(g, 0) * f for g, f in share.items())
    return net, total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run")
    ap.add_argument("--lines", type=int, required=True)
    ap.add_argument("--base")
    ap.add_argument("--base-lines", type=int, default=0)
    ap.add_argument("--report", help="also write key=value lines (component=instructions per line)")
    args = ap.parse_args()
    net, total = components(args.run)
    lines = args.lines
    if args.base:
        bnet, btotal = components(args.base)
        net = {k: net[k] - bnet.get(k, 0) for k in net}
        total -= btotal
        lines -= args.base_lines
    per = {k: v / lines for k, v in net.items()}
    per["rest"] = total / lines - sum(per.values())
    per["total"] = total / lines
    for k, v in per.items():
        print(f"{k}={v:.0f}")
    if args.report:
        with open(args.report, "w") as f:
            for k, v in per.items():
                f.write(f"{k}={v:.0f}\n")


if __name__ == "__main__":
    main()
