"""A tiny, randomly initialised Llama model directory with SmolLM2's tokenizer and chat template.

A real transformers checkpoint (``config.json`` with ``architectures``, safetensors weights), small enough that
loading it and answering a design's questions takes a second: for tests of the runner and the store, where what
matters is which questions are asked and stored, not what a trained model answers.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["make_tiny_model", "perturb_weights"]


def make_tiny_model(directory: Path, *, seed: int = 0) -> Path:
    """Write the tiny model into ``directory`` (2 layers, hidden size 16, SmolLM2's vocabulary) and return it."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from bias_validity.probes.backends.model_cache import converted_model_dir

    tokenizer = AutoTokenizer.from_pretrained(converted_model_dir("smollm2"))
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=1024,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.config.architectures = ["LlamaForCausalLM"]
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def perturb_weights(directory: Path) -> None:
    """Save the model again with one weight changed, as a re-quantised or retrained copy would differ."""
    import torch
    from transformers import LlamaForCausalLM

    model = LlamaForCausalLM.from_pretrained(directory)
    with torch.no_grad():
        model.lm_head.weight[0, 0] += 0.5
    model.save_pretrained(directory)
