import torch
x =
torch.load(p)
