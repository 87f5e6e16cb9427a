"""The moderation a Chat or Responses reply carries when the request asks for one."""

from __future__ import annotations

from mockserver.engine.generation import Text, TextGenerator
from mockserver.replies.inline_moderation import moderation_of


def _source_untouched(text: Text) -> bool:
    return text._source is not None and not text._made


def test_a_reply_text_is_not_made_when_no_moderation_is_asked_for() -> None:
    text = TextGenerator().generate(seed=7, length=1_500)
    assert _source_untouched(text)

    assert moderation_of(None, [], "hello", text, listed=True) is None
    assert _source_untouched(text)  # still lazy: its tokens are made as the stream reads them


def test_a_reply_text_is_moderated_as_its_string() -> None:
    text = TextGenerator().generate(seed=7, length=40)
    as_string = TextGenerator().generate(seed=7, length=40).text
    for listed in (True, False):
        asked = {"model": "omni-moderation-latest"}
        assert moderation_of(asked, [], "hello", text, listed=listed) == moderation_of(
            asked, [], "hello", as_string, listed=listed
        )
