"""Closed-set exact scoring versus generate-and-parse, and generation with and without the prefix cache, on the
same implicit design and model.

Both score the same questions (the implicit prompt with its two possible answers); generate-and-parse samples an
answer and parses it, closed-set scoring reads the exact probability of each answer. Prints responses per second of
each, and two ratios against generate-and-parse run in the same process as the baseline:
``ratio_closed_set_vs_generate`` counts every generated answer, ``ratio_closed_set_vs_usable_generate`` counts only
the parseable ones (status ok), since an unparseable answer is no measurement (every closed-set response is usable).
Also both SC estimates: the sampled share of consistent answers among parseable ones, and the expected SC from the
exact answer probabilities (mean P(consistent answer | one of the two answers)), and the torch threads and the
1-minute load average before the run (other processes on the machine slow both sides, not always equally).

The prefix cache (``HFBackend.prefix_cache``): the same questions generated with the prompt prefix a batch shares
(system line and worked example) run once from a key/value cache, and without, each batch both ways back to back;
``ratio_prefix_cache_vs_uncached`` is answers per second with over without (``_cpu_time``: by this process's CPU
seconds), and ``prefix_cache_answers_identical`` whether every answer was the same on both paths.
``ratio_prefix_cache_bound`` is the most any prefix cache could give on this workload (Amdahl's law): the share of
the uncached time spent in the prompts' prefill times the share of prompt tokens a prefix group shares (a group's
prefix still runs once); decoding the answers is the rest.

Continuous batching (``HFBackend.continuous``): the same questions generated in one call, a row leaving the batch
and its key/value cache as soon as its answer ends and waiting requests taking the free places, and in fixed batches
where every row runs until the batch's longest answer ends (transformers' ``generate``, the baseline), both ways back
to back in alternating order, at temperature 0 and at 0.7 with each request's seed. ``ratio_continuous_vs_fixed``
is answers per second with over without (all rounds, both temperatures), and ``continuous_answers_identical_t0`` /
``continuous_answers_identical_seeded`` whether every answer was the same on both paths; per temperature, the ratio
and ``decode_steps_fixed`` (the sum over fixed batches of their longest answer) against ``answer_tokens_per_place``
(all answer tokens over ``batch_size``), which shows what continuous batching can save at most.

Usage: python bench/collect.py [--model hf:smollm2] [--dimensions gender_career race] [--items 8]
                              [--thread-counts 1 2] [--cache-rounds 2] [--continuous-rounds 2]
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

from bias_validity.probes import templates as tpl
from bias_validity.probes.backends import GenerationRequest, load_backend
from bias_validity.probes.design import Kind, build_design
from bias_validity.probes.parse import parse_choice
from bias_validity.probes.stimuli import load_dimensions


def _generate(backend, questions, bs):  # noqa: ANN001, ANN202
    """Sample and parse an answer to each question: (status, consistent?) per question, and the seconds taken."""
    start = time.perf_counter()
    parsed = []
    for i in range(0, len(questions), bs):
        chunk = questions[i : i + bs]
        requests = [GenerationRequest(q.messages, q.seed, 0.7, int(q.params["max_new_tokens"])) for q in chunk]
        for q, done in zip(chunk, backend.generate(requests), strict=True):
            p = parse_choice(done.text or "", q.candidates)
            parsed.append((p.status, (p.first, p.second) == q.consistent_answer))
    return parsed, time.perf_counter() - start


def _closed_set(backend, questions, bs):  # noqa: ANN001, ANN202
    """P(consistent answer | one of the two answers) per question, and the seconds taken."""
    start = time.perf_counter()
    p_consistent = []
    for i in range(0, len(questions), bs):
        chunk = questions[i : i + bs]
        options = [
            [tpl.implicit_answer(*q.consistent_answer), tpl.implicit_answer(*q.inconsistent_answer)] for q in chunk
        ]
        for lp_c, lp_i in backend.choice_logprobs([q.messages for q in chunk], options):
            p_consistent.append(1 / (1 + math.exp(lp_i - lp_c)))
    return p_consistent, time.perf_counter() - start


def _by_prefix_cache(backend, questions, bs, rounds):  # noqa: ANN001, ANN202
    """Generated answers per second without and with the prefix cache, and whether every answer agreed.

    Each batch runs both ways back to back, in alternating order, so that load from other processes falls on both
    alike; wall-clock and this process's CPU seconds are both reported (CPU time is the steadier on a shared
    machine).
    """
    wall, cpu, texts = {False: 0.0, True: 0.0}, {False: 0.0, True: 0.0}, {False: [], True: []}
    batches = [questions[i : i + bs] for i in range(0, len(questions), bs)]
    for r in range(rounds):
        for k, chunk in enumerate(batches):
            requests = [GenerationRequest(q.messages, q.seed, 0.7, int(q.params["max_new_tokens"])) for q in chunk]
            for cached in (False, True) if (r + k) % 2 == 0 else (True, False):
                backend.prefix_cache = cached
                start, start_cpu = time.perf_counter(), time.process_time()
                texts[cached].append([c.text for c in backend.generate(requests)])
                wall[cached] += time.perf_counter() - start
                cpu[cached] += time.process_time() - start_cpu
    backend.prefix_cache = True
    n = rounds * len(questions)
    prefill_s, shared, total = _prefill_share(backend, batches)
    # Amdahl: the cache saves at most the shared prefix's part of the prefill, so the ratio is bounded by
    # 1 / (1 - prefill share x prefix share) whatever the implementation
    bound = 1.0 / (1.0 - (prefill_s * rounds / wall[False]) * (shared / total))
    return {
        "generate_answers_per_s_uncached": round(n / wall[False], 2),
        "prefill_share_of_uncached_time": round(prefill_s * rounds / wall[False], 3),
        "shared_prefix_share_of_prompt_tokens": round(shared / total, 3),
        "ratio_prefix_cache_bound": round(bound, 2),
        "generate_answers_per_s_prefix_cache": round(n / wall[True], 2),
        "ratio_prefix_cache_vs_uncached": round(wall[False] / wall[True], 2),
        "ratio_prefix_cache_vs_uncached_cpu_time": round(cpu[False] / cpu[True], 2),
        "prefix_cache_answers_identical": texts[False] == texts[True],
    }


def _by_continuous_batching(backend, questions, bs, rounds):  # noqa: ANN001, ANN202
    """Generated answers per second in fixed batches and with continuous batching, all questions in one call, and
    whether every answer agreed, at temperature 0 and with seeded sampling; both ways back to back, alternating."""
    wall = {(continuous, t): 0.0 for continuous in (False, True) for t in (0.0, 0.7)}
    texts = {(continuous, t): [] for continuous in (False, True) for t in (0.0, 0.7)}
    for r in range(rounds):
        for k, temperature in enumerate((0.0, 0.7)):
            requests = [
                GenerationRequest(q.messages, q.seed, temperature, int(q.params["max_new_tokens"])) for q in questions
            ]
            for continuous in (False, True) if (r + k) % 2 == 0 else (True, False):
                backend.continuous = continuous
                start = time.perf_counter()
                texts[continuous, temperature].append([c.text for c in backend.generate(requests)])
                wall[continuous, temperature] += time.perf_counter() - start
    backend.continuous = True
    n = 2 * rounds * len(questions)
    order = sorted(range(len(questions)), key=lambda i: backend._chat_ids(questions[i].messages))
    limit = int(questions[0].params["max_new_tokens"])
    fixed, continuous = (sum(v for (c, _), v in wall.items() if c == way) for way in (False, True))
    figures = {
        "generate_answers_per_s_fixed_batches": round(n / fixed, 2),
        "generate_answers_per_s_continuous": round(n / continuous, 2),
        "ratio_continuous_vs_fixed": round(fixed / continuous, 2),
        "continuous_answers_identical_t0": texts[False, 0.0] == texts[True, 0.0],
        "continuous_answers_identical_seeded": texts[False, 0.7] == texts[True, 0.7],
    }
    for t, label in ((0.0, "t0"), (0.7, "seeded")):
        # answer tokens, the end token included, in the order fixed batches take the questions
        lengths = [min(len(backend.tokenizer(texts[True, t][0][i])["input_ids"]) + 1, limit) for i in order]
        figures |= {
            f"ratio_continuous_vs_fixed_{label}": round(wall[False, t] / wall[True, t], 2),
            f"decode_steps_fixed_{label}": sum(max(lengths[i : i + bs]) for i in range(0, len(lengths), bs)),
            f"answer_tokens_per_place_{label}": round(sum(lengths) / bs, 1),
        }
    return figures


def _prefill_share(backend, batches):  # noqa: ANN001, ANN202
    """Seconds of the uncached prefill of every batch (one forward pass over the left-padded prompts), and the
    prompt tokens the batches' prefix groups share against all prompt tokens."""
    from bias_validity.probes.backends.hf import _pad, _prefix_groups

    torch = backend._torch
    seconds, shared, total = 0.0, 0, 0
    for chunk in batches:
        prompts = [backend._chat_ids(q.messages) for q in chunk]
        ids, mask = _pad(prompts, backend._pad, left=True)
        start = time.perf_counter()
        with torch.inference_mode():
            backend.model(
                input_ids=ids,
                attention_mask=mask,
                position_ids=(mask.cumsum(-1) - 1).clamp(min=0),
                use_cache=True,
                logits_to_keep=1,
            )
        seconds += time.perf_counter() - start
        total += sum(len(p) for p in prompts)
        shared += sum(length * (len(members) - 1) for members, length in _prefix_groups(prompts))
    return seconds, shared, total


def _by_threads(backend, questions, bs, counts, rounds=2):  # noqa: ANN001, ANN202
    """Responses per second of each path at each torch thread count, alternating the counts over the rounds."""
    import torch

    default = torch.get_num_threads()
    seconds = {(path, n): 0.0 for path in ("generate", "closed_set") for n in counts}
    for r in range(rounds):
        for n in counts if r % 2 == 0 else counts[::-1]:
            torch.set_num_threads(n)
            seconds["generate", n] += _generate(backend, questions, bs)[1]
            seconds["closed_set", n] += _closed_set(backend, questions, bs)[1]
    torch.set_num_threads(default)
    return {
        f"{path}_responses_per_s_{n}_threads": round(rounds * len(questions) / s, 2) for (path, n), s in seconds.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="hf:smollm2")
    parser.add_argument("--dimensions", nargs="+", default=["gender_career", "race"])
    parser.add_argument("--items", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument(
        "--thread-counts",
        type=int,
        nargs="+",
        default=[],
        help="also time both paths on the first 32 questions at each torch thread count (e.g. 1 2), alternating",
    )
    parser.add_argument(
        "--cache-rounds",
        type=int,
        default=2,
        help="rounds of generation without and with the prefix cache (0 skips the comparison)",
    )
    parser.add_argument(
        "--continuous-rounds",
        type=int,
        default=2,
        help="rounds of generation in fixed batches and with continuous batching (0 skips the comparison)",
    )
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    backend = load_backend(args.model)
    design = build_design(
        backend.name,
        load_dimensions(args.dimensions),
        ["implicit"],
        sessions=1,
        reps=1,
        items_per_dimension=args.items,
    )
    questions = [q for q in design if q.kind == Kind.CHOICE]
    bs = args.batch_size
    # warm both paths up on one question, so neither timing includes first-call setup
    warm = questions[0]
    backend.generate([GenerationRequest(warm.messages, warm.seed, 0.7, 2)])
    backend.choice_logprobs([warm.messages], [[tpl.implicit_answer(*warm.consistent_answer)]])

    parsed, generate_s = _generate(backend, questions, bs)
    p_consistent, closed_s = _closed_set(backend, questions, bs)

    ok = [consistent for status, consistent in parsed if status == "ok"]
    n = len(questions)
    import torch

    figures = {
        "model": backend.name,
        "questions": n,
        "torch_threads": torch.get_num_threads(),
        "load_1min_before": round(load_before, 2),
        "generate_responses_per_s": round(n / generate_s, 2),
        "generate_usable_responses_per_s": round(len(ok) / generate_s, 2),
        "closed_set_responses_per_s": round(n / closed_s, 2),
        "ratio_closed_set_vs_generate": round(generate_s / closed_s, 2),
        "ratio_closed_set_vs_usable_generate": round((n / closed_s) / (len(ok) / generate_s), 2) if ok else None,
        "sc_sampled": round(sum(ok) / len(ok), 4) if ok else None,
        "sampled_ok_share": round(len(ok) / n, 4),
        "sc_expected_closed_set": round(sum(p_consistent) / n, 4),
    }
    if args.cache_rounds:
        figures |= _by_prefix_cache(backend, questions, bs, args.cache_rounds)
    if args.continuous_rounds:
        figures |= _by_continuous_batching(backend, questions, bs, args.continuous_rounds)
    if args.thread_counts:
        figures |= _by_threads(backend, questions[:32], bs, args.thread_counts)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
