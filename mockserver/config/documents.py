"""Fixture files as plain data: reading YAML, ``extends:``, and the merge both of them use.

A fixture file may start with ``extends: default`` (the built-in fixture) or ``extends: base.yaml``
(a path relative to the file) and give only what it changes. The result is the base merged with the
rest of the file as a JSON merge patch (RFC 7396): mappings merge key by key, lists and scalars
replace, and ``null`` puts a field back to its default. This is the same merge ``PATCH /_mock/config``
and the pytest marker apply, so a partial block from the manual means the same thing in all three.

Nothing here knows the fixture schema; :mod:`mockserver.config.fixture` validates the result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

EXTENDS = "extends"
BUILT_IN = "default"
MAX_EXTENDS_DEPTH = 16  # a chain longer than this is certainly a mistake (a cycle is caught sooner)

# libyaml's parser, where PyYAML was built with it: the built-in fixture parses in 2-3 ms with it
# against about 20 ms with the pure-Python one, on every start. The constructor is the same safe one.
FAST_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ConfigError(Exception):
    """A fixture or setting is invalid. The message is meant for a person, not a traceback."""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396: objects merge recursively, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


def read_yaml(source: Path) -> Any:
    """The file's YAML data. Unreadable files and syntax errors raise :class:`ConfigError` naming the
    file, the line and column, and what to do."""
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"config file {source}: cannot be read ({exc.strerror or exc})") from None
    return parse_yaml(text, source)


def parse_yaml(text: str, source: Path | str) -> Any:
    """``text``'s YAML data, parsed by libyaml when PyYAML has it. A document libyaml refuses is parsed
    again by PyYAML's own parser, so a syntax error reads the same (line, column and wording) either way."""
    try:
        return yaml.load(text, Loader=FAST_LOADER)  # a safe loader: the C build of SafeLoader
    except yaml.YAMLError:
        pass
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {source}: {describe_yaml_error(exc)}") from None


def describe_yaml_error(exc: yaml.YAMLError) -> str:
    """One line: where the YAML breaks and why (PyYAML's own text spans several lines)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"YAML syntax error{where}: {problem}; correct the file (`mockserver init` writes a valid one to start from)"


def resolve(data: Any, source: Path, builtin: Path, *, chain: tuple[Path, ...] = ()) -> Any:
    """``data`` with its ``extends:`` chain merged in, as one plain mapping without ``extends``."""
    if not isinstance(data, dict) or EXTENDS not in data:
        return data
    rest = {k: v for k, v in data.items() if k != EXTENDS}
    base_path = _base_path(data[EXTENDS], source, builtin)
    seen = (*chain, source.resolve())
    if base_path.resolve() in seen or len(seen) > MAX_EXTENDS_DEPTH:
        names = " -> ".join(str(p) for p in (*seen, base_path))
        raise ConfigError(f"config file {source}: extends makes a loop ({names}); remove one of the extends")
    base = read_yaml(base_path)
    if not isinstance(base, dict):
        raise ConfigError(f"config file {base_path}: the top level must be a mapping of fields")
    return merge_patch(resolve(base, base_path, builtin, chain=seen), rest)


def _base_path(value: Any, source: Path, builtin: Path) -> Path:
    if not isinstance(value, str) or not value:
        raise ConfigError(
            f"config file {source}: extends: expected 'default' (the built-in fixture) or a file path, got {value!r}"
        )
    if value == BUILT_IN:
        return builtin
    path = Path(value).expanduser()
    return path if path.is_absolute() else source.parent / path
