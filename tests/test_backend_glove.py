"""The GloVe backend on the packaged 6B-50d vectors."""

from __future__ import annotations

import numpy as np

from bias_validity.probes.backends import load_backend
from bias_validity.probes.backends.base import Capability, GenerationRequest


def test_name_capabilities_and_shape(glove):
    assert glove.name == "glove:6B-50d"
    assert glove.capabilities == frozenset({Capability.EMBEDDING})
    vectors = glove.embed_words(["king", "queen"])
    assert vectors.shape == (2, 50) and vectors.dtype == np.float32
    # first row of GloVe 6B 50d ("the") is published as 0.418 0.24968 -0.41242 ...
    np.testing.assert_allclose(glove.embed_words(["The"])[0, :3], [0.418, 0.24968, -0.41242], rtol=1e-6)


def test_lower_cases_averages_phrases_and_marks_oov(glove):
    single = glove.embed_words(["new", "york", "New York", "NEW", "new qqzzxxyy", "qqzzxxyy", ""])
    np.testing.assert_allclose(single[2], (single[0] + single[1]) / 2, rtol=1e-6)
    np.testing.assert_array_equal(single[3], single[0])
    assert np.isnan(single[4]).all() and np.isnan(single[5]).all() and np.isnan(single[6]).all()
    assert not np.isnan(single[:4]).any()


def test_known_analogy(glove):
    king, man, woman, queen = glove.embed_words(["king", "man", "woman", "queen"])
    target = king - man + woman
    cos = target @ queen / np.linalg.norm(target) / np.linalg.norm(queen)
    assert cos > 0.8  # the textbook analogy holds in GloVe 6B 50d (cos about 0.86)


def test_generate_reports_error_per_request_and_registry(glove):
    request = GenerationRequest(messages=({"role": "user", "content": "hi"},), seed=1)
    out = glove.generate([request, request])
    assert [c.text for c in out] == [None, None]
    assert out[0].error == "glove:6B-50d is a word-vector model and cannot generate"
    assert load_backend("glove:6B-50d").name == "glove:6B-50d"
