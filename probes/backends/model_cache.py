"""Convert a packaged GGUF model once into a transformers model directory, and reuse it.

transformers loads a GGUF by dequantising every tensor (about 20-40 s for SmolLM2-135M, about 70 s for
Gemma-3-270M on 2 cores). The dequantised model and its tokenizer are saved once to
``<cache root>/models/<gguf stem>-<sha256[:12]>/``; later loads read that directory in well under a second. The
directory is an ordinary transformers checkpoint whose ``config.json`` lists ``architectures``, so
``transformers serve`` can serve it too. The cache root is ``$BIAS_VALIDITY_CACHE`` when set, else
``platformdirs.user_cache_dir("bias-validity")``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from bias_validity.probes.backends.packaged import gguf_path, gguf_sha256, packaged_model

__all__ = ["CACHE_ENV", "cache_root", "model_dir_for", "converted_model_dir"]

CACHE_ENV = "BIAS_VALIDITY_CACHE"
#: written last into a converted directory: what it was converted from, and with which versions
_MARKER = "bias_validity_conversion.json"


def cache_root() -> Path:
    """The toolkit's cache directory.

    Returns
    -------
    pathlib.Path
        ``$BIAS_VALIDITY_CACHE`` when the variable is set and non-empty, else the platform's user cache directory
        for ``bias-validity`` (``~/.cache/bias-validity`` on Linux). It is not created here.

    Examples
    --------
    >>> import os
    >>> os.environ["BIAS_VALIDITY_CACHE"] = "/tmp/bv-cache"
    >>> str(cache_root())
    '/tmp/bv-cache'
    >>> del os.environ["BIAS_VALIDITY_CACHE"]
    """
    override = os.environ.get(CACHE_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("bias-validity"))


def model_dir_for(alias: str) -> Path:
    """Where the converted copy of a packaged model lives (whether or not it exists yet).

    Parameters
    ----------
    alias : str
        ``"smollm2"`` or ``"gemma3-270m"``.

    Returns
    -------
    pathlib.Path
        ``<cache root>/models/<gguf stem>-<sha256[:12]>``; the hash ties the copy to the exact weights file.

    Examples
    --------
    >>> model_dir_for("gemma3-270m").name
    'gemma-3-270m-q4_k_m-a5fd3b62230a'
    """
    model = packaged_model(alias)
    stem = Path(model.gguf_file).stem
    return cache_root() / "models" / f"{stem}-{gguf_sha256(alias)[:12]}"


def converted_model_dir(alias: str) -> Path:
    """The transformers directory of a packaged model, converting the GGUF on first use.

    Parameters
    ----------
    alias : str
        ``"smollm2"`` or ``"gemma3-270m"``.

    Returns
    -------
    pathlib.Path
        A directory with ``config.json`` (``architectures`` set), ``model.safetensors``, the tokenizer files and
        ``bias_validity_conversion.json`` (GGUF file, sha256, versions, conversion seconds).

    Notes
    -----
    The conversion writes into a temporary directory next to the target and renames it into place, so a killed
    conversion never leaves a half-written cache: the target exists only when complete. Two processes converting
    at once both succeed; the first rename wins and the other copy is discarded. transformers marks a model loaded
    from a GGUF as quantised and refuses to save it, although with no GGUF kernel installed every weight is
    already a plain float tensor; the quantiser is detached before saving (the reloaded model gives logits
    identical to the GGUF load, checked in ``tests/test_backend_hf.py``).

    Examples
    --------
    >>> path = converted_model_dir("smollm2")  # converts on first use, then reads the cache
    >>> "LlamaForCausalLM" in json.loads((path / "config.json").read_text())["architectures"]
    True
    """
    target = model_dir_for(alias)
    if (target / _MARKER).exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    source = gguf_path(alias, assemble_dir=cache_root() / "gguf")
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        _convert(source, staging, sha256=gguf_sha256(alias))
        try:
            os.rename(staging, target)
        except OSError:
            if not (target / _MARKER).exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _convert(gguf: Path, out: Path, *, sha256: str) -> None:
    """Dequantise ``gguf`` with transformers and save model and tokenizer into ``out``."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    start = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.config.architectures = [type(model).__name__]
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    marker = {
        "gguf_file": gguf.name,
        "gguf_sha256": sha256,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "conversion_seconds": round(time.perf_counter() - start, 1),
    }
    (out / _MARKER).write_text(json.dumps(marker, indent=2))
