"""Secret masking benchmark: how long mask_text takes over about 850 KB of four kinds of text.

Dense secrets (a name=value, a header, a token, a curl -u every few words: the check sessions
14 and 15 kept masking's speed to), JSON lines holding YAML in a string (read again for their
escaped line ends), names hidden by zero-width spaces (masked as they read and mapped back),
and Russian prose (read for Latin look-alikes, nothing masked). Each figure is the best of
`--rounds` runs.

Run: python bench/masking.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import time

from foundry.supervision.secrets import mask_text

SIZE = 850_000
DENSE = [
    "password=hunter2 ",
    'token: "abc def" ',
    "curl -u ana:pw host ",
    "Authorization: Bearer abcdefgh12345678\n",
    "user=a,password=x,host=db ",
    "path=a\\ b ",
    "sk-proj-abcdefghijklmnop1234 ",
    "plain words here and there ",
]
ESCAPED_YAML = json.dumps({"msg": "db:\n  password: hunter2\n  host: db\n", "token": "abc"})
RUSSIAN = "Сегодня мы обсудим токен и пароль, а также API v2 с key=1.\n"  # noqa: RUF001


def repeated(unit: str) -> str:
    return unit * (SIZE // len(unit))


def best_seconds(text: str, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        mask_text(text)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    dense = repeated("".join(DENSE))
    texts = {
        "dense secrets": dense,
        "JSON lines, YAML in a string": repeated(ESCAPED_YAML + "\n"),
        "names hidden by zero-width spaces": dense.replace("password", "pass\u200bword"),
        "Russian prose": repeated(RUSSIAN),
    }
    for name, text in texts.items():
        print(f"{name:36} {len(text) / 1e3:5.0f} KB  {best_seconds(text, rounds):.3f} s")


if __name__ == "__main__":
    main()
