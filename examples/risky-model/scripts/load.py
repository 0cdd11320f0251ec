from transformers import AutoModel
import torch

model = AutoModel.from_pretrained("example-org/risky-model", trust_remote_code=True)
state = torch.load("pytorch_model.bin")
optimizer = torch.load("optimizer.pt")
