"""Secrets masked in what is shown of a call; ordinary values left as they are."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from foundry.supervision.secrets import SECRET, is_secret_name, mask_secrets, mask_text

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("https://ana:pw@example.com/x", f"https://ana:{SECRET}@example.com/x"),
        ("Authorization: Bearer abcdefgh12345678", f"Authorization: Bearer {SECRET}"),
        (f"push with {TOKEN} now", f"push with {SECRET} now"),
        ("export DB_PASSWORD='hunter2' && make", f"export DB_PASSWORD='{SECRET}' && make"),
        ("curl --user ana:hunter2 https://x", f"curl --user ana:{SECRET} https://x"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", SECRET),
        (base64.b64encode(f"token={TOKEN}".encode()).decode(), SECRET),
        (base64.urlsafe_b64encode(b"ana:correct-horse").decode(), SECRET),
        ("token=123456", f"token={SECRET}"),  # a one-time code is a secret however short
        ("--token 123456", f"--token {SECRET}"),
        ("GITHUB_TOKEN=abc123def456", f"GITHUB_TOKEN={SECRET}"),
        ("api_token: xyz789", f"api_token: {SECRET}"),
        ("access_token=qwerty&x=1", f"access_token={SECRET}&x=1"),
        ("tokenValue=qwerty1", f"tokenValue={SECRET}"),
        # a token glued to a word: its prefix tells it (`sk-` and `ghs_` by a random body)
        (f"key{TOKEN} now", f"key{SECRET} now"),
        ("idsk-proj-Xy12Ab34Cd56Ef78Gh90Ij12 x", f"id{SECRET} x"),
        ("laughsghs_Ab12Cd34Ef56Gh78Ij90Kl", f"laughs{SECRET}"),
        ("xAKIAIOSFODNN7EXAMPLE", f"x{SECRET}"),
        # a text that reads as a secret once shown: invisible characters, full-width letters
        # (its characters kept but the value's)
        ("pass\u200bword=hunter2", f"pass\u200bword={SECRET}"),
        ("--pass\u2060word hunter2", f"--pass\u2060word {SECRET}"),
        (f"push {TOKEN[:8]}\u200b{TOKEN[8:]} now", f"push {SECRET} now"),
        (
            "\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44=hunter2",
            f"\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44={SECRET}",
        ),
        ("pass%E2%80%8Bword%3Dhunter2", f"pass\u200bword={SECRET}"),
    ],
)
def test_secrets_in_text_are_masked(text: str, shown: str) -> None:
    assert mask_text(text) == shown


# (text, the secret that must not show, what must stay after it)
NAMED_VALUES = [
    ('{"password": 123}', "123", "}"),
    ('{"password": 123, "path": "a"}', "123", ', "path": "a"}'),
    ('{"token": true}', "true", "}"),
    ('{"a": {"api_key": null}, "b": 2}', "null", '}, "b": 2}'),
    ('[{"secret": 3.5e-7}]', "3.5e-7", "}]"),
    ('{"password": "two words", "n": 1}', "two words", '", "n": 1}'),
    ('{"password": "say \\"hi\\" now"}', 'say \\"hi\\" now', '"}'),
    ("{'api_key': 'k1 k2'}", "k1 k2", "'}"),
    ("password=abc&user=x", "abc", "&user=x"),
    ("https://h.example/p?token=abc&x=1", "abc", "&x=1"),
    ("https://h.example/p?x=1&access_token=q9;y=2", "q9", ";y=2"),
    ("export API_KEY=k=v:w\nNEXT=1", "k=v:w", "\nNEXT=1"),
    ("DB_PASSWORD=hunter2 make", "hunter2", " make"),
    ("password: abc\nuser: ana", "abc", "\nuser: ana"),
    ("db:\n  password: p@ss:w0rd\n  port: 5432", "p@ss:w0rd", "\n  port: 5432"),
    ("opts{token=abc}", "abc", "}"),
    ("password=" + "x" * 2000 + " end", "x" * 10, " end"),
    ('{"password": "' + "y" * 2000 + '"}', "y" * 10, '"}'),
    # JSON written inside a JSON string (a log line, a body sent as text): its quotes escaped
    ('{\\"password\\": \\"two words\\"}', "two words", '\\"}'),
    ('{\\"api_key\\":\\"k1\\", \\"n\\": 1}', "k1", '\\", \\"n\\": 1}'),
    ('"{\\"token\\": \\"a\\\\\\\\b c\\"}"', "b c", '\\"}"'),
    # a bracket or comma inside a bare value is part of it; only after it does it end it
    ("password=abc}def", "}def", ""),
    ("SECRETS=a,b,c", "b,c", ""),
    ("f(token=abc)", "abc", ")"),
    # an option's value, on a command line or in a JSON string
    ("--password hunter2}", "hunter2", "}"),
    ('{"cmd": "run --password hunter2}"}', "hunter2", '}"}'),
    ('{"cmd":"--password hunter2"}', "hunter2", '"}'),
    ("--password hunter2]", "hunter2", "]"),
    ("--password hunter2;ls", "hunter2", ";ls"),
    ("--password hunter2&&ls", "hunter2", "&&ls"),
    ("(--password hunter2)", "hunter2", ")"),
    ("--api-key k}9 --x", "k}9", " --x"),
    ("--password 'two words' && ls", "words", "' && ls"),
    ('run --password \\"two words\\" now', "words", '\\" now'),
    ("--password " + "z" * 2000 + " end", "z" * 10, " end"),
    ("curl -u ana:hunter2} x", "hunter2", "} x"),
    ('curl -u "ana:two words" x', "words", '" x'),
    ("curl -u ana:" + "q" * 400 + " x", "q" * 10, " x"),
    # other languages' and tools' ways to give one
    ("$db = ['password' => 'hunter 2'];", "hunter 2", "'];"),
    ('password := "hunter 2"', "hunter 2", '"'),
    ("ALTER USER ana WITH PASSWORD 'hunter 2';", "hunter 2", "';"),
    ("CREATE USER ana IDENTIFIED BY 'pw 2';", "pw 2", "';"),
    ("mysql -uroot -phunter2 db", "hunter2", " db"),
    ("mysqldump -p'two words' db", "words", "' db"),
    ("sshpass -p hunter2 ssh host", "hunter2", " ssh host"),
    ("docker login -u ana -p hunter2 registry.example", "hunter2", " registry.example"),
    ("redis-cli -h db -a hunter2 ping", "hunter2", " ping"),
    ("openssl enc -aes256 -pass pass:hunter2 -in f", "hunter2", " -in f"),
    # a header's value runs to its line's end
    ("Authorization: abcdef123456", "abcdef123456", ""),
    ("Authorization: token abc", "abc", ""),
    ("Authorization: Bearer abc", "abc", ""),
    ('{"headers": "Authorization: Basic YW5hOmh1bnRlcjI="}', "YW5h", '"}'),
    ("Cookie: sessionid=abc; csrf=x\nHost: h", "csrf=x", "\nHost: h"),
]


@pytest.mark.parametrize(("text", "secret", "after"), NAMED_VALUES)
def test_a_named_value_is_masked_up_to_its_end_and_what_follows_stays(
    text: str, secret: str, after: str
) -> None:
    shown = mask_text(text)
    assert secret not in shown
    assert shown.endswith(SECRET + after)


@pytest.mark.parametrize(
    "value",
    [
        "src/a.py",
        "e7dddf66c0b78d6ff153c4412c1441ec6f5e1520",  # a commit
        "3f2c1a9e-5b7d-4e8f-9a0b-1c2d3e4f5a6b",
        "text/plain",
        "https://example.com/a/b?page=2",
        "grep -rn TODO src > docs/todo.txt",
        "node_modules/some-package/dist/index.min.js",
        base64.b64encode(bytes(range(48))).decode(),  # binary, not text
        "Europe/Paris",
        # counts of a model's tokens, and its tokenizer, are no secret (the person deciding
        # needs them)
        "max_tokens=100",
        '{"max_tokens": 100, "temperature": 0.2}',
        "llm --max-tokens 512 --model small",
        "num_tokens: 5",
        "TOKENS=4096",
        "tokenizer=gpt2 tokenize=true",
        # words that end in a token's prefix, and options that are no secret
        "task-queue-worker-settings-v2",
        "disk-cleanup-scheduler-2024-daily",
        "she laughs_loudlyandoftenwithfriends",
        "mkdir -p build/out && ssh -p 2222 host",
        "Authorization required for this page",
        "mysql -h db -P3306 -p shop",  # -p alone asks for the password
        "openssl enc -pass env:DB_KEY -in f",  # names where the password is
        "the password is asked for",
        "f(a, b) and [1, 2]",
        "café, naïve, 東京",
        "family \U0001f468\u200d\U0001f469\u200d\U0001f467 emoji",  # joiners kept
    ],
)
def test_ordinary_values_are_left_alone(value: str) -> None:
    assert mask_text(value) == value


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("password", True),
        ("clientSecret", True),
        ("X-Api-Key", True),
        ("OPENAI_API_KEY", True),
        ("Authorization", True),
        ("session_token", True),
        ("path", False),
        ("max_tokens", False),
        ("author", False),
        ("keyboard_layout", False),
        ("\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44", True),  # full-width
        ("api\u200bKey", True),
    ],
)
def test_a_name_says_secret(key: str, secret: bool) -> None:
    assert is_secret_name(key) is secret


def test_everything_under_a_secret_name_is_masked_and_the_rest_kept() -> None:
    params: dict[str, Any] = {
        "credentials": {"user": "ana", "keys": ["k1", "k2"]},
        "user": "ana",
        "count": 3,
    }
    assert mask_secrets(params) == {
        "credentials": {"user": SECRET, "keys": [SECRET, SECRET]},
        "user": "ana",
        "count": 3,
    }


def test_a_secret_split_across_values_masks_each_part() -> None:
    params = {"head": TOKEN[:10], "middle": {"x": TOKEN[10:20]}, "tail": [TOKEN[20:]], "n": " 7"}
    assert mask_secrets(params) == {
        "head": SECRET,
        "middle": {"x": SECRET},
        "tail": [SECRET],
        "n": " 7",
    }


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        (["sshpass", "-p", "hunter2", "ssh", "h"], ["sshpass", "-p", SECRET, "ssh", "h"]),
        (["mysql", "-uroot", "-phunter2", "db"], ["mysql", "-uroot", SECRET, "db"]),
        (["openssl", "enc", "-pass", "pass:hunter2"], ["openssl", "enc", "-pass", SECRET]),
        (["curl", "-u", "ana:hunter2", "https://x"], ["curl", "-u", SECRET, "https://x"]),
        (["app", "--password", "hunter2"], ["app", "--password", SECRET]),
        # kept: what is no secret in its command, and an argument that masks itself
        (["docker", "login", "-p", "hunter2"], ["docker", "login", "-p", SECRET]),
        (["ssh", "-p", "2222", "h"], ["ssh", "-p", "2222", "h"]),
        (["docker", "run", "-p", "8080:80", "app"], ["docker", "run", "-p", "8080:80", "app"]),
        (["mysql", "-P3306", "-p", "db"], ["mysql", "-P3306", "-p", "db"]),
        (["git", "commit", "-m", "token=abc"], ["git", "commit", "-m", f"token={SECRET}"]),
    ],
)
def test_a_commands_argument_is_masked_as_its_command_line_reads(
    command: list[str], shown: list[str]
) -> None:
    assert mask_secrets({"argv": command}) == {"argv": shown}


def test_masking_leaves_the_parameters_as_they_were() -> None:
    params = {"password": "hunter2", "url": "https://a:b@c"}
    mask_secrets(params)
    assert params == {"password": "hunter2", "url": "https://a:b@c"}


@pytest.mark.parametrize("params", [{"a": []}, {"a": ()}, {"a": [[]]}, {}, {"a": None}])
def test_empty_values_are_shown_as_they_are(params: dict[str, Any]) -> None:
    assert mask_secrets(params) == {
        key: list(v) if isinstance(v, tuple) else v for key, v in params.items()
    }


ODD_VALUES: list[Any] = [
    None,
    True,
    1.5,
    b"\x00\xff",
    "",
    "-",
    "--password",
    ["--password"],
    ("--token", ("x",)),
    {1: "a", None: ["b"], "c": {"d": []}},
    [[[["deep"]]]],
    "\ud800",
    "=" * 40,
    "A" * 5000,
]


@pytest.mark.parametrize("value", ODD_VALUES)
def test_odd_values_are_masked_without_an_error(value: Any) -> None:
    shown = mask_secrets({"value": value, "password": value})
    assert "hunter" not in str(shown)
    if isinstance(value, str):
        assert shown["password"] == SECRET


MASKED, KEPT = "masked", "kept readable"
S = SECRET
# the gaps closed in session 14, each case labelled MASKED (a secret that showed before) or KEPT
# (its twin: what must stay readable next to it): (what, text, shown, label)
BLOCKS_AND_HEADERS = [
    # YAML: a value on the lines after its key
    (
        "block scalar |",
        "password: |\n  hunter2-long-secret\nuser: ana",
        f"password: {S}\nuser: ana",
        MASKED,
    ),
    (
        "folded scalar >",
        "password: >\n  hunter2 long\n  secret\nuser: ana",
        f"password: {S}\nuser: ana",
        MASKED,
    ),
    ("block |- at the text's end", "password: |-\n  hunter2\n", f"password: {S}\n", MASKED),
    (
        "a block in a map, a blank line in it",
        "db:\n  password: |\n    line1\n\n    line2\n  port: 5432",
        f"db:\n  password: {S}\n  port: 5432",
        MASKED,
    ),
    (
        "a value on the next line",
        "api_key:\n      abcdef\nnext: 1",
        f"api_key:{S}\nnext: 1",
        MASKED,
    ),
    (
        "a plain value over two lines",
        "api_key:\n  abc\n  def\nnext: 1",
        f"api_key:{S}\nnext: 1",
        MASKED,
    ),
    (
        "a list at the key's indentation",
        "api_keys:\n- abc\n- def\nnext: 1",
        f"api_keys:{S}\nnext: 1",
        MASKED,
    ),
    (
        "a plain value with spaces",
        "password: correct horse battery\nuser: x",
        f"password: {S}\nuser: x",
        MASKED,
    ),
    (
        "a value continued on an indented line",
        "password: abc\n  def\nuser: x",
        f"password: {S}\nuser: x",
        MASKED,
    ),
    ("an anchor before the value", "password: &pw hunter2", f"password: {S}", MASKED),
    ("a tag before the value", "password: !!str hunter2", f"password: {S}", MASKED),
    ("'' inside single quotes", "password: 'abc''def ghi'", f"password: '{S}'", MASKED),
    (
        "double quotes over two lines",
        'password: "abc\n  def"\nuser: x',
        f"password: {S}\nuser: x",
        MASKED,
    ),
    ("an item's key", "- password: abc def\n- user: x", f"- password: {S}\n- user: x", MASKED),
    (
        "double quotes over lines",
        'password: "abc\ndef"\nuser: x',
        f"password: {S}\nuser: x",
        MASKED,
    ),
    (
        "an open quote ends with its line",
        'password: "abc\nuser: x',
        f"password: {S}\nuser: x",
        KEPT,
    ),
    ("a flow mapping", "{password: abc def, user: x}", f"{{password: {S}, user: x}}", MASKED),
    (
        "a flow mapping's other keys",
        "{a: b c, token: x y, h: d}",
        f"{{a: b c, token: {S}, h: d}}",
        KEPT,
    ),
    ("a typed parameter's bracket", "def f(a, password: str)", f"def f(a, password: {S})", KEPT),
    (
        "CRLF line ends",
        "password: |\r\n  hunter2\r\nuser: ana",
        f"password: {S}\r\nuser: ana",
        MASKED,
    ),
    ("TOML multi-line string", 'token = """\nabc\n"""\nx = 1', f'token = """{S}"""\nx = 1', MASKED),
    ("TOML literal multi-line", "token = '''\nabc\n'''", f"token = '''{S}'''", MASKED),
    ("a multi-line string left open", 'token = """\nabc', f'token = """{S}', MASKED),
    ("an empty value: the next key stays", "password:\nuser: ana", "password:\nuser: ana", KEPT),
    (
        "an item's empty value: the next item stays",
        "- password:\n    abc\n- user: x",
        f"- password:{S}\n- user: x",
        KEPT,
    ),
    (
        "a block under another key",
        "notes: |\n  the password is asked for\nuser: ana",
        "notes: |\n  the password is asked for\nuser: ana",
        KEPT,
    ),
    (
        "code after `if password:`",
        "if password:\n    check(user)",
        "if password:\n    check(user)",
        KEPT,
    ),
    (
        "pretty JSON keeps its quotes",
        '  "password": "abc",\n  "user": "ana"',
        f'  "password": "{S}",\n  "user": "ana"',
        KEPT,
    ),
    (
        "a quoted value and a comment",
        'password: "abc" # note\nx: 1',
        f'password: "{S}" # note\nx: 1',
        KEPT,
    ),
    ("a docstring", 'doc = """\ntoken counts\n"""', 'doc = """\ntoken counts\n"""', KEPT),
    # INI and .properties: `=` with a space beside it, the value to the line's end
    ("INI", "[db]\npassword = two words\nuser = x", f"[db]\npassword = {S}\nuser = x", MASKED),
    (".properties", "db.password = correct horse battery", f"db.password = {S}", MASKED),
    ("a shell's NAME=x cmd", "TOKEN=abc make", f"TOKEN={S} make", KEPT),
    # shell and .env: a double-quoted value over lines, to its closing quote
    (".env over lines", 'PASSWORD="abc\ndef"\nNEXT=1', f'PASSWORD="{S}"\nNEXT=1', MASKED),
    ("export over lines", 'export TOKEN="a\nb" && make', f'export TOKEN="{S}" && make', MASKED),
    ("an open quote: to its line's end", 'token="abc\nnext line', f'token="{S}\nnext line', KEPT),
    # a shell's escaped space is the value's: the word goes on after it
    ("an escaped space", r"password=a\ b c", f"password={S} c", MASKED),
    ("escaped spaces", r"export TOKEN=abc\ def\ ghi; make", f"export TOKEN={S}; make", MASKED),
    ("an option's", r"mysql --password a\ b -h db", f"mysql --password {S} -h db", MASKED),
    ("curl -u's", r"curl -u ana:a\ b host", f"curl -u ana:{S} host", MASKED),
    ("another name's", r"path=a\ b c", r"path=a\ b c", KEPT),
    (
        "code opening a bracket",
        "password: Annotated[\n    str,\n]",
        f"password: {S}\n    str,\n]",
        KEPT,
    ),
    (
        "a class's docstring",
        'class TokenGuard:\n    """Lets a request in."""',
        'class TokenGuard:\n    """Lets a request in."""',
        KEPT,
    ),
    # a credential header's value, spaces and all, and the lines folded onto it
    ("X-Api-Key with a space", "X-Api-Key: abc def", f"X-Api-Key: {S}", MASKED),
    ("Bearer with a space", "Authorization: Bearer abc def", f"Authorization: Bearer {S}", MASKED),
    (
        "a header in curl -H",
        "curl -H 'X-Api-Key: abc def' x",
        f"curl -H 'X-Api-Key: {S}' x",
        MASKED,
    ),
    (
        "a header mid-line",
        'curl -H "X-Auth-Token: abc def" x',
        f'curl -H "X-Auth-Token: {S}" x',
        MASKED,
    ),
    ("Private-Token", "Private-Token: abc def", f"Private-Token: {S}", MASKED),
    (
        "a header right after a quote",
        'curl -H "Api-Key: abc def" x',
        f'curl -H "Api-Key: {S}" x',
        MASKED,
    ),
    (
        "a header mid-line is not folded",
        "needs `Authorization: Bearer x`\n    (never in the URL)",
        f"needs `Authorization: Bearer {S}\n    (never in the URL)",
        KEPT,
    ),
    ("a folded Cookie", "Cookie: a=1;\r\n b=2\r\nHost: h", f"Cookie: {S}\r\nHost: h", MASKED),
    (
        "a folded X-Api-Key",
        "X-Api-Key: abc\r\n  def\r\nHost: h",
        f"X-Api-Key: {S}\r\nHost: h",
        MASKED,
    ),
    (
        "a folded Authorization",
        "Authorization: Bearer abc\n\tdef\nHost: h",
        f"Authorization: Bearer {S}\nHost: h",
        MASKED,
    ),
    (
        "another header with a space",
        "X-Request-Id: abc def\nHost: h",
        "X-Request-Id: abc def\nHost: h",
        KEPT,
    ),
    # a list of pairs: a value ends at a comma before the next name and `=`
    (
        "the pair after a password",
        "user=a,password=x,host=db",
        f"user=a,password={S},host=db",
        KEPT,
    ),
    ("a comma inside a password", "password=a,b", f"password={S}", MASKED),
    ("a comma inside, then a pair", "password=a,b,host=db", f"password={S},host=db", MASKED),
    ("base64 padding is no pair", "password=a,b==", f"password={S}", MASKED),
    ("a comma, a name and =: the next pair", "password=a,b=c", f"password={S},b=c", KEPT),
    # prose about a header is no header
    ("Authorization: required", "Authorization: required", "Authorization: required", KEPT),
    (
        "a sentence",
        "the Authorization: header is missing",
        "the Authorization: header is missing",
        KEPT,
    ),
    ("Cookie: none", "Cookie: none", "Cookie: none", KEPT),
    ("a word, then a credential", "Authorization: required abc123", f"Authorization: {S}", MASKED),
    (
        "a scheme, then a word",
        "Authorization: Bearer required",
        f"Authorization: Bearer {S}",
        MASKED,
    ),
    ("a credential that is a word", "Authorization: hunter", f"Authorization: {S}", MASKED),
    (
        "a descriptive word glued to more",
        "Authorization: not-a-word-x",
        f"Authorization: {S}",
        MASKED,
    ),
]


# the gaps closed in session 15, labelled the same way: (what, text, shown, label)
QUOTES_AND_ESCAPES = [
    # a single-quoted value goes on over lines to its closing quote, as a double-quoted one does
    (
        "single quotes over lines",
        "export PASSWORD='line one\nline two-secret-part'\necho done",
        f"export PASSWORD='{S}'\necho done",
        MASKED,
    ),
    ("an option's over lines", "--password 'a\nb' -v", f"--password '{S}' -v", MASKED),
    ("SQL's over lines", "IDENTIFIED BY 'a\nb';", f"IDENTIFIED BY '{S}';", MASKED),
    ("an open single quote: to its line's end", "token='abc\nnext", f"token='{S}\nnext", KEPT),
    (
        "an apostrophe on the next line",
        "password='abc'\nit's fine",
        f"password='{S}'\nit's fine",
        KEPT,
    ),
    ("an empty value", "password=''\necho 'done'", "password=''\necho 'done'", KEPT),
    # YAML written in a JSON string: a value ends at an escaped line end before the next line
    (
        "an escaped line end and an indented key",
        '{"config": "db:\\n  password: hunter2\\n  host: db"}',
        f'{{"config": "db:\\n  password: {S}\\n  host: db"}}',
        KEPT,
    ),
    (
        "an escaped line end and a key",
        '{"c": "db:\\npassword: x\\nhost: y"}',
        f'{{"c": "db:\\npassword: {S}\\nhost: y"}}',
        KEPT,
    ),
    ("an escaped line end, the string's end", '"password: x\\n"', f'"password: {S}\\n"', KEPT),
    (
        "a block scalar in a JSON string",
        '{"c": "password: |\\n  hunter2\\n  more\\nuser: x"}',
        f'{{"c": "password: {S}\\nuser: x"}}',
        MASKED,
    ),
    (
        "a value on the next escaped line",
        '{"c": "api_key:\\n  abcdef\\nuser: x"}',
        f'{{"c": "api_key:{S}\\nuser: x"}}',
        MASKED,
    ),
    (
        "a value going on over an escaped line",
        '{"c": "db:\\n  password: abc\\n    def\\n  host: db"}',
        f'{{"c": "db:\\n  password: {S}\\n  host: db"}}',
        MASKED,
    ),
    (
        "another key's escaped lines",
        '{"a": "x:\\n  y", "password": "p"}',
        f'{{"a": "x:\\n  y", "password": "{S}"}}',
        KEPT,
    ),
    ("a shell's \\n inside a word", r"password=abc\ndef rest", f"password={S} rest", MASKED),
    # JSON written in a string: a closer before an escaped quote ends a bare value
    (
        "the next escaped pair",
        r"x = {\"token\":123,\"a\":1}",
        rf"x = {{\"token\":{S},\"a\":1}}",
        KEPT,
    ),
    (
        "a bracket, then a pair",
        r"{\"a\":{\"token\":1},\"b\":2}",
        rf"{{\"a\":{{\"token\":{S}}},\"b\":2}}",
        KEPT,
    ),
    ("a comma inside the value", r"{\"token\":1,2,\"a\":1}", rf"{{\"token\":{S},\"a\":1}}", MASKED),
    # a key ending a line after other words: its value is indented under it, as a YAML key's
    (
        "a value under a key mid-line",
        "see the api_key:\n  hunter2hunter2 for details",
        f"see the api_key:{S}",
        MASKED,
    ),
    (
        "over two lines, then the next",
        "see the api_key:\n  hunter2\n  more\nnext",
        f"see the api_key:{S}\nnext",
        MASKED,
    ),
    (
        "words about it, indented",
        "the password:\n  is required",
        "the password:\n  is required",
        KEPT,
    ),
    ("words about it", "the password:\nis required", "the password:\nis required", KEPT),
    (
        "a block of code",
        "  def f() -> Token:\n    return x",
        "  def f() -> Token:\n    return x",
        KEPT,
    ),
    ("a loop", "for t in secrets:\n    print(t)", "for t in secrets:\n    print(t)", KEPT),
    (
        "the last line of a signature over lines",
        '    ) -> OAuthToken:\n        """Swap a code."""\n        return await self.swap(code)',
        '    ) -> OAuthToken:\n        """Swap a code."""\n        return await self.swap(code)',
        KEPT,
    ),
    (
        "a heading ending in a name",
        "## Configure the token:\n    Put it in ~/.config/app.toml\n",
        "## Configure the token:\n    Put it in ~/.config/app.toml\n",
        KEPT,
    ),
    (
        "a comment ending in a name",
        "# the api_token:\n    load(path)\n",
        "# the api_token:\n    load(path)\n",
        KEPT,
    ),
    (
        "a name in a string in code, then the lines after it",
        "  log('password:', password);\n});\nprogram.version('0.1.0')",
        f"  log('password:'{S}\n}});\nprogram.version('0.1.0')",
        KEPT,
    ),
    (
        "the same in double quotes",
        'log("token:", token);\n});\nrun("x")',
        f'log("token:"{S}\n}});\nrun("x")',
        KEPT,
    ),
    (
        "a typed lambda's parameter",
        "    key=lambda token:\n        token.rank,",
        "    key=lambda token:\n        token.rank,",
        KEPT,
    ),
    # a shell's escaped quote inside a word is the value's; one closing JSON's string stays
    ("an escaped quote inside a word", r"password=abc\"def x", f"password={S} x", MASKED),
    ("an escaped quote ending a word", r'"\"TOKEN=abc\" x"', rf'"\"TOKEN={S}\" x"', KEPT),
]


# a name as a person reads it: split by a character no one sees, written with escapes or
# another separator; shown with its own characters, only the value masked
HIDDEN_NAMES = [
    ("a private-use character", "pass\ue001word=hunter2", f"pass\ue001word={S}", MASKED),
    ("a zero-width joiner", "pass\u200dword=hunter2", f"pass\u200dword={S}", MASKED),
    ("a soft hyphen in a header", "Author\xadization: abc123", f"Author\xadization: {S}", MASKED),
    ("a BOM in api_key", "api\ufeff_key: abc123", f"api\ufeff_key: {S}", MASKED),
    ("a blank filler", "pass\u3164word=hunter2", f"pass\u3164word={S}", MASKED),
    ("a JSON escape", '{"pass\\u0077ord": "hunter2"}', f'{{"pass\\u0077ord": "{S}"}}', MASKED),
    ("a Python escape", "pass\\x77ord=hunter2", f"pass\\x77ord={S}", MASKED),
    ("a hyphen between its words", "Pass-Word=hunter2", f"Pass-Word={S}", MASKED),
    ("an underscore between them", "pass_word: hunter2", f"pass_word: {S}", MASKED),
    ("a trailing underscore", "PASSWORD_=hunter2", f"PASSWORD_={S}", MASKED),
    ("client-secret", "client-secret: hunter2", f"client-secret: {S}", MASKED),
    ("a dot in api.key", "service.api.key = abc", f"service.api.key = {S}", MASKED),
    (
        "invisible characters around it",
        "\u200bpassword=x\u200b y",
        f"\u200bpassword={S}\u200b y",
        MASKED,
    ),
    (
        "grep's colours around the name",
        "\x1b[01;31m\x1b[Kpassword\x1b[m\x1b[K=hunter2 x",
        f"\x1b[01;31m\x1b[Kpassword\x1b[m\x1b[K={S} x",
        MASKED,
    ),
    ("HTML's escaped letter", "pass&#119;ord=hunter2", f"pass&#119;ord={S}", MASKED),
    # a character that reads as a mark ending a value is the value's: it is written otherwise
    ("a full-width quote in a value", 'token="abc\uff02def" x', f'token="{S}" x', MASKED),
    ("a full-width & in a value", "password=abc\uff06def x", f"password={S} x", MASKED),
    ("coloured words", "\x1b[31mred\x1b[0m text", "\x1b[31mred\x1b[0m text", KEPT),
    ("HTML's escaped letters", "caf&#233; &#65;BC", "caf&#233; &#65;BC", KEPT),
    ("a Cyrillic a", "p\u0430ssword=hunter2", f"p\u0430ssword={S}", MASKED),
    (
        "Cyrillic capitals",
        "\u0422\u041e\u041a\u0415N: abc",
        f"\u0422\u041e\u041a\u0415N: {S}",
        MASKED,
    ),
    (
        "a Cyrillic a and a filler",
        "p\u0430ss\u3164word=hunter2",
        f"p\u0430ss\u3164word={S}",
        MASKED,
    ),
    (
        "Cyrillic capitals split by a colour",
        "\u0422\u041e\u041a\x1b[1m\u0415N: abc",
        f"\u0422\u041e\u041a\x1b[1m\u0415N: {S}",
        MASKED,
    ),
    (
        "Cyrillic words around a secret",
        "\u0441\u0435\u043a\u0440\u0435\u0442 password=x \u043e\u0441\u0435",
        f"\u0441\u0435\u043a\u0440\u0435\u0442 password={S} \u043e\u0441\u0435",
        KEPT,
    ),
    (
        "a Cyrillic word",
        "\u0442\u043e\u043a\u0435\u043d: \u0434\u0430",
        "\u0442\u043e\u043a\u0435\u043d: \u0434\u0430",
        KEPT,
    ),
    ("a soft hyphen in a word", "ex\xadample text", "ex\xadample text", KEPT),
    ("escaped letters", '"caf\\u00e9 \\u0041BC"', '"caf\\u00e9 \\u0041BC"', KEPT),
    ("an escaped quote read as written", "token=abc\\u0022def x", f"token={S} x", MASKED),
    ("a private-use icon", "\ue001 Settings", "\ue001 Settings", KEPT),
    (
        "letters around a secret",
        "caf\u00e9 password=x na\u00efve",
        f"caf\u00e9 password={S} na\u00efve",
        KEPT,
    ),
    ("words apart", "the pass word list", "the pass word list", KEPT),
]


# a shell's and Python's other ways to write a value: a heredoc, a here-string, `$'...'`,
# strings black wraps in brackets
SHELL_AND_CODE = [
    (
        "a heredoc after the name",
        "PASSWORD=$(cat <<EOF\nhunter2\nEOF\n)",
        f"PASSWORD={S} <<EOF\n{S}\nEOF\n)",
        MASKED,
    ),
    (
        "a quoted heredoc read",
        "read -r TOKEN <<'EOF'\nabc def\nmore\nEOF\necho ok",
        f"read -r TOKEN <<'EOF'\n{S}\nEOF\necho ok",
        MASKED,
    ),
    ("a heredoc left open", "TOKEN=$(cat <<EOF\nabc", f"TOKEN={S} <<EOF\n{S}", MASKED),
    (
        "a here-string",
        "docker login -u ana --password-stdin <<< hunter2 && ls",
        f"docker login -u ana --password-stdin <<< {S} && ls",
        MASKED,
    ),
    ("ANSI-C quotes", "export TOKEN=$'abc\\ndef' x", f"export TOKEN=$'{S}' x", MASKED),
    (
        "strings black wraps",
        'token = (\n  "abc"\n  "def"\n)\nx = 1',
        f"token = {S}\n  {S}\n)\nx = 1",
        MASKED,
    ),
    (
        "a heredoc under no secret's name",
        "cat <<EOF > notes.txt\nhello\nEOF",
        "cat <<EOF > notes.txt\nhello\nEOF",
        KEPT,
    ),
    ("C++'s <<", "cout << token << endl;\nreturn 0;", "cout << token << endl;\nreturn 0;", KEPT),
    (
        "a constant after C++'s <<",
        "out << token << SEP;\nreturn 0;\n}",
        "out << token << SEP;\nreturn 0;\n}",
        KEPT,
    ),
    (
        "words about a heredoc",
        "(`PASSWORD=$(cat <<EOF` and its lines up to `EOF`), then\nthe rest of the page",
        f"(`PASSWORD={S} <<EOF` and its lines up to `EOF`), then\nthe rest of the page",
        KEPT,
    ),
    (
        "a heredoc piped on",
        "TOKEN=$(cat <<EOF | base64\nabc\nEOF\n)\necho ok",
        f"TOKEN={S} <<EOF | base64\n{S}\nEOF\n)\necho ok",
        MASKED,
    ),
    ("a redirection", "app --password < pw.txt", "app --password < pw.txt", KEPT),
    ("a call in brackets", "token = (\n  get()\n)", f"token = {S}\n  get()\n)", KEPT),
    ("dollars", "PRICE=$5 x", "PRICE=$5 x", KEPT),
]


LABELLED = [*BLOCKS_AND_HEADERS, *QUOTES_AND_ESCAPES, *HIDDEN_NAMES, *SHELL_AND_CODE]


@pytest.mark.parametrize(("case", "text", "shown", "label"), LABELLED, ids=[c[0] for c in LABELLED])
def test_a_value_over_lines_or_a_header_is_masked_and_its_neighbours_kept(
    case: str, text: str, shown: str, label: str
) -> None:
    assert mask_text(text) == shown, f"{case}: {label}"


# a text's own U+E000 (the mark masking uses inside) must come out as it went in, never as
# [secret], and must not unmask anything: (what, text, shown)
OWN_MARKS = [
    ("alone", "\ue000", "\ue000"),
    ("in words", "a \ue000 b", "a \ue000 b"),
    ("next to a secret", "password=x \ue000", f"password={S} \ue000"),
    ("twice, one secret", "\ue000\ue000 password=x", f"\ue000\ue000 password={S}"),
    ("in a secret's value", "password=\ue000hunter2", f"password={S}"),
    ("with its neighbours", "\ue000\ue001\ue002 token=x", f"\ue000\ue001\ue002 token={S}"),
    ("percent-encoded", "q=%EE%80%80&password=x", f"q=%EE%80%80&password={S}"),
    (
        "an encoded one stays as written",
        "\ue000 %EE%80%81 %41 token=a%20b",
        f"\ue000 %EE%80%81 A token={S}",
    ),
    (
        "read as it looks",
        "\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44=\ue000x",
        f"\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44={S}",
    ),
]


@pytest.mark.parametrize(("case", "text", "shown"), OWN_MARKS, ids=[c[0] for c in OWN_MARKS])
def test_a_texts_own_mark_character_is_shown_as_it_is(case: str, text: str, shown: str) -> None:
    assert mask_text(text) == shown, case


def test_a_texts_own_mark_changes_nothing_else_that_is_masked() -> None:
    """Before any labelled text, a line holding the mark character: the rest is masked as it
    is without it."""
    texts = [text for text, _, _ in NAMED_VALUES] + [text for _, text, _, _ in LABELLED]
    for text in texts:
        assert mask_text("\ue000\n" + text) == "\ue000\n" + mask_text(text), text


def test_a_text_holding_every_private_character_shows_its_own_mark_written_out() -> None:
    """No private-use character is left to stand in for the text's own marks while masking."""
    every = "".join(chr(code) for code in range(0xE000, 0xF900))
    shown = mask_text(every + " password=x")
    assert shown == every.replace("\ue000", "\\ue000") + f" password={S}"
    assert shown.count(S) == 1
    assert mask_secrets({"note": "\ue000", "password": "\ue000"}) == {
        "note": "\ue000",
        "password": S,
    }


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("API Key: api_prod_8f7d6e5c4b3a2910", "API Key: [secret]"),
        ("Secret Access Key: wJalrXUtnFEMI/K7MDENG", "Secret Access Key: [secret]"),
        ("private key = k3y-v4lue-88", "private key = [secret]"),
        ("charge with sk_live_51HaBcDeFgHiJkLmNoPq now", "charge with [secret] now"),
        ("restricted rk_test_4eC39HqLyjWDarjtT1zdp7dc", "restricted [secret]"),
    ],
)
def test_secrets_named_in_words_and_stripe_keys_are_masked(text: str, masked: str) -> None:
    """Names written as words (`API Key:`, as a service's own answer writes them) and Stripe's
    key shapes, which Damn Vulnerable MCP Server's results carry."""
    assert mask_text(text) == masked


@pytest.mark.parametrize(
    "text",
    ["the access key is rotated daily", "Use your API key to sign in.", "task_live_tests"],
)
def test_words_about_keys_are_not_masked(text: str) -> None:
    assert mask_text(text) == text
