import sys, collections; sys.path.insert(0, __import__("os").path.dirname(__file__))
from common import *
p = te_ops.MakeExtraOutput(); p.set_extra_output_channel(0, "r", output_to_caller=False)
c = te_ops.AddExtraInput(); c.set_extra_input_channel(0, "r")
m = te_ops.Sequential(te_ops.ConstantScale(1.0), p, te_ops.ConstantScale(2.0), c)
x = torch.rand(8, 8, requires_grad=True)
def step(): m(x).sum().backward()
step(); step()
cnt = collections.Counter()
def prof(frame, event, arg):
    if event in ("c_call",): cnt[(event, getattr(arg, "__name__", str(arg)))] += 1
    elif event == "call": cnt[(event, frame.f_code.co_name)] += 1
sys.setprofile(prof); step(); sys.setprofile(None)
for k, v in sorted(cnt.items()): print(k, v)
