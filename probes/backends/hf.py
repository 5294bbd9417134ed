"""The local transformers backend: packaged GGUF models (SmolLM2, Gemma-3) or any local model directory, on CPU.

Generation samples with one ``torch.Generator`` per request, seeded by the request's seed, so an answer depends
on the request alone (up to floating point), not on which requests share its batch. Generation batches
continuously: a request leaves the batch and its key/value cache as soon as its answer ends, and waiting requests
take the free places. Scoring (answer options, sentences) and word embeddings are
exact forward passes; scoring runs each prompt once, from a key/value cache of the prefix its batch shares, and
scores every option from that prompt's cache.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bias_validity.probes.backends.base import Backend, Capability, Completion, GenerationRequest, Unsupported
from bias_validity.probes.backends.model_cache import converted_model_dir, model_dir_for
from bias_validity.probes.backends.packaged import PACKAGED_MODELS, gguf_sha256, packaged_model, sha256_file

#: The files of a model directory whose bytes decide its answers (weights and architecture).
_WEIGHT_SUFFIXES = (".safetensors", ".bin")

__all__ = ["HFBackend", "load_hf_backend", "identify_hf"]


class HFBackend(Backend):
    """A causal language model run in-process by transformers (float32, CPU).

    Build it with :func:`load_hf_backend`. ``capabilities``: a model with a chat template (instruction-tuned) has
    CHAT, CHOICE_LOGPROBS, SEQUENCE_LOGPROBS and EMBEDDING; a base model only SEQUENCE_LOGPROBS and EMBEDDING, and
    its ``generate``/``choice_logprobs`` raise :class:`~bias_validity.probes.backends.base.Unsupported` with the reason.
    """

    def __init__(
        self,
        model_dir: Path,
        *,
        name: str,
        identity: dict[str, object],
        provenance: dict[str, object],
        batch_size: int,
        max_new_tokens: int | None,
        score_prefix: str | None = None,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self._torch = torch
        self.model_dir = Path(model_dir)
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        self.model = AutoModelForCausalLM.from_pretrained(self.model_dir, dtype=torch.float32).eval()
        self.name = name
        self.batch_size = batch_size
        self.max_new_tokens = max_new_tokens
        #: run the prompt prefix a generation batch shares once, from a key/value cache (same answers, faster)
        self.prefix_cache = True
        #: batch generation continuously: a row leaves the batch and its key/value cache once its answer ends and
        #: waiting requests take the free places (same answers, faster); False runs fixed batches, each row kept
        #: until the batch's longest answer ends (transformers' ``generate``: the bench's baseline)
        self.continuous = True
        #: rows that decode together in continuous batching (``batch_size`` is the fixed batches' size, and
        #: scoring's): measured on 2 cores, 192 implicit answers at temperature 0.7, one call, against fixed batches of
        #: 16: 16 places 1.25x, 32 1.60x, 48 1.80x, 64 1.70x answers per second (answers identical)
        self.generation_places = 48
        chat = self.tokenizer.chat_template is not None
        self.capabilities = frozenset(
            ([Capability.CHAT, Capability.CHOICE_LOGPROBS] if chat else [])
            + [Capability.SEQUENCE_LOGPROBS, Capability.EMBEDDING]
        )
        self.embedding_layer = self.model.config.num_hidden_layers // 2
        self._start = _start_ids(self.tokenizer)
        self._score_start = self._start if score_prefix is None else self._text_ids(score_prefix)
        self._pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self._start[0]
        eos = self.model.generation_config.eos_token_id
        eos = [eos] if isinstance(eos, int) else list(eos or [])
        self._eos = sorted({self.tokenizer.eos_token_id, *eos} - {None})
        self._provenance = provenance
        self._identity = identity

    @property
    def identity(self) -> dict[str, object]:
        """Name and the sha256 of the packaged GGUF file or of the directory's weights (:func:`identify_hf`)."""
        return dict(self._identity)

    @property
    def provenance(self) -> dict[str, object]:
        """Name, weights file and hash, where the weights were read from, versions, embedding layer."""
        import torch
        import transformers

        return {
            "name": self.name,
            **self._provenance,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "dtype": "float32",
            "embedding_layer": self.embedding_layer,
        }

    # -- generation -------------------------------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """Answer chat requests, in batches of prompts sorted by their tokens (so a batch shares a long prefix).

        A request whose messages cannot be rendered, or a batch whose forward pass fails, yields
        ``Completion(None, error=...)`` for the requests concerned; the run goes on.
        """
        self._require_chat("generate answers")
        results: list[Completion | None] = [None] * len(requests)
        encoded: dict[int, list[int]] = {}
        for i, request in enumerate(requests):
            try:
                encoded[i] = self._chat_ids(request.messages)
            except Exception as error:  # a malformed conversation fails alone
                results[i] = _error(error)
        order = sorted(encoded, key=lambda i: encoded[i])  # a batch of prompts that share the longest prefix
        if self.continuous:
            for i, completion in self._generate_continuously(requests, encoded, order).items():
                results[i] = completion
            return results
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            try:
                texts = self._generate_batch([requests[i] for i in batch], [encoded[i] for i in batch])
                completions = [Completion(text) for text in texts]
            except Exception as error:  # one failed batch must not end the run: its rows are recorded as errors
                completions = [_error(error)] * len(batch)
            for i, completion in zip(batch, completions, strict=True):
                results[i] = completion
        return results

    def _generate_batch(self, requests: Sequence[GenerationRequest], prompts: Sequence[list[int]]) -> list[str]:
        """One fixed batch through transformers' ``generate``: every row runs until the longest answer ends."""
        torch = self._torch
        limits = [self.max_new_tokens or r.max_new_tokens for r in requests]
        sampler = _PerRequestSampler([r.temperature for r in requests], [r.seed for r in requests], self._eos)
        with torch.inference_mode():
            input_ids, mask, cache = self._prefill_shared(prompts)
            answers = self._decode_keeping_every_row(input_ids, mask, cache, sampler, max(limits))
        return [self._answer_text(row, limit) for row, limit in zip(answers, limits, strict=True)]

    def _answer_text(self, tokens: list[int], limit: int) -> str:
        """The answer's text: its first ``limit`` tokens, up to its end token."""
        tokens = tokens[:limit]
        cut = next((k for k, token in enumerate(tokens) if token in self._eos), len(tokens))
        return self.tokenizer.decode(tokens[:cut], skip_special_tokens=True)

    def _generate_continuously(
        self, requests: Sequence[GenerationRequest], encoded: dict[int, list[int]], order: list[int]
    ) -> dict[int, Completion]:
        """Answer the requests ``order`` lists (prompts ``encoded``) with continuous batching.

        At most ``generation_places`` rows decode together. A row whose answer has ended leaves the batch and, by
        ``batch_select_indices``, its key/value cache; once half the places are free, the next waiting requests
        are prefilled together (their shared prefix once, :meth:`_prefill_shared`) and join, their cache and
        attention mask left-padded to the batch's length (positions come from each row's mask, so padding moves
        nothing). Each row thus makes the forward passes ``generate`` would make for it, and draws its tokens
        from its own seeded generator. Written by hand because ``generate`` keeps every row until the longest
        answer ends, and transformers' continuous batching (``generate_batch``) samples every request from one
        global generator, which would break per-request seeds. A model whose cache has sliding-window layers
        (Gemma-3) cannot be padded so: its waiting requests join only when the batch has emptied.

        A forward pass that fails records its error for the requests it carried; the others go on.
        """
        torch = self._torch
        limits = {i: self.max_new_tokens or requests[i].max_new_tokens for i in order}
        sampler = _PerRequestSampler([r.temperature for r in requests], [r.seed for r in requests], self._eos)
        answers: dict[int, list[int]] = {i: [] for i in order}
        results: dict[int, Completion] = {}
        waiting = collections.deque(order)
        batch: _Rows | None = None
        mergeable = True
        with torch.inference_mode():
            while waiting or batch is not None:
                free = self.generation_places - (len(batch.requests) if batch else 0)
                if waiting and (batch is None or (mergeable and free >= max(1, self.generation_places // 2))):
                    joining = [waiting.popleft() for _ in range(min(free, len(waiting)))]
                    try:
                        fresh = self._prefill_rows(joining, [encoded[i] for i in joining])
                    except Exception as error:  # these requests fail; the batch goes on
                        results.update(dict.fromkeys(joining, _error(error)))
                        continue
                    mergeable = mergeable and _paddable(fresh.cache)
                    fresh = self._advance(fresh, sampler, answers, limits)
                    batch = _join(batch, fresh)
                    continue
                try:
                    step = self._step(batch)
                except Exception as error:  # the rows in flight fail; waiting requests start a new batch
                    results.update(dict.fromkeys(batch.requests, _error(error)))
                    batch = None
                    continue
                batch = self._advance(step, sampler, answers, limits)
        for i in order:
            results.setdefault(i, Completion(self._answer_text(answers[i], limits[i])))
        return results

    def _prefill_rows(self, joining: list[int], prompts: list[list[int]]) -> _Rows:
        """The prompts' forward pass (their shared prefix once): their cache, mask and next-token logits."""
        input_ids, mask, cache = self._prefill_shared(prompts)
        past = cache.get_seq_length() if cache is not None else 0
        positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
        out = self.model(
            input_ids=input_ids[:, past:],
            attention_mask=mask,
            position_ids=positions[:, past:],
            cache=cache,
            use_cache=True,
            logits_to_keep=1,
        )
        return _Rows(joining, mask, out.cache, out.logits[:, -1].float())

    def _step(self, batch: _Rows) -> _Rows:
        """One decoding step: each row's last drawn token through the model."""
        torch = self._torch
        mask = torch.cat([batch.mask, batch.mask.new_ones((len(batch.requests), 1))], dim=-1)
        out = self.model(
            input_ids=torch.tensor(batch.tokens)[:, None],
            attention_mask=mask,
            position_ids=mask.sum(-1, keepdim=True) - 1,
            cache=batch.cache,
            use_cache=True,
            logits_to_keep=1,
        )
        return _Rows(batch.requests, mask, out.cache, out.logits[:, -1].float())

    def _advance(self, rows: _Rows, sampler, answers: dict, limits: dict) -> _Rows | None:  # noqa: ANN001
        """Draw each row's next token; the rows whose answer goes on (None when none does)."""
        chosen = sampler.draw(rows.logits, rows.requests).tolist()
        keep = []
        for k, (i, token) in enumerate(zip(rows.requests, chosen, strict=True)):
            answers[i].append(token)
            if token not in self._eos and len(answers[i]) < limits[i]:
                keep.append(k)
        if not keep:
            return None
        if len(keep) < len(rows.requests):
            rows.cache.batch_select_indices(self._torch.tensor(keep))
        return _Rows([rows.requests[k] for k in keep], rows.mask[keep], rows.cache, None, [chosen[k] for k in keep])

    def _decode_keeping_every_row(self, input_ids, mask, cache, sampler, limit: int):  # noqa: ANN001, ANN202
        """Each row's answer tokens from transformers' ``generate``, which runs every row until the last one ends."""
        from transformers import GenerationConfig, LogitsProcessorList

        config = GenerationConfig(do_sample=False, max_new_tokens=limit, pad_token_id=self._pad, eos_token_id=self._eos)
        out = self.model.generate(
            input_ids=input_ids,
            attention_mask=mask,
            cache=cache,
            generation_config=config,
            logits_processor=LogitsProcessorList([sampler]),
        )
        return out[:, input_ids.shape[1] :].tolist()

    def _prefill_shared(self, prompts: Sequence[list[int]]):  # noqa: ANN202
        """The batch's token ids and attention mask, and the key/value cache of the prefixes its prompts share.

        With ``prefix_cache`` on, the prompts (sorted by their tokens) are grouped by the prefix they share (the
        system line and the worked example of one template, see :func:`_prefix_groups`); each group's prefix runs
        once, all groups in one left-padded batch, and its cache is copied to the group's prompts. The ids and
        mask are then the prefix block (left-padded) followed by each prompt's rest (left-padded), so the
        positions ``generate`` takes from the mask's cumulative sum are those of the unpadded prompt, as in the
        uncached batch, and ``generate`` runs only the rests.
        """
        torch = self._torch
        groups = _prefix_groups(prompts) if self.prefix_cache and len(prompts) > 1 else []
        if not groups or min(length for _, length in groups) == 0:
            return (*_pad(prompts, self._pad, left=True), None)
        prefixes = [prompts[members[0]][:length] for members, length in groups]
        ids, mask = _pad(prefixes, self._pad, left=True)
        cache = self.model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=(mask.cumsum(-1) - 1).clamp(min=0),
            use_cache=True,
            logits_to_keep=1,
        ).cache
        of_row = [0] * len(prompts)
        rests: list[list[int]] = [[]] * len(prompts)
        for g, (members, length) in enumerate(groups):
            for row in members:
                of_row[row], rests[row] = g, prompts[row][length:]
        rows = torch.tensor(of_row)
        cache.batch_select_indices(rows)
        rest, rest_mask = _pad(rests, self._pad, left=True)
        return torch.cat([ids[rows], rest], dim=-1), torch.cat([mask[rows], rest_mask], dim=-1), cache

    # -- scoring ----------------------------------------------------------------------------------------------
    def choice_logprobs(
        self, prompts: Sequence[tuple[dict[str, str], ...]], options: Sequence[Sequence[str]]
    ) -> list[list[float]]:
        """log P(option | chat prompt) for each option, summed over the option's tokens.

        The prompt is rendered with the chat template and the generation prompt; each option is tokenised on its
        own (as the answer's first tokens) and scored as the continuation. No end-of-turn token is added.
        """
        self._require_chat("score answer options")
        if len(prompts) != len(options):
            raise ValueError(f"got {len(prompts)} prompts but {len(options)} option lists: give one list per prompt")
        contexts = [self._chat_ids(prompt) for prompt in prompts]
        return self._score(contexts, [[self._text_ids(option) for option in opts] for opts in options])

    def sequence_logprobs(self, texts: Sequence[str]) -> list[float]:
        """log P(text) summed over the text's tokens, each conditioned on the start token and the tokens before it.

        No chat template. The start token is the one the tokenizer adds (Gemma's ``<bos>``), or, for a tokenizer
        that adds none, its document separator ``<|endoftext|>`` (SmolLM2's pretraining separator), else its BOS;
        a ``score_prefix`` given to :func:`load_hf_backend` replaces it (to score as a server does that needs
        another context, see ``load_openai_backend``).
        """
        scores = self._score([self._score_start] * len(texts), [[self._text_ids(text)] for text in texts])
        return [row[0] for row in scores]

    def _score(self, contexts: Sequence[list[int]], continuations: Sequence[Sequence[list[int]]]) -> list[list[float]]:
        """Sum of log P(continuation tokens | context) for every continuation of every context.

        Contexts are sorted (so a batch shares a long prefix) and run ``batch_size`` at a time: the batch's common
        prefix runs once, its key/value cache is repeated per context, and the contexts' remainders run from it
        as one right-padded batch, with logits only at each context's last position (which predicts every
        continuation's first token). The cache is then repeated once per continuation longer than one token, and
        those continuations (less their last token) run from it as one right-padded batch, with logits only at
        their real positions. So no prompt is run once per option, a shared instruction runs once per batch, and
        the vocabulary projection and log-softmax touch only the positions that are scored.
        """
        torch = self._torch
        scores = [[0.0] * len(options) for options in continuations]
        longest = [max((len(c) for c in options), default=0) for options in continuations]
        order = sorted(range(len(contexts)), key=lambda i: (contexts[i], longest[i]))
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            with torch.inference_mode():
                cache, mask, first = self._run_contexts([contexts[i] for i in batch])
            tails = []  # (row in batch, context index, option index) of continuations longer than one token
            for row, i in enumerate(batch):
                for k, continuation in enumerate(continuations[i]):
                    if continuation:
                        scores[i][k] = float(first[row, continuation[0]])
                    if len(continuation) > 1:
                        tails.append((row, i, k))
            if tails:
                with torch.inference_mode():
                    rest = self._score_tails(cache, mask, [(row, continuations[i][k]) for row, i, k in tails])
                for (_, i, k), value in zip(tails, rest, strict=True):
                    scores[i][k] += value
        return scores

    def _run_contexts(self, contexts: Sequence[list[int]]):  # noqa: ANN202
        """Run a batch of contexts; return their cache, its attention mask and log P(next token) after each."""
        torch = self._torch
        shared = _shared_prefix_length(contexts)
        cache = None
        if shared:
            cache = self.model(input_ids=torch.tensor([contexts[0][:shared]]), use_cache=True, logits_to_keep=1).cache
            cache.batch_repeat_interleave(len(contexts))
        ids, rest = _pad([context[shared:] for context in contexts], self._pad, left=False)
        mask = torch.cat([torch.ones((len(contexts), shared), dtype=torch.long), rest], dim=-1)
        out = self.model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=(shared + torch.arange(ids.shape[1])).expand_as(ids),
            cache=cache,
            use_cache=True,
            logits_to_keep=rest.sum(-1, keepdim=True) - 1,
        )
        return out.cache, mask, out.logits[:, 0].float().log_softmax(-1)

    def _score_tails(self, cache, context_mask, tails: Sequence[tuple[int, list[int]]]) -> list[float]:  # noqa: ANN001
        """Sum of log P(tokens 2.. of each continuation | its cached context row and its earlier tokens)."""
        torch = self._torch
        rows = torch.tensor([row for row, _ in tails])
        cache.batch_select_indices(rows)
        ids, mask = _pad([tail[:-1] for _, tail in tails], self._pad, left=False)
        logits = self.model(
            input_ids=ids,
            attention_mask=torch.cat([context_mask[rows], mask], dim=-1),
            position_ids=context_mask.sum(-1)[rows, None] + torch.arange(ids.shape[1]),
            cache=cache,
            logits_to_keep=mask.bool(),
        ).logits  # (scored positions, vocabulary), row-major: each tail's positions in turn
        targets = torch.tensor([token for _, tail in tails for token in tail[1:]])
        picked = logits.float().log_softmax(-1).gather(-1, targets[:, None])[:, 0]
        return [float(part.sum()) for part in picked.split([len(tail) - 1 for _, tail in tails])]

    # -- embeddings -------------------------------------------------------------------------------------------
    def embed_words(self, words: Sequence[str]) -> np.ndarray:
        """One vector per word or phrase: the middle layer's hidden states, averaged over the word's tokens.

        Each word is fed alone as ``<start> word`` (with the leading space it has inside a sentence). The
        hidden state after layer ``num_hidden_layers // 2`` is averaged over the word's tokens (the start token
        excluded). Why: in causal LMs the last layers specialise in predicting the next token, and static word
        vectors distilled from the middle layers carry the most lexical semantics (Bommasani, Davis & Cardie
        2020, ACL); averaging over sub-word tokens gives multi-token words and phrases one vector.
        """
        torch = self._torch
        vectors = np.zeros((len(words), self.model.config.hidden_size), dtype=np.float32)
        for start in range(0, len(words), self.batch_size):
            chunk = [self._text_ids(word) for word in words[start : start + self.batch_size]]
            ids, mask = _pad([self._start + c for c in chunk], self._pad, left=False)
            with torch.inference_mode():
                hidden = self.model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states
            layer = hidden[self.embedding_layer].float()
            for row, c in enumerate(chunk):
                span = layer[row, len(self._start) : len(self._start) + len(c)]
                vectors[start + row] = span.mean(0).numpy()
        return vectors

    # -- helpers ----------------------------------------------------------------------------------------------
    def _require_chat(self, what: str) -> None:
        if Capability.CHAT not in self.capabilities:
            raise Unsupported(f"{self.name} is a base model without a chat template and cannot {what}")

    def _chat_ids(self, messages: Sequence[dict[str, str]]) -> list[int]:
        text = self.tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=False)
        return self._text_ids(text)

    def _text_ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def close(self) -> None:
        """Drop the model so its memory can be freed."""
        self.model = None


class _PerRequestSampler:
    """Request i draws its tokens from its own seeded generator (greedy when its temperature is 0).

    :meth:`draw` picks the next token of the requests still answering; called as a logits processor (the
    ``generate`` path), it returns scores that are -inf except at the drawn token, so ``generate``'s greedy step
    picks that token. Each unfinished request consumes one draw per step from its own generator, whatever else is
    in the batch; a request that has ended (its last token is one of ``stop``) draws nothing. The draw is the one
    ``torch.multinomial(probs, 1, generator)`` makes, ``argmax(probs / q)`` with ``q ~ Exp(1)`` from the
    generator (ATen's CPU kernel), written out because the call costs about three times as much on 49k-token
    vocabularies; the same seed gives the same token.
    """

    def __init__(self, temperatures: Sequence[float], seeds: Sequence[int], stop: Sequence[int] = ()) -> None:
        import torch

        self._temperatures = list(temperatures)
        self._generators = [torch.Generator().manual_seed(int(seed) % 2**63) for seed in seeds]
        self._stop = torch.tensor(sorted(set(stop)), dtype=torch.long)

    def draw(self, scores, requests: Sequence[int]):  # noqa: ANN001, ANN201
        """The next token of each of ``requests`` (their indices), from their next-token logits ``scores``."""
        import torch

        chosen = scores.argmax(-1)
        for k, request in enumerate(requests):
            temperature = self._temperatures[request]
            if temperature > 0:
                probs = torch.softmax(scores[k].float() / temperature, dim=-1)
                noise = torch.empty_like(probs).exponential_(1, generator=self._generators[request])
                chosen[k] = (probs / noise).argmax()
        return chosen

    def __call__(self, input_ids, scores):  # noqa: ANN001, ANN204 (transformers' LogitsProcessor signature)
        import torch

        chosen = scores.argmax(-1)
        live = (~torch.isin(input_ids[:, -1], self._stop)).nonzero()[:, 0]
        chosen[live] = self.draw(scores[live], live.tolist())
        out = torch.full_like(scores, float("-inf"))
        out[torch.arange(scores.shape[0]), chosen] = 0.0
        return out


def load_hf_backend(
    name: str, *, batch_size: int = 16, max_new_tokens: int | None = None, score_prefix: str | None = None
) -> HFBackend:
    """Load a local transformers model: a packaged GGUF model by alias, or a model directory.

    Parameters
    ----------
    name : str
        ``"smollm2"`` (SmolLM2-135M-Instruct, Q4_1), ``"gemma3-270m"`` (Gemma-3-270M base, Q4_K_M), or the path
        of a local transformers model directory (``config.json`` with ``architectures``).
    batch_size : int, default 16
        Sequences per forward pass.
    max_new_tokens : int or None, default None
        Caps every generation at this many tokens; ``None`` uses each request's ``max_new_tokens``.
    score_prefix : str or None, default None
        The context the logprob method's sentences are conditioned on, as text (special tokens allowed); ``None``
        uses the model's start token (see :meth:`HFBackend.sequence_logprobs`).

    Returns
    -------
    HFBackend
        ``name`` is ``hf:SmolLM2-135M-Instruct-Q4_1``, ``hf:gemma-3-270m-Q4_K_M`` or ``hf:<directory name>``.
        ``provenance`` holds ``source`` (``"cache"`` when the converted copy already existed, ``"converted"`` when
        this call converted the GGUF, ``"directory"`` for a user's directory), ``model_dir``, ``gguf_file`` and
        ``gguf_sha256`` for packaged models, and the transformers and torch versions.

    Notes
    -----
    The first load of a packaged model dequantises its GGUF (see :mod:`bias_validity.probes.backends.model_cache`).
    torch uses every CPU available to the process unless ``OMP_NUM_THREADS`` is set (see ``_limit_threads``).

    Examples
    --------
    >>> backend = load_hf_backend("smollm2")
    >>> backend.name, backend.provenance["source"] in {"cache", "converted"}
    ('hf:SmolLM2-135M-Instruct-Q4_1', True)
    >>> load_hf_backend("llama")
    Traceback (most recent call last):
    ...
    ValueError: hf model 'llama' is neither a packaged model (smollm2, gemma3-270m) nor a model directory
    """
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if max_new_tokens is not None and (not isinstance(max_new_tokens, int) or max_new_tokens < 1):
        raise ValueError(f"max_new_tokens must be a positive integer or None, got {max_new_tokens!r}")
    identity = identify_hf(name, max_new_tokens=max_new_tokens, score_prefix=score_prefix)
    _limit_threads()
    if name in PACKAGED_MODELS:
        existed = model_dir_for(name).exists()
        model_dir = converted_model_dir(name)
        conversion = json.loads((model_dir / "bias_validity_conversion.json").read_text())
        provenance = {
            "source": "cache" if existed else "converted",
            "model_dir": str(model_dir),
            "gguf_file": conversion["gguf_file"],
            "gguf_sha256": conversion["gguf_sha256"],
        }
    else:
        model_dir = Path(name).expanduser().resolve()
        provenance = {"source": "directory", "model_dir": str(model_dir)}
    return HFBackend(
        model_dir,
        name=str(identity["name"]),
        identity=identity,
        provenance=provenance,
        batch_size=batch_size,
        max_new_tokens=max_new_tokens,
        score_prefix=score_prefix,
    )


def identify_hf(
    name: str, *, max_new_tokens: int | None = None, score_prefix: str | None = None, **_options: object
) -> dict[str, object]:
    """The identity of a local model, found without loading it: what a resumed run must match.

    Parameters
    ----------
    name : str
        A packaged model's alias or a model directory, as for :func:`load_hf_backend`.
    max_new_tokens, score_prefix
        The backend's own token limit and scoring context, as for :func:`load_hf_backend` (recorded when set: they
        change answers).

    Returns
    -------
    dict
        ``name`` (the ``model`` column: ``hf:<display name>``) and ``gguf_file`` and ``gguf_sha256`` for a
        packaged model (a re-quantised file has another hash), or ``weights_sha256`` for a directory: one sha256
        over its ``config.json`` and weight files (``*.safetensors``, ``*.bin``), in name order.

    Examples
    --------
    >>> identify_hf("smollm2")["name"]
    'hf:SmolLM2-135M-Instruct-Q4_1'
    >>> identify_hf("llama")
    Traceback (most recent call last):
    ...
    ValueError: hf model 'llama' is neither a packaged model (smollm2, gemma3-270m) nor a model directory
    """
    chosen = {k: v for k, v in (("max_new_tokens", max_new_tokens), ("score_prefix", score_prefix)) if v is not None}
    if name in PACKAGED_MODELS:
        model = packaged_model(name)
        found = {"gguf_file": model.gguf_file, "gguf_sha256": gguf_sha256(name)}
        return {"name": f"hf:{model.display_name}", **found, **chosen}
    directory = Path(name).expanduser()
    if not (directory / "config.json").is_file():
        raise ValueError(
            f"hf model {name!r} is neither a packaged model ({', '.join(PACKAGED_MODELS)}) nor a model directory"
        )
    directory = directory.resolve()
    files = sorted(p for p in directory.iterdir() if p.suffix in _WEIGHT_SUFFIXES or p.name == "config.json")
    combined = hashlib.sha256("".join(f"{p.name}:{sha256_file(p)}\n" for p in files).encode()).hexdigest()
    return {"name": f"hf:{directory.name}", "weights_sha256": combined, **chosen}


@dataclass
class _Rows:
    """Rows of a continuous generation batch: the request each answers, the attention mask and key/value cache
    (as long as the mask), and either the logits of their next token or the tokens drawn to feed next."""

    requests: list[int]
    mask: object
    cache: object
    logits: object = None
    tokens: list[int] = field(default_factory=list)


def _paddable(cache: object) -> bool:
    """Whether every layer of ``cache`` is a plain growing cache, whose keys and values can be left-padded."""
    from transformers.cache_utils import DynamicLayer

    return all(type(layer) is DynamicLayer for layer in cache.layers)


def _join(batch: _Rows | None, fresh: _Rows | None) -> _Rows | None:
    """One batch of both row sets: the shorter one's cache and mask left-padded to the longer one's length."""
    import torch
    import torch.nn.functional as F

    if batch is None or fresh is None:
        return batch if fresh is None else fresh
    width = max(batch.mask.shape[1], fresh.mask.shape[1])

    def pad(t, by: int, dim: int):  # noqa: ANN001, ANN202 (left-pad dimension ``dim`` with zeros)
        return F.pad(t, [0, 0] * (t.dim() - 1 - dim) + [by, 0]) if by else t

    for old, new in zip(batch.cache.layers, fresh.cache.layers, strict=True):
        for name in ("keys", "values"):
            a, b = getattr(old, name), getattr(new, name)
            joined = torch.cat([pad(a, width - a.shape[-2], a.dim() - 2), pad(b, width - b.shape[-2], b.dim() - 2)])
            setattr(old, name, joined)
    mask = torch.cat([pad(batch.mask, width - batch.mask.shape[1], 1), pad(fresh.mask, width - fresh.mask.shape[1], 1)])
    return _Rows(batch.requests + fresh.requests, mask, batch.cache, None, batch.tokens + fresh.tokens)


def _error(error: Exception) -> Completion:
    return Completion(None, error=f"{type(error).__name__}: {error}")


def _limit_threads() -> None:
    """Use every CPU available to this process for torch, unless OMP_NUM_THREADS is set.

    Measured on the idle 2-core machine (one process, 1 and 2 threads alternated twice, SmolLM2, 16 implicit
    prompts): generate 2.3-2.5 vs 4.3-4.4 answers/s and closed-set scoring 3.1 vs 5.9-6.1 prompts/s on 1 vs 2
    threads. On a machine shared with other jobs the opposite held (OpenMP threads spin-wait for cores the other
    jobs hold: 2.0 vs 1.0 answers/s): there, set OMP_NUM_THREADS=1. ``python bench/collect.py --thread-counts 1 2``
    repeats the comparison.
    """
    import torch

    if os.environ.get("OMP_NUM_THREADS"):
        return
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    torch.set_num_threads(max(1, available))


def _start_ids(tokenizer) -> list[int]:  # noqa: ANN001
    """The token(s) a plain text is conditioned on: the tokenizer's own BOS, else its document separator."""
    added = tokenizer("", add_special_tokens=True)["input_ids"]
    if added:
        return list(added)
    separator = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    if separator is not None and separator != tokenizer.unk_token_id:
        return [separator]
    if tokenizer.bos_token_id is not None:
        return [tokenizer.bos_token_id]
    return [tokenizer.eos_token_id]


def _prefix_groups(prompts: Sequence[list[int]], share: float = 0.5) -> list[tuple[list[int], int]]:
    """Group prompts by a common prefix: (member rows, prefix length) per group, or [] when no group shares one.

    Walking the prompts in token order, a prompt joins the current group while it shares at least ``share`` of
    the shorter prompt's tokens with the group's first prompt; a group's prefix is the one all its members share
    (each keeps at least one token of its own). ``share`` only trades speed (fewer, longer prefixes) against
    nothing else: any grouping gives the same answers.

    Examples
    --------
    >>> _prefix_groups([[1, 2, 3, 4, 9], [1, 2, 3, 5, 9], [1, 7, 7, 7, 7], [1, 7, 7, 7, 8]])
    [([0, 1], 3), ([2, 3], 4)]
    """
    order = sorted(range(len(prompts)), key=lambda i: prompts[i])
    groups: list[list[int]] = []
    for i in order:
        if groups:
            first = prompts[groups[-1][0]]
            if _shared_prefix_length([first, prompts[i]]) >= share * min(len(first), len(prompts[i])):
                groups[-1].append(i)
                continue
        groups.append([i])
    found = [(members, _shared_prefix_length([prompts[i] for i in members])) for members in groups]
    return found if len(found) < len(prompts) else []


def _shared_prefix_length(rows: Sequence[list[int]]) -> int:
    """Length of the rows' common prefix, at most the shortest row's length less one (each row keeps a token)."""
    shortest = min(len(row) for row in rows)
    for k in range(shortest - 1):
        if any(row[k] != rows[0][k] for row in rows):
            return k
    return max(shortest - 1, 0)


def _pad(rows: Sequence[list[int]], pad_id: int, *, left: bool):  # noqa: ANN202
    """Stack token rows into (ids, attention mask) tensors, padded on the left or the right."""
    import torch

    width = max(len(row) for row in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        span = slice(width - len(row), width) if left else slice(0, len(row))
        ids[i, span] = torch.tensor(row, dtype=torch.long)
        mask[i, span] = 1
    return ids, mask
