"""pytest plugin: let TE's test module import on a machine without a GPU"""
import types, torch
torch.cuda.current_device = lambda: 0
torch.cuda.get_device_properties = lambda *a, **k: types.SimpleNamespace(major=0, minor=0, name="cpu")
torch.cuda.manual_seed = lambda *a, **k: None
torch.cuda.get_rng_state = lambda *a, **k: torch.empty(0, dtype=torch.uint8)
torch.cuda.set_rng_state = lambda *a, **k: None
