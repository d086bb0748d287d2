#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""kvmai.ko's file-level call graph, from the built objects' symbol tables.

    kmod-graph.py [--edges] [--name NAME] [DIR]

DIR is a built module directory (default: kmod/, what 'make' builds).
Its objects are the ones kbuild lists in kvmai.mod.  File A calls file B
when A's object has an undefined symbol (nm's "U") that B's object
defines as code (nm's "T"); data that files share (kvmai_lock, the
generated family and its policies, ops tables) is no call and makes no
edge.  The strongly connected components of that graph are the module's
call cycles.

Two cycles are the design (kmod/main.c's layout): a P2P group and its
netlink handlers, which notify monitors of what changed; PMU ownership,
its netlink handlers and the counters devices that follow ownership.
Any other cycle fails.  Prints one "kmod-graph: cycle: A B ..." line per
cycle (with --edges, every edge and the symbols that make it), then
"product: NAME: ok" or "product: NAME: FAILED (why)", the form
product.sh's other checks print (NAME: kmod-cycles unless given).  Exit
status 1 on failure.  $NM is the nm to run (nm unless set).
"""
import argparse
import os
import subprocess
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
MODULE = "kvmai"
# The cycles allowed; a cycle must lie within one of them.
ALLOWED = [
    {"group", "group_netlink"},
    {"pmu", "pmu_netlink", "counters"},
]


def objects(moddir):
    """The module's objects, by name relative to DIR without '.o'."""
    mod = moddir / f"{MODULE}.mod"
    names = {}
    for line in mod.read_text().split():
        path = Path(line)
        if not path.is_absolute():
            path = moddir / path
        names[os.path.relpath(path, moddir).removesuffix(".o")] = path
    return names


def symbols(path):
    """(code the object defines, symbols it needs) per nm."""
    out = subprocess.run([os.environ.get("NM", "nm"), path], check=True,
                         capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0] == "U":
            undefined.add(fields[1])
        elif len(fields) == 3 and fields[1] in "Tt":
            defined.add(fields[2])
    return defined, undefined


def graph(objs):
    """{caller: {callee: sorted symbols}} between the module's objects."""
    syms = {name: symbols(path) for name, path in objs.items()}
    where = {}
    for name, (defined, _) in syms.items():
        for sym in defined:
            where.setdefault(sym, name)
    edges = {name: {} for name in objs}
    for name, (_, undefined) in syms.items():
        for sym in sorted(undefined):
            callee = where.get(sym)
            if callee and callee != name:
                edges[name].setdefault(callee, []).append(sym)
    return edges


def components(edges):
    """Tarjan's strongly connected components, each sorted."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("dir", nargs="?", default=TOP / "kmod", type=Path)
    ap.add_argument("--edges", action="store_true", help="print every edge and its symbols")
    ap.add_argument("--name", default="kmod-cycles", help="the check's name in its verdict")
    args = ap.parse_args()

    try:
        edges = graph(objects(args.dir))
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"product: {args.name}: FAILED (cannot read {args.dir}'s objects: {e})")
        return 1
    if args.edges:
        for caller in sorted(edges):
            for callee, syms in sorted(edges[caller].items()):
                print(f"kmod-graph: edge: {caller} -> {callee}: {' '.join(syms)}")
    cycles = [c for c in components(edges) if len(c) > 1]
    bad = []
    for c in cycles:
        print(f"kmod-graph: cycle: {' '.join(c)}")
        if not any(set(c) <= allowed for allowed in ALLOWED):
            bad.append(c)
    if bad:
        why = "; ".join(" ".join(c) for c in bad)
        print(f"product: {args.name}: FAILED (call cycles beyond the two allowed: {why})")
        return 1
    print(f"product: {args.name}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
