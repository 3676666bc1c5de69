"""Sentence embeddings (`policies/embeddings.py`): the WordLlama model shipped in its PyPI wheel, loaded offline,
and the transformers path (mean pooling over a model directory) on a tiny model built here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from raygent.policies.cache import distribution_file
from raygent.policies.embeddings import (
    EmbedderError,
    SentenceEmbedder,
    TransformersEmbedder,
    WordLlamaEmbedder,
    _shipped_file,
    make_embedder,
)
from raygent.policies.presets import build_tiny_model
from raygent.policies.tokenizer import build_tokenizer


def test_wordllama_gives_unit_rows_and_ranks_by_meaning_not_shared_words() -> None:
    embedder = make_embedder("wordllama")
    assert isinstance(embedder, WordLlamaEmbedder) and isinstance(embedder, SentenceEmbedder)
    assert make_embedder("wordllama") is embedder  # one instance per process
    docs = [
        "To mute the audio, open the Audio menu and choose Mute.",
        "Set the playback speed from the Playback menu.",
        "Export the slide deck as PDF from the File menu.",
    ]
    vectors = embedder.embed([*docs, ""])
    assert vectors.shape == (4, 256) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, rtol=1e-5)
    assert not vectors[3].any()  # an empty text: a zero row, no NaN
    # queries worded otherwise than their document
    for query, expected in [
        ("How do I turn off the sound?", 0),
        ("make the video play faster", 1),
        ("save my presentation to a file", 2),
    ]:
        scores = vectors[:3] @ embedder.embed([query])[0]
        assert int(np.argmax(scores)) == expected, (query, scores)
    np.testing.assert_array_equal(embedder.embed(docs[:1])[0], vectors[0])  # batch-independent


def test_a_model_directory_is_mean_pooled_and_padding_does_not_change_a_sentence(tmp_path: Path) -> None:
    corpus = ["open the file menu", "mute the audio now", "set the speed"] * 30
    directory = build_tiny_model("tiny-qwen2", build_tokenizer(corpus, tmp_path, vocab_size=300), tmp_path)
    embedder = make_embedder(str(directory))
    assert isinstance(embedder, TransformersEmbedder) and embedder.dim == 256
    short, long = "mute", "open the file menu and set the speed of the audio"
    together = embedder.embed([short, long])
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(embedder.embed([short])[0], together[0], atol=1e-5)  # padded in the batch
    assert embedder.embed([]).shape == (0, 256)


def test_a_missing_model_or_package_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbedderError, match="expected 'wordllama' or a model directory"):
        make_embedder(str(tmp_path / "nothing-here"))
    with pytest.raises(EmbedderError, match=r"has no file 'missing\.bin'; reinstall it: pip install --no-deps"):
        _shipped_file("missing.bin")
    with pytest.raises(FileNotFoundError, match=r"'no-such-distribution', which is not installed"):
        distribution_file("no-such-distribution", "weights.safetensors", "the test")
