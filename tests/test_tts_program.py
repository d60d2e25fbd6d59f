"""A TTS answer names the repository's own inference program its catalog entry's source
reads (data/models/tts.toml [tts.<id>] program) as the runtime, not "transformers"."""

from __future__ import annotations

import pytest

from tests.conftest import plain_answer


@pytest.mark.parametrize(
    ("question", "program"),
    [
        ("f5-tts inference, 4gb gtx 1650", "f5-tts_infer-cli"),
        ("cosyvoice2 推理 3060 够吗", "cosyvoice/cli/cosyvoice.py"),
        ("chattts 推理 显存", "ChatTTS.Chat"),
    ],
)
@pytest.mark.parametrize(
    ("lang", "said", "not_said"),
    [
        ("zh", "运行框架：仓库自带的推理程序「", "运行框架：transformers"),
        ("en", "runtime: the repository's own inference program, ", "runtime: transformers"),
    ],
)
def test_a_tts_answer_names_its_own_inference_program(
    question: str, program: str, lang: str, said: str, not_said: str
) -> None:
    text = plain_answer(question, lang)
    assert said + program in text, text
    assert not_said not in text


@pytest.mark.parametrize(
    ("lang", "said"), [("zh", "仓库自带的推理程序"), ("en", "own inference program")]
)
def test_a_chat_model_names_no_repository_program(lang: str, said: str) -> None:
    assert said not in plain_answer("qwen2.5-7b 推理 3060", lang)
