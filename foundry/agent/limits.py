"""The limits that keep reading any agent file cheap, whatever the file holds."""

from __future__ import annotations

MAX_FILE_BYTES = 10 * 1024 * 1024
"""Every agent file (tsagent.json, tsagent.yaml, prompt.md, .mdt) is at most 10 MiB."""

MAX_DEPTH = 100
"""Mappings and lists nest at most 100 levels deep, in JSON and in YAML."""

MAX_YAML_CHARS = 4 * 1024 * 1024
"""YAML text (a YAML agent file, an .mdt file's YAML header) is at most 4 Mi characters: ruamel's
round-trip parser is pure Python and reads about 1 MiB a second (comments slower), so this keeps
the slowest accepted file to a few seconds. tsagent's largest sample agent is 1.3 MiB."""

MAX_YAML_VALUES = 100_000
"""A YAML document holds at most 100,000 values (keys, scalars, lists and mappings), an alias
counting as every value it stands for. ruamel's round-trip parser is pure Python (about 30-70 µs a
value), so this keeps the slowest accepted file to a few seconds; tsagent's largest sample agent,
with its embeddings, holds about 61,000."""

MAX_YAML_ALIASES = 100
"""A YAML document uses at most 100 aliases, like tsagent's YAML library (maxAliasCount)."""

MAX_INT_DIGITS = 4300
"""Integers have at most 4,300 digits (Python's limit for converting text to an integer)."""
