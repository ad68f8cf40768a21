"""The end-to-end cases: each program, how to build and run it, and exactly what its trace
must decode to. Trees use the notation  f(g h(i))  = f calls g, then h, and h calls i.
A case's `threads` lists the expected tree of every thread of every process, in any order."""

CASES = {
    "recursion": {
        "src": ["recursion.c"],
        "counts": {"main": 1, "fib": 15, "is_even": 2, "is_odd": 2},
        "threads": ["main(fib(fib(fib(fib(fib fib) fib) fib(fib fib)) fib(fib(fib fib) fib))"
                    " is_even(is_odd(is_even(is_odd))))"],
    },
    "fnptr": {
        "src": ["fnptr.c"],
        "counts": {"main": 1, "apply": 3, "add": 1, "sub": 1, "mul": 1},
        "threads": ["main(apply(add) apply(sub) apply(mul))"],
    },
    "threads": {
        "src": ["threads.c"],
        "cflags": ["-pthread"],
        "counts": {"main": 1, "spawn": 1, "worker": 4, "leaf": 10000},
        "threads": ["main(spawn)"] + ["worker(%s)" % " ".join(["leaf"] * (1000 * i)) for i in (1, 2, 3, 4)],
    },
    "exceptions": {
        "src": ["exceptions.cpp"],
        "cxx": True,
        "counts": {"main": 1, "catcher": 2, "middle": 2, "thrower": 2, "after_catch": 1},
        "threads": ["main(catcher(middle(thrower) after_catch) catcher(middle(thrower)))"],
        "repairs": True,
    },
    "longjmp": {
        "src": ["longjmp.c"],
        "counts": {"main": 1, "jumper": 1, "deep": 1, "deeper": 1, "leaf": 2},
        "threads": ["main(jumper(deep(deeper) leaf) leaf)"],
        "repairs": True,
    },
    "dlopen": {
        "src": ["dlopen_main.c"],
        "ldflags": ["-ldl"],
        "shared": {"libplugin.so": ["plugin.c"]},
        # relative, as programs often dlopen: the trace must still name it absolutely
        "args": ["./libplugin.so"],
        "counts": {"main": 1, "load_and_call": 1, "plugin_entry": 1, "plugin_helper": 3},
        "threads": ["main(load_and_call(plugin_entry(plugin_helper plugin_helper plugin_helper)))"],
        "modules": ["libplugin.so"],
    },
    "fork": {
        "src": ["fork.c"],
        "counts": {"main": 1, "forker": 1, "in_both": 2, "parent_work": 2, "child_work": 3},
        "threads": ["main(forker(in_both parent_work parent_work))",
                    "main(forker(in_both child_work child_work child_work))"],
        "processes": 2,
    },
    "tailcall": {
        "src": ["tailcall.c"],
        "counts": {"main": 1, "outer": 1, "inner": 1},
        "threads": ["main(outer(inner))"],
        "threads_optimised": ["main(outer inner)"],
    },
    "exitcode": {
        "src": ["exitcode.c"],
        "counts": {"main": 1, "before": 1, "bye": 1},
        "threads": ["main(before(bye))"],
        "status": 7,
    },
}


def parse_tree(text):
    """'f(g h(i))' -> [('f', [('g', []), ('h', [('i', [])])])]"""
    tokens, cur = [], ""
    for ch in text:
        if ch in "() ":
            if cur:
                tokens.append(cur)
                cur = ""
            if ch != " ":
                tokens.append(ch)
        else:
            cur += ch
    if cur:
        tokens.append(cur)
    pos = 0

    def seq():
        nonlocal pos
        out = []
        while pos < len(tokens) and tokens[pos] != ")":
            name = tokens[pos]
            pos += 1
            kids = []
            if pos < len(tokens) and tokens[pos] == "(":
                pos += 1
                kids = seq()
                pos += 1  # ')'
            out.append((name, kids))
        return out

    return seq()
