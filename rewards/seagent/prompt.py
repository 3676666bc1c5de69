"""The VLM judge's prompt and the parser of its answer (SEAgent's World State Model output format).

`judge_messages(instruction, frames)` builds one OpenAI chat request: the instruction, then each keyframe (the
screen before each step and the final screen) as an image part when the frame has one, and always as text (the
accessibility text, cut to `max_chars`), with the action taken from it. The model is asked, as SEAgent's judge
prompt asks, for per-frame captions and a result dict, and is told that anything short of full completion is
`Correctness: false`:

    <captions>
    Frame1: ...
    FrameN: ...
    </captions>
    <res_dict>{"Correctness": true|false, "Redundant": [k, ...], "First_Error_Step": k|null,
               "Error_Type": "...", "Correct_Action": "..."}</res_dict>

Steps are 1-indexed in the answer, as in SEAgent's; `parse_answer` returns them 0-indexed. Anything it cannot
read — no `<res_dict>`, JSON that does not parse, a missing or mistyped `Correctness`, a step outside the
trajectory — raises `MalformedAnswer`: the caller retries, then counts the judgement as an infrastructure failure.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from typing import Any

MAX_FRAMES = 15
PROMPT = (
    "I am evaluating the performance of a UI agent. The frames below are sequential keyframes of its episode: "
    "the screen before each of its actions, with the action it took, and the final screen. "
    "The instruction was: '{instruction}'.\n"
    "For each frame, caption what changed on the screen compared with the frame before it. Then judge the episode:\n"
    "- Correctness: true only if the task is fully and correctly completed in the final frame; unless the task is "
    "fully and correctly completed, you must set Correctness to false.\n"
    "- Redundant: the steps (1-indexed) that did nothing useful for the task.\n"
    "- First_Error_Step: the first step (1-indexed) whose action was wrong, or null if none was.\n"
    "- Error_Type and Correct_Action: what went wrong and what should have been done instead.\n"
    "Answer exactly in this format:\n"
    "<captions>\nFrame1: ...\nFrame2: ...\n</captions>\n"
    '<res_dict>{{"Correctness": false, "Redundant": [], "First_Error_Step": null, '
    '"Error_Type": "", "Correct_Action": ""}}</res_dict>'
)


class MalformedAnswer(ValueError):
    """The judge's answer does not follow the format (see the module docstring)."""


@dataclass(frozen=True)
class Frame:
    """One keyframe: the screen's text, optionally its image (PNG/JPEG bytes), and the action taken from it
    (empty for the final screen)."""

    text: str
    action: str = ""
    image: bytes | None = None


@dataclass(frozen=True)
class Answer:
    """A parsed answer; steps 0-indexed."""

    success: bool
    captions: list[str]
    redundant: list[int] = field(default_factory=list)
    first_error_step: int | None = None
    error_type: str = ""
    correct_action: str = ""


def _image_part(image: bytes) -> dict[str, Any]:
    kind = "jpeg" if image[:3] == b"\xff\xd8\xff" else "png"
    encoded = base64.b64encode(image).decode()
    return {"type": "image_url", "image_url": {"url": f"data:image/{kind};base64,{encoded}"}}


def keyframes(frames: list[Frame], limit: int = MAX_FRAMES) -> list[tuple[int, Frame]]:
    """At most `limit` frames, always the first and the last (SEAgent keeps up to 15 keyframes); `(index, frame)`."""
    if len(frames) <= limit:
        return list(enumerate(frames))
    step = (len(frames) - 1) / (limit - 1)
    picks = sorted({round(i * step) for i in range(limit)})
    return [(i, frames[i]) for i in picks]


def judge_messages(instruction: str, frames: list[Frame], max_chars: int = 1500) -> list[dict[str, Any]]:
    """The chat messages of one judge request (see the module docstring)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": PROMPT.format(instruction=instruction)}]
    for number, (index, frame) in enumerate(keyframes(frames), start=1):
        label = f"Frame{number} (before step {index + 1})" if frame.action else f"Frame{number} (final screen)"
        if frame.image is not None:
            content.append(_image_part(frame.image))
        text = frame.text if len(frame.text) <= max_chars else frame.text[: max_chars - 1] + "…"
        action = f"\nAction taken: {frame.action}" if frame.action else ""
        content.append({"type": "text", "text": f"{label}:\n{text}{action}"})
    return [{"role": "user", "content": content}]


_CAPTIONS = re.compile(r"<captions>(.*?)</captions>", re.S)
_RESULT = re.compile(r"<res_dict>(.*?)</res_dict>", re.S)
_FRAME = re.compile(r"^\s*Frame\s*(\d+)\s*:\s*(.*)$")


def _step(value: Any, steps: int, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MalformedAnswer(f"{key} must hold step numbers, got {value!r}")
    if not 1 <= value <= steps:
        raise MalformedAnswer(f"{key} = {value} is outside the episode's steps 1..{steps}")
    return value - 1


def parse_answer(text: str, steps: int) -> Answer:
    """The judge's answer for an episode of `steps` steps (see the module docstring); `MalformedAnswer` if bad."""
    found = _RESULT.search(text)
    if found is None:
        raise MalformedAnswer("no <res_dict>...</res_dict> in the answer")
    body = found.group(1).strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    try:
        result = json.loads(body)
    except json.JSONDecodeError as error:
        raise MalformedAnswer(f"<res_dict> is not JSON: {error}") from None
    if not isinstance(result, dict):
        raise MalformedAnswer("<res_dict> is not a JSON object")
    correct = result.get("Correctness")
    if isinstance(correct, str) and correct.lower() in ("true", "false"):
        correct = correct.lower() == "true"
    if not isinstance(correct, bool):
        raise MalformedAnswer(f"Correctness must be true or false, got {correct!r}")
    redundant_raw = result.get("Redundant") or []
    if not isinstance(redundant_raw, list):
        raise MalformedAnswer(f"Redundant must be a list, got {redundant_raw!r}")
    redundant = sorted({_step(v, steps, "Redundant") for v in redundant_raw})
    first = result.get("First_Error_Step")
    first_error = None if first in (None, "None", "null") else _step(first, steps, "First_Error_Step")
    captions: list[str] = []
    block = _CAPTIONS.search(text)
    if block is not None:
        for line in block.group(1).splitlines():
            match = _FRAME.match(line)
            if match:
                captions.append(match.group(2).strip())
    return Answer(
        success=correct,
        captions=captions,
        redundant=redundant,
        first_error_step=None if correct else first_error,
        error_type=str(result.get("Error_Type") or ""),
        correct_action=str(result.get("Correct_Action") or ""),
    )
