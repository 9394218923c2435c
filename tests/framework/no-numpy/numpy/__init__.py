# Stands in for a numpy that is not installed (pip's PyTorch does not install it): `import numpy`
# fails as Python fails for a missing module, so PyTorch imports without it.
raise ModuleNotFoundError("No module named 'numpy' (tests/framework/no-numpy)", name="numpy")
