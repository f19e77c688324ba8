from prelude import *
size=4
def second_after_free():
    m = te_ops.Sequential(te_ops.ConstantScale(2.0), MulWeight(size), MulWeight(size))
    y = m(torch.rand(3, size, requires_grad=True)).sum()
    y.backward(); y.backward()
run("normal backward, then second", second_after_free)

def grad_create_graph():
    a, b = MulWeight(size), MulWeight(size)
    m = te_ops.Sequential(te_ops.ConstantScale(2.0), a, b)
    x = torch.rand(3, size, requires_grad=True)
    y = m(x).sum()
    g = torch.autograd.grad(y, [x, a.weight], create_graph=True)
    print("  grad requires_grad:", [t.requires_grad for t in g], "freed", a.freed, b.freed)
    y.backward()
    print("  after backward freed", a.freed, b.freed, "w.grad ok", torch.allclose(a.weight.grad, g[1].detach()))
    # double backward through grads
    try:
        g[1].sum().backward()
    except Exception as e:
        print(f"  double backward raised {type(e).__name__}: {str(e)[:150]}")
run("autograd.grad create_graph then backward", grad_create_graph)

def grad_then_grad():
    a = MulWeight(size)
    m = te_ops.Sequential(a)
    x = torch.rand(3, size, requires_grad=True)
    y = m(x).sum()
    g1 = torch.autograd.grad(y, x, retain_graph=True)
    g2 = torch.autograd.grad(y, x, retain_graph=True)
    g3 = torch.autograd.grad(y, x)
    print("  equal", torch.equal(g1[0], g2[0]), torch.equal(g1[0], g3[0]), "freed", a.freed)
    try: torch.autograd.grad(y, x)
    except Exception as e: print(f"  4th raised {type(e).__name__}: {str(e)[:120]}")
run("autograd.grad x3 (retain,retain,no)", grad_then_grad)

def no_optin():
    a, b = MulWeight(size), NoOptIn(size)
    m = te_ops.Sequential(a, b)
    y = m(torch.rand(3, size, requires_grad=True)).sum()
    y.backward(retain_graph=True)
    print("  first pass freed", a.freed, b.freed)
    y.backward()
run("custom op not opting in", no_optin)

def no_optin_retain_twice():
    a, b = MulWeight(size), NoOptIn(size)
    m = te_ops.Sequential(a, b)
    y = m(torch.rand(3, size, requires_grad=True)).sum()
    y.backward(retain_graph=True)
    y.backward(retain_graph=True)
run("custom op not opting in, retain twice", no_optin_retain_twice)

def separate_nodes():
    # opt-in op in one Sequential, non-opt-in in another: only the non-opt-in node errors
    a, b = MulWeight(size), NoOptIn(size)
    m1, m2 = te_ops.Sequential(a), te_ops.Sequential(b)
    y = m2(m1(torch.rand(3, size, requires_grad=True))).sum()
    y.backward(retain_graph=True)
    y.backward()
run("two nodes, second not opted in", separate_nodes)
