"""policies/: tokenizer, presets, the one loading path, prompt formats and the action parser (CPU, tiny models)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, PreTrainedTokenizerBase

from raygent.policies.actions import (
    Action,
    ActionGrammar,
    AnswerAction,
    CallAction,
    ClickAction,
    FinishedAction,
    InvalidAction,
    TypeAction,
)
from raygent.policies.loading import PolicyLoadError, load_policy
from raygent.policies.presets import PRESETS, build_tiny_model, create_model, get_preset
from raygent.policies.prompts import (
    ChatMessage,
    PromptFormat,
    Turn,
    encode_prompt,
    has_chat_template,
    render_plain,
    render_prompt,
)
from raygent.policies.tokenizer import (
    EOS_TOKEN,
    PAD_TOKEN,
    QWEN2_PRETOKENIZE_REGEX,
    SPECIAL_TOKENS,
    train_tokenizer,
)

CORPUS = [
    "Task: look up the value of key alpha, then answer it.\nObservation: alpha = 42\n",
    'call(lookup, "alpha")\nanswer(42)\nclick(12)\ntype(3, "hello world")\nfinished()\n',
    "The quick brown fox jumps over the lazy dog. 0123456789 + - * / = ( ) [ ] { }\n",
] * 20


@pytest.fixture(scope="module")
def tokenizer() -> PreTrainedTokenizerBase:
    return train_tokenizer(CORPUS, vocab_size=512)


@pytest.fixture(scope="module")
def model_dir(tokenizer: PreTrainedTokenizerBase, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model("tiny-llama", tokenizer, tmp_path_factory.mktemp("tiny-llama"), seed=7)


# ---------------------------------------------------------------- tokenizer


@pytest.mark.parametrize(
    "text", ["", "answer(42)", "  leading and trailing  ", "tabs\tand\nnewlines\r\n", "ünïcödé 日本語 🙂", "x" * 300]
)
def test_tokenizer_round_trips_any_text(tokenizer: PreTrainedTokenizerBase, text: str) -> None:
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert tokenizer.decode(ids) == text
    assert tokenizer.unk_token_id is None or tokenizer.unk_token_id not in ids


def test_tokenizer_special_tokens_and_reload(tokenizer: PreTrainedTokenizerBase, tmp_path: Path) -> None:
    assert [tokenizer.convert_tokens_to_ids(token) for token in SPECIAL_TOKENS] == list(range(len(SPECIAL_TOKENS)))
    assert (tokenizer.pad_token, tokenizer.eos_token) == (PAD_TOKEN, EOS_TOKEN)
    assert tokenizer.encode("abc") == tokenizer.encode("abc", add_special_tokens=False)  # nothing added
    assert len(tokenizer) <= 512
    tokenizer.save_pretrained(str(tmp_path))
    reloaded = AutoTokenizer.from_pretrained(str(tmp_path), local_files_only=True)
    text = 'call(lookup, "alpha") 日本'
    assert reloaded.encode(text) == tokenizer.encode(text)
    assert reloaded.chat_template == tokenizer.chat_template
    assert reloaded.eos_token_id == tokenizer.eos_token_id and reloaded.pad_token_id == tokenizer.pad_token_id


def test_tokenizer_survives_qwen2_tokenizer_class(tokenizer: PreTrainedTokenizerBase, tmp_path: Path) -> None:
    """transformers 5 loads a `qwen2` checkpoint's tokenizer as Qwen2Tokenizer, which rebuilds the pipeline."""
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX, Qwen2Tokenizer

    assert PRETOKENIZE_REGEX == QWEN2_PRETOKENIZE_REGEX
    tokenizer.save_pretrained(str(tmp_path))
    rebuilt = Qwen2Tokenizer.from_pretrained(str(tmp_path), local_files_only=True)
    for text in [*CORPUS[:3], "x = 12345; y='it''s'\n\n  z"]:
        assert rebuilt.encode(text) == tokenizer.encode(text)
    assert rebuilt.eos_token_id == tokenizer.eos_token_id and rebuilt.pad_token_id == tokenizer.pad_token_id


def test_tokenizer_learns_merges_from_the_corpus(tokenizer: PreTrainedTokenizerBase) -> None:
    assert len(tokenizer.encode("answer")) == 1
    assert len(tokenizer.encode("assistant\n")) <= 2
    with pytest.raises(ValueError, match="at least"):
        train_tokenizer(CORPUS, vocab_size=100)


# ---------------------------------------------------------------- presets and loading


@pytest.mark.parametrize(
    ("name", "low", "high"),
    [("tiny-llama", 1e6, 3e6), ("tiny-qwen2", 1e6, 3e6), ("small-llama", 25e6, 35e6), ("small-qwen2", 25e6, 35e6)],
)
def test_presets_have_the_expected_parameter_counts(name: str, low: float, high: float) -> None:
    preset = get_preset(name)
    count = preset.num_parameters(vocab_size=2048)
    assert low <= count <= high
    embedding = 2048 * preset.hidden_size  # tied: counted once
    assert preset.num_parameters(vocab_size=4096) - count == embedding


def test_qwen2_differs_from_llama_by_its_attention_biases() -> None:
    llama, qwen = PRESETS["tiny-llama"], PRESETS["tiny-qwen2"]
    head_dim = llama.hidden_size // llama.num_attention_heads
    biases = llama.num_hidden_layers * (llama.hidden_size + 2 * llama.num_key_value_heads * head_dim)
    assert qwen.num_parameters(1000) - llama.num_parameters(1000) == biases
    with pytest.raises(KeyError, match="known presets"):
        get_preset("huge-llama")


@pytest.mark.parametrize("preset", ["tiny-llama", "tiny-qwen2"])
def test_save_and_load_policy_gives_identical_logits(
    preset: str, tokenizer: PreTrainedTokenizerBase, tmp_path: Path
) -> None:
    directory = build_tiny_model(preset, tokenizer, tmp_path / preset, seed=3)
    assert {"config.json", "model.safetensors", "tokenizer.json", "generation_config.json"} <= {
        p.name for p in directory.iterdir()
    }
    model, loaded_tokenizer = load_policy(directory, dtype="float32", device="cpu")
    reference = create_model(preset, tokenizer, seed=3)
    ids = torch.tensor([tokenizer.encode("Task: look up alpha\nObservation: alpha = 42")])
    with torch.no_grad():
        assert torch.equal(model(ids).logits, reference(ids).logits)
    assert not model.training and model.config.vocab_size == len(tokenizer)
    assert loaded_tokenizer.encode("answer(42)") == tokenizer.encode("answer(42)")
    assert model.config.model_type == preset.split("-")[1]


def test_the_seed_alone_decides_the_weights(tokenizer: PreTrainedTokenizerBase) -> None:
    first, again, other = (create_model("tiny-llama", tokenizer, seed=s).state_dict() for s in (1, 1, 2))
    name = "model.layers.0.self_attn.q_proj.weight"
    assert torch.equal(first[name], again[name]) and not torch.equal(first[name], other[name])


def test_load_policy_dtype(model_dir: Path) -> None:
    model, _ = load_policy(model_dir, dtype="bfloat16")
    assert model.dtype == torch.bfloat16
    with pytest.raises(PolicyLoadError, match="unknown dtype 'float7'"):
        load_policy(model_dir, dtype="float7")


def test_loader_rejects_what_is_not_a_model_directory(model_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(PolicyLoadError, match="does not exist"):
        load_policy(tmp_path / "nowhere")
    with pytest.raises(PolicyLoadError, match=r"not a model directory: missing config\.json, weights .*tokenizer"):
        load_policy(tmp_path)
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(PolicyLoadError, match="is a file"):
        load_policy(tmp_path / "notes.txt")
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "config.json").write_text((model_dir / "config.json").read_text())
    (partial / "tokenizer.json").write_text((model_dir / "tokenizer.json").read_text())
    with pytest.raises(PolicyLoadError, match=r"missing weights \(model\.safetensors or pytorch_model\.bin\)"):
        load_policy(partial)


# ---------------------------------------------------------------- prompts


def test_prompt_messages_follow_the_episode() -> None:
    grammar = ActionGrammar.of("call", "answer")
    history = [Turn(observation="start", action='call(lookup, "alpha")'), Turn(observation="alpha = 42", action="x")]
    messages = PromptFormat().messages("find alpha", "error: bad action", history, grammar)
    assert [m.role for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "call(tool, arg)" in messages[0].content and "answer(text)" in messages[0].content
    assert messages[1].content == "Task: find alpha\n\nObservation:\nstart"
    assert messages[2].content == 'call(lookup, "alpha")'
    assert messages[-1].content == "Observation:\nerror: bad action"

    trimmed = PromptFormat(max_history=1).messages("find alpha", "now", history)
    assert [m.role for m in trimmed] == ["system", "user", "assistant", "user"]
    assert trimmed[1].content == "Task: find alpha\n\nObservation:\nalpha = 42"
    only_now = PromptFormat(max_history=0).messages("find alpha", "now", history)
    assert [m.content for m in only_now[1:]] == ["Task: find alpha\n\nObservation:\nnow"]
    last = PromptFormat(task_position="last")
    assert [m.content for m in last.messages("find alpha", "now", history)[1::2]] == [
        "Observation:\nstart",
        "Observation:\nalpha = 42",
        "Observation:\nnow\n\nTask: find alpha",
    ]
    assert last.model_copy(update={"max_history": 0}).messages("find alpha", "now")[1].content == (
        "Observation:\nnow\n\nTask: find alpha"
    )


def test_the_last_action_line_names_the_trimmed_turns_action_and_its_error() -> None:
    shown = PromptFormat(max_history=0, task_position="last", last_action=True)
    assert shown.messages("mute", "screen 1")[1].content == "Last action: none\nObservation:\nscreen 1\n\nTask: mute"
    history = [Turn(observation="screen 1", action=' click_label("Audio")')]
    assert shown.messages("mute", "screen 2", history)[1].content.startswith(
        'Last action: click_label("Audio")\nObservation:\nscreen 2'
    )
    failed = [Turn(observation="screen 1", action='click_label("Sound")', error="no element named 'Sound'" + "!" * 300)]
    line = shown.messages("mute", "screen 1", failed)[1].content.splitlines()[0]
    assert line == f"Last action: click_label(\"Sound\") (error: no element named 'Sound'{'!' * 176})"
    assert "Last action" not in PromptFormat(max_history=0).messages("mute", "screen 2", failed)[1].content


def test_prompt_uses_the_chat_template(tokenizer: PreTrainedTokenizerBase) -> None:
    messages = [ChatMessage(role="system", content="be brief"), ChatMessage(role="user", content="hi")]
    assert has_chat_template(tokenizer)
    text = render_prompt(tokenizer, messages)
    assert text == "<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    ids = encode_prompt(tokenizer, messages)
    assert ids == tokenizer.encode(text, add_special_tokens=False) and ids[0] == tokenizer.convert_tokens_to_ids(
        "<|im_start|>"
    )


def test_prompt_plain_format_without_a_chat_template(tokenizer: PreTrainedTokenizerBase) -> None:
    base = train_tokenizer(CORPUS[:3], vocab_size=300)
    base.chat_template = None
    messages = [ChatMessage(role="system", content="S"), ChatMessage(role="user", content="U")]
    assert not has_chat_template(base)
    assert render_prompt(base, messages) == "### System\nS\n\n### User\nU\n\n### Assistant\n"
    assert render_plain(messages, add_generation_prompt=False) == "### System\nS\n\n### User\nU\n\n"
    assert base.decode(encode_prompt(base, messages)) == render_prompt(base, messages)


# ---------------------------------------------------------------- actions

GRAMMAR = ActionGrammar.of("call", "answer", "click", "type", "finished")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('call(calculator, "12*7")', CallAction(tool="calculator", arg="12*7")),
        ("Action:  call( calculator ,  '12*7' ) ", CallAction(tool="calculator", arg="12*7")),
        ("call(calc, (2+3)*4)", CallAction(tool="calc", arg="(2+3)*4")),
        ("call(tool=kv.get, arg=alpha)", CallAction(tool="kv.get", arg="alpha")),
        ("answer(84)", AnswerAction(text="84")),
        ("answer(yes, I think so)", AnswerAction(text="yes, I think so")),
        ('answer("say \\"hi\\"\\n")', AnswerAction(text='say "hi"\n')),
        ("answer('it\\'s')", AnswerAction(text="it's")),
        ("click(12)", ClickAction(element=12)),
        ("click(\n  12\n)", ClickAction(element=12)),
        ('click("12")', ClickAction(element=12)),
        ('type(12, "hello, world")', TypeAction(element=12, text="hello, world")),
        ("type(text='hi', element=3)", TypeAction(element=3, text="hi")),
        ("type(3, hi there)", TypeAction(element=3, text="hi there")),
        ("type(1, 2, 3, 4)", TypeAction(element=1, text="2, 3, 4")),
        ("finished()", FinishedAction()),
        ("I am done.\nfinished( )\n", FinishedAction()),
        ("Thought: click(5) first, then click(6)", ClickAction(element=5)),
        ("f(x) and then click(4)", ClickAction(element=4)),
    ],
)
def test_action_parser_reads_valid_forms(text: str, expected: Action) -> None:
    parsed = GRAMMAR.parse(text)
    assert parsed == expected and parsed.valid


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "no action found"),
        ("I would like to click the button", "no action found"),
        ("click(-1)", "greater than or equal to 0"),
        ("click(x)", "valid integer"),
        ("click(1, 2)", "takes 1 argument(s)"),
        ("type(12)", "missing argument(s) text"),
        ("finished(now)", "takes 0 argument(s)"),
        ("answer()", "missing argument(s) text"),
        ("call(calc", "missing ')'"),
        ('type(1, "abc)', 'unclosed " quote'),
        ('type(1, "a" b)', "unexpected 'b'"),
        ('type(element=1, element=2, text="x")', "given twice"),
        ("call(1bad, x)", "tool"),
    ],
)
def test_action_parser_returns_invalid_action(text: str, reason: str) -> None:
    parsed = GRAMMAR.parse(text)
    assert isinstance(parsed, InvalidAction) and not parsed.valid
    assert parsed.raw == text and parsed.render() == text
    assert reason in parsed.reason


def test_grammar_accepts_only_its_kinds_and_custom_actions() -> None:
    tools = ActionGrammar.of("call", "answer")
    refused = tools.parse("click(3)")
    assert isinstance(refused, InvalidAction)
    assert "not accepted here" in refused.reason and "call, answer" in refused.reason
    assert tools.describe().splitlines()[0].startswith("call(tool, arg):")

    class Scroll(Action):
        kind = "scroll"
        description = "scroll the page"
        direction: str
        amount: int = 1

    custom = ActionGrammar([Scroll, FinishedAction])
    assert custom.parse("scroll(down, 3)") == Scroll(direction="down", amount=3)
    assert custom.kinds == ("scroll", "finished")
    with pytest.raises(KeyError, match="unknown action kind"):
        ActionGrammar.of("jump")
    with pytest.raises(ValueError, match="share the kind"):
        ActionGrammar([ClickAction, ClickAction])


@pytest.mark.parametrize(
    "action",
    [
        CallAction(tool="calc", arg="1, 2)"),
        CallAction(tool="kv.get", arg=""),
        AnswerAction(text="he said \"hi\"\n'x' \\ 日本"),
        TypeAction(element=3, text="(a, b)"),
        ClickAction(element=0),
        FinishedAction(),
    ],
)
def test_rendered_actions_parse_back(action: Action) -> None:
    assert GRAMMAR.parse(action.render()) == action
    assert GRAMMAR.parse(f"Thought: ok.\nAction: {action.render()}\n") == action


def test_action_parser_never_raises() -> None:
    rng = random.Random(0)
    alphabet = [*"call(answer)click type finished,\"'\\ 12=x\n", "call(", "type(", ")", '"']
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        parsed = GRAMMAR.parse(text)
        assert parsed.valid or isinstance(parsed, InvalidAction)
        if parsed.valid:
            assert isinstance(parsed, Action) and GRAMMAR.parse(parsed.render()) == parsed
    assert json.loads(InvalidAction(raw="x", reason="y").model_dump_json()) == {"raw": "x", "reason": "y"}
