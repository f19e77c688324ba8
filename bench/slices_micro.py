"""Instructions of a fused op's basic-op sublists, per op and step, by CPython version.

    valgrind --tool=callgrind --callgrind-out-file=/dev/null python bench/slices_micro.py VARIANT N

Variants, 16 one-basic-op steps per call, N calls (count N=0 and N=2000; the difference over
32000 op-steps is the cost per op and step):
  comp   three list comprehensions over the op's basic-op indices (the fuser's forward today);
  slc    one slice object built per op and step, three slices of the fuser's lists;
  comp2  as comp, with the steps also holding a slice (the control of pre);
  pre    a slice kept with each step (built once per fusion configuration), three slices.
Pure Python: no torch, no TE. Results: results/bench-slices-micro.md.
"""
import sys
variant, n = sys.argv[1], int(sys.argv[2])
ctxs = [object() for _ in range(16)]; kw = [{} for _ in range(16)]; ex = [[] for _ in range(16)]
steps = [[i] for i in range(16)]
def f(op, x, a, b, c): return x
def comp():
    for idxs in steps:
        e = [ex[i] for i in idxs]
        f(None, None, [ctxs[i] for i in idxs], e, [kw[i] for i in idxs])
def slc():
    for idxs in steps:
        s = slice(idxs[0], idxs[-1] + 1)
        f(None, None, ctxs[s], ex[s], kw[s])
pre_steps = [(idxs, slice(idxs[0], idxs[-1] + 1)) for idxs in steps]
def pre():
    for idxs, s in pre_steps:
        f(None, None, ctxs[s], ex[s], kw[s])
def comp2():
    for idxs, s in pre_steps:
        e = [ex[i] for i in idxs]
        f(None, None, [ctxs[i] for i in idxs], e, [kw[i] for i in idxs])
g = {"comp": comp, "slc": slc, "pre": pre, "comp2": comp2}[variant]
for _ in range(n): g()
