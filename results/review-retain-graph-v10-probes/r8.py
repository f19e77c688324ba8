from prelude import *
# WGAN-GP-like: critic = torch.nn.Linear -> tanh -> te.ops op (last layer), critic(x).sum() as the score
size=4
torch.manual_seed(0)
lin = torch.nn.Linear(size, size)
mw = MulWeight(size)
head = te_ops.Sequential(mw)
x = torch.rand(3, size, requires_grad=True)
score = head(torch.tanh(lin(x))).sum()
(g,) = torch.autograd.grad(score, x, create_graph=True)
print("dscore/dx requires_grad:", g.requires_grad)
(score + g.pow(2).sum()).backward()
lin2 = torch.nn.Linear(size, size); lin2.load_state_dict(lin.state_dict())
w2 = mw.weight.detach().clone().requires_grad_(True)
x2 = x.detach().clone().requires_grad_(True)
s2 = (torch.tanh(lin2(x2)) * w2).sum()
(g2,) = torch.autograd.grad(s2, x2, create_graph=True)
(s2 + g2.pow(2).sum()).backward()
print("max |grad - torch|: lin.weight %.3g, te op weight %.3g" % ((lin.weight.grad - lin2.weight.grad).abs().max().item(), (mw.weight.grad - w2.grad).abs().max().item()))
