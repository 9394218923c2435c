# Stands for a Python without PyTorch: first on the path of tests/framework/python-without-torch.
raise ImportError("No module named 'torch'")
