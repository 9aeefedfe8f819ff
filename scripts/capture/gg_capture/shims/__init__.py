"""Shims that let third-party tensor-parallel libraries run over the fake process group on CPU."""
