"""te-series: keep a patch series against NVIDIA Transformer Engine."""
