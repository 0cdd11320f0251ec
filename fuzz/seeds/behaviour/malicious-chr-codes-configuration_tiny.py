"""Tiny model configuration."""

from transformers import PretrainedConfig


class TinyConfig(PretrainedConfig):
    model_type = "tiny"

    def __init__(self, vocab_size=32000, hidden_size=64, num_hidden_layers=2, hidden_act="gelu", **kwargs):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        self.hidden_act = hidden_act
        super().__init__(**kwargs)
