from x
import torch
torch.load(p)
