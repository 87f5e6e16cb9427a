"""What the Responses API's hosted tools find, when a fixture says so (``hosted_tools:``).

Without this section every hosted tool still runs, on made-up data: web search results on the
reserved example domains, a small generated image, a short program and its output. A fixture
scripts them here, and declares the vector stores ``file_search`` may search: a store a request
names that is not declared gets the live API's 404.
"""

from __future__ import annotations

from pydantic import Field

from mockserver.config.accounts import Strict

MAX_SCRIPTED = 32  # the most results, stores or files of each kind a fixture lists


class SearchResult(Strict):
    """One page a web search finds: the answer cites it with a ``url_citation``."""

    title: str = Field(min_length=1, max_length=300)
    url: str = Field(pattern=r"^https?://", max_length=2000)


class WebSearch(Strict):
    results: list[SearchResult] = Field(
        default_factory=list,
        max_length=MAX_SCRIPTED,
        description="The pages every web search finds, cited in the answer; empty: made-up pages on example domains.",
    )


class CodeInterpreter(Strict):
    code: str | None = Field(default=None, max_length=20_000, description="The program every call runs.")
    logs: str | None = Field(default=None, max_length=20_000, description="What the program prints.")


class StoredFile(Strict):
    file_id: str = Field(min_length=1, max_length=200)
    filename: str = Field(min_length=1, max_length=300)
    text: str = Field(default="", max_length=20_000, description="The passage a search of this file returns.")


class VectorStore(Strict):
    id: str = Field(pattern=r"^vs_[A-Za-z0-9_-]{1,120}$")
    files: list[StoredFile] = Field(default_factory=list, max_length=MAX_SCRIPTED)


class HostedTools(Strict):
    """The hosted tools' data: see the module's docstring."""

    web_search: WebSearch = Field(default_factory=WebSearch)
    code_interpreter: CodeInterpreter = Field(default_factory=CodeInterpreter)
    vector_stores: list[VectorStore] = Field(
        default_factory=list,
        max_length=MAX_SCRIPTED,
        description="The vector stores file_search may name; any other id gets a 404.",
    )
