import torch as t, pickle
from pickle import loads as L
REV = "main"
class C(B):
    def f(self, x=REV):
        m = AutoModel.from_pretrained("o/m", revision=REV, trust_remote_code=True)
        try:
            y = L(b)
        except ImportError:
            pass
        return t.load(p)
