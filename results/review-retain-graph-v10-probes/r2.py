from prelude import *
size=4
def kept_then_dropped():
    a, b = MulWeight(size), MulWeight(size)
    m = te_ops.Sequential(a, b)
    y = m(torch.rand(3, size, requires_grad=True)).sum()
    y.backward(retain_graph=True)
    t = b.saved_refs[-1]()
    print("  intermediate alive after kept pass:", t is not None, "numel", t.numel(), "marked:", hasattr(t, "_do_not_clear"))
    del t
    del y
    print("  intermediate alive after del y (no gc):", b.saved_refs[-1]() is not None)
    gc.collect()
    print("  after gc:", b.saved_refs[-1]() is not None)
run("kept pass, then graph dropped", kept_then_dropped)

def kept_then_last():
    a, b = MulWeight(size), MulWeight(size)
    m = te_ops.Sequential(a, b)
    y = m(torch.rand(3, size, requires_grad=True)).sum()
    y.backward(retain_graph=True); y.backward()
    t = b.saved_refs[-1]()
    print("  after last pass: alive", t is not None, "numel", None if t is None else t.numel(), "freed", b.freed)
run("kept then last pass", kept_then_last)

def exception_mid_kept_pass():
    class Boom(MulWeight):
        calls = 0
        def op_backward(self, ctx, g):
            Boom.calls += 1
            if Boom.calls == 2: raise ValueError("boom")
            return super().op_backward(ctx, g)
    a, b, c = MulWeight(size), MulWeight(size), Boom(size)
    m = te_ops.Sequential(a, b, c)
    y = m(torch.rand(3, size, requires_grad=True)).sum()
    y.backward(retain_graph=True)
    try: y.backward(retain_graph=True)
    except ValueError as e: print("  pass 2 raised", e)
    t = b.saved_refs[-1]()
    print("  b's saved tensor still marked after the raise:", getattr(t, "_do_not_clear", None))
    # pass 3 (last, no retain): does b free its input now?
    y.backward()
    print("  freed in last pass: b", b.freed, "c", c.freed)
run("exception inside a kept pass leaves marks", exception_mid_kept_pass)
