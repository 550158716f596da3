"""Secrets in a tool call's parameters, masked before anyone but the tool sees them.

Traces, the L1 supervisor, the inbox, the API and the CLI are shown parameters with every secret
replaced by `[secret]`, whether or not content is shown: the value of a parameter whose name says
it holds one (`password`, `apiKey`, `Authorization`, `client_secret`, ...), and in any text or
key: a URL's password (`https://ana:[secret]@host`), `Bearer`/`Basic` credentials, the
`Authorization:` and `Cookie:` headers and those named like `X-Api-Key:` (to the line's end
and over lines folded onto it; not words about one: `Authorization: required`), `name=value`
pairs whose name says secret (`=`, `:`, `=>`, `:=`), a YAML key's value over the lines that
belong to it (`password: |`, a value on the next line, in `{...}`; a key ending a line of words,
`see the api_key:`, and the lines indented under it), an INI line's, options
(`--password x`, `curl -u ana:x`, `mysql -px`, `sshpass -p x`), SQL's `PASSWORD 'x'`, private
keys, and tokens of well-known shapes (`sk-...`, `ghp_...`, `AKIA...`, JWTs), also glued to a
word. A value is
masked up to its end as the text delimits it (a quote, whitespace, `&`; a bracket or comma only
when nothing of the value follows it, or a comma before the next pair: `a=1,password=x,b=2`). A
percent-encoded text that hides one is shown decoded with it masked, each value up to where its
own level of encoding ends it. A text that reads as a secret only as a person reads it (a
zero-width space, a private-use character or a Cyrillic `a` in `password`, full-width letters,
a name's escaped letters `pass\u0077ord`, a terminal's colours) is masked as it reads, shown
with its own characters but the masked values'. A base64 text that decodes to one of these is
masked whole (also shifted by a word before it), and so is every value a secret spans when it
is split across values (`"sk-pr"` + `"oj-..."`). Only what was masked shows as `[secret]`: a
text's own U+E000, the character masking marks a secret with inside, is shown as it is.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import dataclasses
import functools
import itertools
import re
import unicodedata
import urllib.parse
from collections.abc import Callable
from typing import Any

SECRET = "[secret]"
# what a secret is replaced by while a text is masked: a value of one character that ends no
# value, so masking again (a decoded level, a pattern after another) leaves it as it is; shown
# as SECRET. A text's own U+E000 is shown as it is: while masking, another private-use
# character the text does not hold stands in for it (or, should it hold them all, `\ue000`
# written out); percent-encoded ones are not decoded, so no decoding makes a mark or a stand-in
_MARK = "\ue000"
_ESCAPED_MARK = "\\ue000"
_STAND_INS = range(0xE001, 0xF900)  # the rest of the private-use area
_READ_MARK = "\ue001"  # the text's own mark as read: no other private-use character is read
# a private-use character's UTF-8 bytes percent-encoded (EE 80 80 to EF A3 BF)
_ENCODED_PRIVATE = re.compile(
    r"%(?:EE|EF(?=%(?:[89]|A[0-3])))%[89AB][0-9A-F]%[89AB][0-9A-F]", re.IGNORECASE
)

_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
SECRET_WORDS = frozenset(
    {
        "password", "passwd", "passphrase", "pwd", "secret", "secrets", "token", "auth",
        "authorization", "cookie", "credential", "credentials", "apikey", "privatekey",
        "accesskey", "secretkey", "clientsecret", "sessionid", "sessiontoken",
    }
)  # fmt: skip
# a name that says secret, from its telling word on (`DB_PASSWORD=` is matched from PASSWORD);
# `tokens` and `tokenizer` name a model's counts and its tokenizer
_NAME = (
    r"(?:pass[_-]?w(?:or)?d|pass[_-]?phrase|secret|token(?!s|iz)|api[_. -]?key|access[_. -]?key"
    r"|private[_. -]?key)"
)
_URL_PASSWORD = re.compile(r"(?P<keep>://[^/\s:@]{0,200}:)[^/\s@]{1,500}(?=@)")
_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[\s\S]{0,20000}?"
    r"(?:-----END [A-Z ]{0,40}PRIVATE KEY-----|$)"
)
# a token's shape is told from a word by its prefix, so it is found right after a letter too
# (`xghp_...`, as a base64 text decodes when it hides one behind a letter); only `sk-` and `ghs_`
# end words (`task-`, `laughs_`), so right after a letter they are a token when their next 42
# characters hold a digit and a capital, as a random token's almost always do (all but about
# 2 in 1,000) and a word's seldom does (each alternative starts with a letter: re skips ahead
# to one)
_RANDOM_AHEAD = r"(?=[A-Za-z_-]{0,42}+\d)(?=[a-z0-9_-]{0,42}+[A-Z])"  # one pass each
_TOKEN = re.compile(
    rf"sk(?:(?<!\wsk)|{_RANDOM_AHEAD})-(?:proj-|live-|test-|ant-)?[\w-]{{16,}}"
    rf"|ghs(?:(?<!\wghs)|{_RANDOM_AHEAD})_[A-Za-z0-9]{{20,}}"
    r"|gh[pour]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|xox[abprs]-[\w-]{10,}|AKIA[0-9A-Z]{16}"
    r"|AIza[\w-]{30,}|glpat-[\w-]{20,}|eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}"
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"
)


# a line end escaped in a JSON string, before what starts a line of its own (an indentation, a
# `name:`, another escape, the string's end): YAML written in a string, `password: x\n  host: db`;
# a shell's `\n` inside a word (`a\nb`) is the word's
_ESCAPED_LINE_END = r"\\[nr](?=[\s\\\"']|[\w.-]++:|\Z)"


def _value_up_to(ends: str, closer_not_before: str = "", escaped_spaces: bool = False) -> str:
    r"""A value running up to one of `ends`, or to `,` `)` `}` `]` that nothing of it follows:
    `{"password": 123}` and `f(token=x)` keep their brackets, `hunter2}x` is masked whole; and
    to one where `closer_not_before` matches (the next pair of a list). With `escaped_spaces`,
    a space after a backslash is the value's, as a shell reads `a\ b`, and so is a quote inside
    the word (`a\"b`; one that ends it, `\"a=b\"`, is JSON's written in a string, and stays);
    an escaped line end that starts a line of its own ends the value."""
    closers = r",)}\]"
    run = rf"[^{ends}{closers}]++"
    if escaped_spaces:  # a backslash, and the space or the quote in the word after it
        escaped = rf"(?!{_ESCAPED_LINE_END}|\\[\"'](?![^{ends}{closers}]))\\[ \t\"']?+"
        run = rf"(?:[^{ends}{closers}\\]++|{escaped})++"
    guard = rf"(?!{closer_not_before})" if closer_not_before else ""
    return rf"{run}(?:{guard}[{closers}]++{run})*+"  # possessive: one pass, never back


# what follows a quote closing a value: a quote followed by a word is one opening the next
# string, so the one found was not a value's opening quote (`log('password:', pw)`)
_ENDS_A_VALUE = r"(?:[\s;)&|,}\]]|\Z)"
# a quoted value up to its closing quote, spaces and all (one pass each, without backtracking);
# `''` is a quote inside a single-quoted one (YAML, SQL); a multi-line string (TOML, Python)
# runs to its closing quotes or, left open, to the text's end; a quoted one goes on over lines
# to its closing quote (shell, `.env`), else, left open, to its line's end (an opening quote not
# escaped ends the scan of the one before: one pass)
_QUOTED_VALUE = (
    r"(?<=\\\")(?:[^\\\n]++|\\[^\"\n])++"  # in JSON escaped inside a string: up to its \"
    r'|(?<=""")(?!"""|\Z)(?:[^"]++|"(?!""))*+(?:(?=""")|\Z)'
    r"|(?<=''')(?!'''|\Z)(?:[^']++|'(?!''))*+(?:(?=''')|\Z)"
    rf'|(?<=(?<!\\)")(?:[^"\\]++|\\[\s\S])++(?="{_ENDS_A_VALUE})'
    rf"|(?<=(?<!\\)')(?:[^']++|'')++(?='{_ENDS_A_VALUE})"
    r"|(?<=\")(?:[^\"\\\n]++|\\.)++|(?<=')(?:[^'\n]++|'')++"
)
_OPENING_QUOTE = r"(?:\"\"\"|'''|\$?[\"']|\\[\"'])"  # `$'...'`: a shell's quote with escapes
# a bare one (a JSON number or true, a query string's, an env line's or a command line's value)
# up to what ends it there, so the `}`, `]` or `&x=1` after it stays; unbounded, as a long
# value's tail would show. In a list of pairs a comma before the next name ends it: in
# `user=a,password=x,host=db` the value is `x`; `password=a,b` is masked whole (and
# `password=a,b=c` shows `b=c`: it reads as the next pair); so does a closer before an escaped
# quote, the next pair of JSON written in a string (`{\"token\":1,\"a\":2}`)
_BARE_VALUE = _value_up_to(
    r"\s\"'&;", closer_not_before=r",[\w.-]++=(?!=)|[,)}\]]++\\[\"']", escaped_spaces=True
)
_NAMED_VALUE = rf"(?:{_QUOTED_VALUE}|(?<![\"']){_BARE_VALUE})"
# a header's value runs to the end of its line (`Cookie: a=1; b=2`, `Authorization: Digest ...`)
# and, when the header starts its line, over the lines folded onto it (each starts with a space
# or a tab)
_HEADER_VALUE = _value_up_to(r"\r\n\"'\\&")
_FOLDED_HEADER_VALUE = rf"{_HEADER_VALUE}(?:\r?\n[ \t]++{_HEADER_VALUE})*+"
_SCHEME = r"(?:bearer|basic|token|digest|negotiate)(?:\s+|%20|\+)"
# a header's value that reads as words about it, not as a credential: `Authorization: required`,
# `the Authorization: header is missing` (a word of these first, then only letters and
# punctuation to the line's end or a quote; anything else is masked)
_PROSE_VALUE = (
    r"(?:required|missing|needed|optional|none|empty|absent|present|unset|invalid|expired"
    r"|denied|failed|forbidden|unauthorized|header|is|was|not|no|the)(?![\w-])"
    r"[a-z ,.;:()/-]{0,80}+(?:[\r\n\"'\\]|$)"
)
# a line of its own: its indentation, then `- ` in a list, a name (quoted or not) and `:`, or
# `=` with a space beside it (INI, `.properties`; `NAME=x cmd` is a shell's)
_LINE_KEY = (
    r"(?P<keep>^(?P<indent>[ \t]*+)(?P<dash>-[ \t]++)?(?P<quote>\\?[\"'])?"
    rf"[\w.-]{{0,100}}?{_NAME}[\w.-]{{0,40}}+(?(quote)\\?[\"'])"
    r"(?:[ \t]*+:(?![=:])|[ \t]++=(?![=>])|=(?=[ \t]))[ \t]*+)"
)
# the lines after a key's that belong to its value: indented more than the key (blank lines
# between them too); for a value that starts on the next line, also `- ` items at the key's own
# indentation (YAML's compact list), unless the key is itself an item's (`- password:`)
_INDENTED_LINE = r"\r?\n(?:[ \t]*+\r?\n)*+(?P=indent)[ \t]++[^\r\n]*+"
_ITEM_LINE = r"\r?\n(?:[ \t]*+\r?\n)*+(?P=indent)-(?![^ \t\r\n])[^\r\n]*+"
# what may stand on a key's line before its value starts on the next: a block scalar's
# indicator (`|`, `>-`, `|2+`), an anchor, a tag, a comment
_BLOCK_START = r"(?:(?:[|>][-+1-9]{0,2}+|[&!]\S*+)[ \t]*+)*+(?:#[^\r\n]*+)?(?=\r?\n)"
# a line ending in a key's `:` (or its block scalar's `: |`), told by its end first
_ENDS_IN_A_KEY = r"(?:(?<=:)|(?<=:[ \t])|(?<=:[ \t][|>])|(?<=:[ \t][|>][-+]))"
# a line that opens a block of code, not a key: `if token:`, `def f() -> Token:`
_CODE_LINE = (
    r"(?:if|elif|else|while|for|with|def|class|try|except|finally|match|case|async|lambda"
    r"|default)(?![\w-])"
)
# YAML's quoted value may go on over lines (each opening quote on a key's line closes the value
# before it at the latest: one pass)
_QUOTED_OVER_LINES = r"\"(?:[^\"\\]++|\\[\s\S])*+\"|'(?:[^']++|'')*+'"
_QUOTED_ON_ITS_LINE = (
    r"(?:\"(?:[^\"\\\r\n]++|\\.)*+\"|'(?:[^'\r\n]++|'')*+')[ \t]*+(?:#[^\r\n]*+)?(?=\r?\n|\Z)"
)
# a string in code, its prefix and all (`"a"`, `f'a'`, `rb"a"`)
_STRING = r"[bfru]{0,2}+(?:\"(?:[^\"\\\r\n]++|\\.)*+\"|'(?:[^'\\\r\n]++|\\.)*+')"
# a heredoc's closing word, as it opens it (`<<EOF`, `<<'EOF'`), and its lines up to that word
_HEREDOC_WORD = (
    r"(?P<word_quote>[\"'])?(?P<word>(?(word_quote)\w++|(?-i:[A-Z][A-Z0-9_]*+)))"
    r"(?(word_quote)(?P=word_quote)|(?!\w))"
)
_HEREDOC_LINE = r"(?![ \t]*+(?P=word)[ \t]*+$)[^\r\n]*+"
_HEREDOC_BODY = rf"{_HEREDOC_LINE}(?:\r?\n{_HEREDOC_LINE})*+"
# the secrets themselves, which can be told when split across values (`"sk-pr"` + `"oj-..."`)
_SPLIT_SECRETS = (_URL_PASSWORD, _PRIVATE_KEY, _TOKEN)
_SHAPES_IN_BYTES = tuple(re.compile(shape.pattern.encode()) for shape in _SPLIT_SECRETS)
# strings in brackets over lines, as black wraps a long one (`TOKEN = (`, then `"abc"` and
# `"def"` on lines of their own): every one of them (a line ending in `(` is told first)
_WRAPPED_STRINGS = re.compile(
    r"(?im)(?P<keep>^(?=[^\r\n]*+(?:(?<=\()|(?<=\([ \t])))[^\r\n]*?"
    rf"{_NAME}[\w.-]{{0,40}}+[ \t]*+(?::[^=\r\n]{{0,40}}+)?=[ \t]*+\([ \t]*+(?=\r?\n)\s++)"
    rf"{_STRING}(?:\s*+{_STRING})*+"
)
# a key ending a line after other words (`see the api_key:`): its value is the lines
# indented under that line, as a YAML key's; not a line of code's block (one starting with a
# keyword, a signature's last line `) -> OAuthToken:`, a lambda's), nor a heading or a comment
# (`## Configure the token:`), nor words about it (`the password:` and `  is required`)
_KEY_ENDING_A_LINE = re.compile(
    rf"(?im)(?P<keep>^(?=[^\r\n]*+{_ENDS_IN_A_KEY})(?P<indent>[ \t]*+)(?!{_CODE_LINE}|#)"
    rf"(?![^\r\n]*?(?:->|\blambda\b))"
    rf"[^\r\n]*?{_NAME}[\w.-]{{0,40}}+:[ \t]*+(?:[|>][-+]?+[ \t]*+)?(?=\r?\n))"
    rf"(?!\r?\n[ \t]*+{_PROSE_VALUE})(?:{_INDENTED_LINE})++"
)
# a heredoc or a here-string after a secret's name on its line (`PASSWORD=$(cat <<EOF`,
# `read -r TOKEN <<'EOF'`, `--password-stdin <<< x`): its lines up to its closing word, or
# its word (a line holding `<<` is told first, and the name is at most 80 characters before
# it: one pass; a heredoc's word is quoted or in capitals, not C++'s `cout << token`, and
# ends its line as a shell's does, or goes on with `)`, a pipe, `&&` or a redirection: a text
# about one, `PASSWORD=$(cat <<EOF` and words after it, is not masked to its end)
_AFTER_HEREDOC_WORD = r"[ \t]*+(?:[)|&>#][^\r\n]*+)?"
_HEREDOC = re.compile(
    rf"(?im)(?P<keep>^(?=[^\r\n<]*+(?:<[^\r\n<]++)*+<<)[^\r\n]*?{_NAME}[^\r\n<]{{0,80}}+<<"
    rf"(?:<[ \t]*+{_OPENING_QUOTE}?|-?[ \t]*+{_HEREDOC_WORD}{_AFTER_HEREDOC_WORD}\r?\n))"
    rf"(?(word){_HEREDOC_BODY}|{_NAMED_VALUE})"
)
# a YAML key, an INI one or a header on a line of its own (`password: |`, `api_key:` and an
# indented line, `password = two words`, `X-Api-Key: a b`): its value is the rest of the line
# and every line that belongs to it (a quoted one closed on its line and a multi-line string
# are left to the rule of named values, which keeps their quotes; a line ending in an open
# bracket is code, `password: Annotated[`, whose lines the other rules read)
_KEY_ON_ITS_LINE = re.compile(
    rf"(?im){_LINE_KEY}(?:{_BLOCK_START}(?:{_INDENTED_LINE}|(?(dash)(?!)|{_ITEM_LINE}))++"
    rf"|(?(quote)(?!)|(?!{_QUOTED_ON_ITS_LINE}|\"\"\"|'''))"
    rf"(?:{_QUOTED_OVER_LINES}|[^\r\n])[^\r\n]*+"
    rf"(?:(?<![\[({{]){_INDENTED_LINE})*+)"
)
# the rules that read a value over lines, which the text is read again for when its line ends
# are escaped (YAML written in a JSON string)
_LINE_RULES = (_WRAPPED_STRINGS, _KEY_ON_ITS_LINE, _KEY_ENDING_A_LINE, _HEREDOC)
# what three of them need in a text, looked for first: most texts have none, and looking costs
# far less than a pattern's pass over every line
_NEEDED_FIRST = {
    _WRAPPED_STRINGS: re.compile(r"\([ \t]?\r?\n"),
    _KEY_ENDING_A_LINE: re.compile(r":(?:[ \t](?:[|>][-+]?)?)?\r?\n"),
    _HEREDOC: re.compile("<<"),
}
# each match's part after the group `keep` becomes [secret]
_TEXT_SECRETS: tuple[re.Pattern[str], ...] = (
    *_SPLIT_SECRETS,
    re.compile(r"(?i)(?P<keep>\b(?:bearer|basic|token)\s+)[\w.~+/=-]{8,}"),
    _WRAPPED_STRINGS,
    _KEY_ON_ITS_LINE,
    _KEY_ENDING_A_LINE,
    # Authorization: and Cookie:, and the lines folded onto them when they start their line
    # (told after the name: a pattern starting with it lets re skip ahead to its first letter)
    re.compile(
        r"(?im)(?P<keep>(?>(?:authorization(?P<own_line>(?<=^authorization)"
        r"|(?<=^proxy-authorization))?(?:\\?[\"'])?\s{0,4}[=:]"
        r"|cookie(?P<own_cookie_line>(?<=^cookie)|(?<=^set-cookie))?(?:\\?[\"'])?\s{0,4}:)"
        rf"\s{{0,4}}+(?:\\?[\"'])?+)(?!{_PROSE_VALUE})(?:{_SCHEME})?)"
        rf"(?(own_line){_FOLDED_HEADER_VALUE}"
        rf"|(?(own_cookie_line){_FOLDED_HEADER_VALUE}|{_HEADER_VALUE}))"
    ),
    # a plain value in YAML's flow mapping, spaces and all: `{password: two words, user: x}`
    re.compile(
        rf"(?i)(?P<keep>(?<=[{{,])[ \t]*+[\w.-]{{0,40}}?{_NAME}[\w.-]{{0,40}}+[ \t]*+:[ \t]++)"
        r"(?![\"'])[^,)}\]\r\n]++"
    ),
    # a credential header by its hyphenated name (`X-Api-Key: a b`, `Private-Token: ...`) or
    # right after a quote (`curl -H "Token: a b"`)
    re.compile(
        rf"(?i)(?P<keep>(?:(?<=[a-z0-9]-)|(?<=[\"'])){_NAME}[\w-]{{0,40}}+[ \t]*+:(?![=:])[ \t]*+)"
        rf"{_HEADER_VALUE}"
    ),
    re.compile(
        r"(?P<keep>(?<![\w-])(?:-u|--user)[\s=]{1,4}(?P<quote>\\?[\"'])?[^\s:\"']{1,100}:)"
        rf"(?(quote)[^\"'\\\n]+|{_BARE_VALUE})"
    ),
    re.compile(
        rf"(?i)(?P<keep>{_NAME}[\w.-]{{0,40}}(?:\\?[\"'])?\s{{0,4}}(?:=>|:=|[=:])"
        rf"[ \t]{{0,4}}(?:\r?\n[ \t]*+(?=\\?[\"'])(?!\"\"\"|'''))?{_OPENING_QUOTE}?)"
        rf"{_NAMED_VALUE}"
    ),
    # an option and its value: `--password hunter2`, `--api-key "two words"` (`--api-key=...`
    # above); a value starting with `-` is the next option, one starting with `<` a redirection
    # (`--password-stdin <<< x`, read below)
    re.compile(
        rf"(?i)(?P<keep>(?<![\w-])--?[\w-]{{0,20}}{_NAME}[\w-]{{0,20}}\s{{1,4}}(?:\\?[\"'])?)"
        rf"(?:{_QUOTED_VALUE}|(?<![\"'])(?![-<]){_BARE_VALUE})"
    ),
    _HEREDOC,
    # in SQL: `WITH PASSWORD 'x'`, `IDENTIFIED BY 'x'`
    re.compile(
        r"(?i)(?P<keep>\b(?:passw(?:or)?d|identified\s{1,4}by(?:\s{1,4}password)?)\s{1,4}\\?[\"'])"
        rf"(?:{_QUOTED_VALUE})"
    ),
    # the forms of their own some tools take: `mysql -phunter2` (among its first 20 arguments),
    # `sshpass -p x`, `docker login -u ana -p x`, `redis-cli -a x`, openssl's `-pass pass:x`
    # (starting with a letter or `-`, not an assertion, so re skips ahead to one)
    re.compile(
        r"(?P<keep>(?:(?i:mysql|mariadb)\w*(?:\s++(?!-p[^\s-])[^\s;&|]++){0,20}+\s++-p(?=[^\s-])"
        r"|(?:sshpass|docker\s{1,4}login|podman\s{1,4}login|redis-cli)"
        r"(?:\s++(?!-[pa]\s)[^\s;&|]++){0,20}+\s++-[pa]\s{1,4}|-pass(?:in|out)?\s{1,4}pass:)"
        r"(?:\\?[\"'])?)"
        rf"{_NAMED_VALUE}"
    ),
)
_BASE64 = re.compile(
    r"(?<![\w+/=])[A-Za-z0-9+/]{16,}={0,2}(?![\w+/=])|(?<![\w=-])[\w-]{16,}={0,2}(?![\w=-])"
)


# what one of the patterns above needs in the (lowercased) text, or a base64 text: most texts
# have neither, and these two searches are all they cost
_HINT = re.compile(
    r"://|bearer|basic|token|authorization|cookie|-u|pass[_-]?w|pass[_-]?phrase|pass:|identified"
    r"|mysql|mariadb|sshpass|login|redis-cli|secret|api.?key"
    r"|access.?key|private|sk-|[sr]k_(?:live|test)_|gh[pousr]_|github_pat_|xox|akia|aiza|glpat-|eyj"
)
_HEX = re.compile(r"[0-9a-fA-F]+")
_LONG_RUN = re.compile(r"[A-Za-z0-9+/_-]{16}")
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
MAX_DECODINGS = 3  # a text encoded more often is hostile: `%252525...` would decode for ever
_ENCODED_NAME_PAIR = re.compile(
    rf"(?<![^\s&;?\"'{{,(\[])(?P<name>[\w.~+-]{{0,60}}+%[\w.~%+-]{{2,60}}+)="
    rf"{_BARE_VALUE}"
)
_SECRET_NAME = re.compile(_NAME, re.IGNORECASE)
# zero-width and direction characters, soft hyphens, joiners, blank fillers, variation
# selectors, tags, and private-use characters (no font a reader can count on draws one) but the
# mark masking puts in a text
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ue001-\uf8ff\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff\U000f0000-\U0010ffff]"
)
_WORD_HEX = r"(?:[46][1-9a-fA-F]|[57][0-9aA]|3[0-9]|5[fF]|2[dDeE])"  # a letter, digit, _ . -
_WORD_DECIMAL = r"(?:4[5689]|5[0-7]|6[5-9]|[78][0-9]|9[057-9]|1[01][0-9]|12[0-2])"
# ASCII that reads otherwise than it is written: a letter, a digit, `_`, `.` or `-` written as an
# escape (JSON's, JavaScript's, Python's, HTML's: `"pass\u0077ord"`, `pass&#119;ord`), and a
# terminal's colours, which a reader does not see (grep's around what it found:
# `\x1b[31mpassword\x1b[m=x`); an escaped quote, space or line end is left as it is written, as
# it may end a value
_READ_OTHERWISE_STARTS = ("\\u", "\\x", "&#", "\x1b[")  # looked for first: most texts have none
_READ_OTHERWISE = re.compile(
    rf"(?=[\\&\x1b])(?:\\(?:u00(?P<u>{_WORD_HEX})|x(?P<x>{_WORD_HEX}))"
    rf"|&#(?:[xX]0*(?P<hex>{_WORD_HEX})|0*(?P<decimal>{_WORD_DECIMAL}));"
    r"|(?P<colour>\x1b\[[0-?]*+[ -/]*+[@-~]))"
)
# what may read otherwise than it is written, one character or escape at a time
_READ_APART = re.compile(rf"[^\x00-\x7f]|{_READ_OTHERWISE.pattern}")
_WORDLIKE = re.compile(r"[\w.-]+")
# a JSON string's escaped line ends and tabs (an escaped backslash is read as written), and
# what tells that a value may be on the lines after its key's: an escaped line end after `:`
# (and a block scalar's `|`) or before an indentation
_LINE_ESCAPE = re.compile(r"\\[\\nrt]")
_LINE_ESCAPES_READ = {"\\n": "\n", "\\r": "\r", "\\t": "\t"}
_VALUE_ON_ESCAPED_LINES = re.compile(
    r"(?=[:\\])(?::[ \t]*+(?:[|>][-+1-9]{0,2}+[ \t]*+)?\\[rn]|\\[rn](?:[ \t]|\\t))"
)
# letters of other scripts a reader takes for Latin ones (Cyrillic, Greek), read as those in a
# word that mixes them with ASCII (`p\u0430ssword`); a Cyrillic or Greek word is left as it is
_LOOK_ALIKES = (
    "\u0430\u0435\u043e\u0440\u0441\u0445\u0443\u0456\u0458\u0455\u0501\u051b\u051d\u04bb\u04cf"
    "\u043a\u0410\u0412\u0421\u0415\u041d\u0406\u0408\u041a\u041c\u041e\u0420\u0405\u0422\u0425"
    "\u04ae\u051a\u051c\u03b1\u03bf\u03bd\u03b9\u03ba\u03c5\u03c7\u0391\u0392\u0395\u0396\u0397"
    "\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7"
)
_LOOK_ALIKES_READ = str.maketrans(
    _LOOK_ALIKES, "aeopcxyijsdqwhlkABCEHIJKMOPSTXYQWaovikuxABEZHIKMNOPTYX"
)
_MIXED_WORD = re.compile(
    rf"(?<!\w)(?=[A-Za-z0-9_]*+[{_LOOK_ALIKES}])(?=[{_LOOK_ALIKES}]*+[A-Za-z0-9_])"
    rf"[A-Za-z0-9_{_LOOK_ALIKES}]++(?!\w)"
)


def _may_hold_a_secret(text: str) -> bool:
    """Whether any pattern but the base64 one may match."""
    return _HINT.search(text.lower()) is not None


@functools.lru_cache(maxsize=4096)  # a few names come again and again: path, content, ...
def is_secret_name(key: str) -> bool:
    """Whether a parameter's name says its value is a secret: `password`, `api_key`, ..."""
    words = [word.lower() for word in _WORDS.findall(_as_it_reads(key))]
    pairs = [first + second for first, second in itertools.pairwise(words)]
    return any(word in SECRET_WORDS for word in [*words, *pairs])


def mask_text(text: str) -> str:
    """The text with every secret it shows replaced by [secret]; a percent-encoded text
    (`password%3D...`, a URL's query, encoded up to MAX_DECODINGS times) that hides one is
    shown decoded, masked."""
    if _MARK not in text:
        return _masked_decoded(text).replace(_MARK, SECRET)
    # the text's own marks stand in as another character while it is masked, so that only
    # what masking replaced shows as [secret]
    own_mark = _absent_private_character(text)
    if own_mark is None:  # the text holds them all: its own marks are shown written out
        return mask_text(text.replace(_MARK, _ESCAPED_MARK))
    masked = _masked_decoded(text.replace(_MARK, own_mark))
    return masked.replace(_MARK, SECRET).replace(own_mark, _MARK)


def _absent_private_character(text: str) -> str | None:
    present = set(text)
    return next((chr(code) for code in _STAND_INS if chr(code) not in present), None)


def _masked_decoded(text: str) -> str:
    """Masked at each level of percent-encoding before it is decoded, so a value ends where
    its own level's encoding ends it: `token=abc%20def` up to the end, not at the space."""
    masked = _mask_plain(text)
    decoded, decoded_masked = text, masked
    for _ in range(MAX_DECODINGS):
        if not _PERCENT_ESCAPE.search(decoded_masked):
            break
        decoded = _percent_decoded(decoded)
        decoded_masked = _mask_plain(_percent_decoded(_mask_encoded_names(decoded_masked)))
    return decoded_masked if decoded_masked != decoded else masked


def _percent_decoded(text: str) -> str:
    """Decoded once, but an encoded private-use character (`%EE%80%80`) stays as it is
    written: only masking puts a mark in a text."""
    if _ENCODED_PRIVATE.search(text):
        text = _ENCODED_PRIVATE.sub(_written_out, text)
    return urllib.parse.unquote(text)


def _written_out(encoded: re.Match[str]) -> str:
    return encoded.group().replace("%", "%25")


def _mask_plain(text: str) -> str:
    text = _mask_escaped_lines(text)
    if _as_it_reads(text) != text:
        return _mask_as_it_reads(text)  # a secret may show once the text reads as it looks
    return _mask_as_written(text)


def _as_it_reads(text: str) -> str:
    """Without the characters a reader does not see (`pass\u200bword`, a terminal's colours),
    full-width and styled letters read as the letters they look like (NFKC), and so are Cyrillic
    and Greek look-alikes in a Latin word; a word's escaped letters read as letters
    (`pass\u0077ord`)."""
    if any(start in text for start in _READ_OTHERWISE_STARTS):
        text = _READ_OTHERWISE.sub(_read_as, text)
    if text.isascii():
        return text
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    return _look_alikes_read(_INVISIBLE.sub("", text))


def _look_alikes_read(text: str) -> str:
    """The text, Cyrillic and Greek letters in a word of Latin ones read as the Latin letters
    they look like (one for one)."""
    return text if text.isascii() else _MIXED_WORD.sub(_as_latin, text)


def _as_latin(word: re.Match[str]) -> str:
    return word.group().translate(_LOOK_ALIKES_READ)


def _read_as(written: re.Match[str]) -> str:
    if written["colour"]:
        return ""
    if written["decimal"]:
        return chr(int(written["decimal"]))
    return chr(int(written["u"] or written["x"] or written["hex"], 16))


@dataclasses.dataclass(frozen=True)
class _Reading:
    """A text as it reads, and where each of its characters is written in the text: `starts[i]`
    is where the written characters of the read ones from i on start, `ends[i]` where those
    of the read ones before i end (both rounded to a whole written character; invisible ones
    go with the character after them)."""

    text: str
    starts: list[int]
    ends: list[int]


def _reading(text: str, apart: re.Pattern[str], read_apart: Callable[[str], str]) -> _Reading:
    """The text read: what `apart` finds as `read_apart` reads it, the rest as it is written."""
    read: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    at = 0  # the next character to read
    written_from = 0  # where the written characters of the next one read start
    for found in [*apart.finditer(text), None]:
        run_end = len(text) if found is None else found.start()
        if run_end > at:  # read as it is written, a character each
            read.append(text[at:run_end])
            starts += [written_from, *range(at + 1, run_end)]
            ends += [written_from, *range(at + 1, run_end)]
            written_from = at = run_end
        if found is None:
            break
        shown = read_apart(found.group())
        at = found.end()
        if shown:
            read.append(shown)
            starts += [written_from] * len(shown)
            ends += [written_from] + [at] * (len(shown) - 1)
            written_from = at
    starts.append(len(text))
    ends.append(len(text))
    return _Reading("".join(read), starts, ends)


def _read_apart(written: str) -> str:
    """How a character or an escape reads; one that reads as a quote, a space or another mark
    that ends a value (a full-width `"` or `&`) reads as itself: its value goes on over it."""
    shown = _as_it_reads(written)
    return shown if not shown or _WORDLIKE.fullmatch(shown) else written


def _mask_as_it_reads(text: str) -> str:
    """Masked as the text reads, its own characters kept but for the values masked."""
    reading = _reading(text, _READ_APART, _read_apart)
    # look-alikes are read in the words as read (an invisible character or a colour in one
    # does not split it): one letter for one, so the reading keeps its places
    reading = dataclasses.replace(reading, text=_look_alikes_read(reading.text))
    masked = _mask_reading(text, reading, _mask_as_written)
    return _mask_as_written(text) if masked is None else masked


def _mask_escaped_lines(text: str) -> str:
    """YAML written in a JSON string masked as its escaped line ends read, so that a value on
    the lines after its key is (`password: |\\n  x`, `api_key:\\n  x`)."""
    escaped_line_ends = "\\n" in text or "\\r" in text  # looked for first: far faster
    if not escaped_line_ends or not _VALUE_ON_ESCAPED_LINES.search(text):
        return text
    reading = _reading(text, _LINE_ESCAPE, _read_line_escape)
    masked = _mask_reading(text, reading, _mask_over_lines)
    return text if masked is None else masked


def _read_line_escape(written: str) -> str:
    return _LINE_ESCAPES_READ.get(written, written)


def _mask_reading(text: str, reading: _Reading, mask: Callable[[str], str]) -> str | None:
    """The text masked by `mask` as `reading` reads it, its own characters kept but for the
    values masked; None if nothing is masked."""
    # the text's marks (from a level of encoding masked before) read as a private-use character
    # no reading holds, so that the marks masking adds are told from them
    own_marks_read = reading.text.replace(_MARK, _READ_MARK)
    masked = mask(own_marks_read)
    if masked == own_marks_read:
        return None
    spans = _unmasked_spans(own_marks_read, masked.split(_MARK))
    if spans is None:  # not a masking of the text as read: shown as read
        return masked.replace(_READ_MARK, _MARK)
    kept = [text[reading.ends[start] : reading.starts[end]] for start, end in spans]
    return _MARK.join(kept)


def _unmasked_spans(text: str, kept: list[str]) -> list[tuple[int, int]] | None:
    """Where in `text` each part `kept` by masking it stands (the first at its start, the last
    at its end, masked values between them), or None if masking did not keep them so."""
    spans: list[tuple[int, int]] = []
    position = 0
    for index, part in enumerate(kept):
        if index == 0:
            start = 0 if text.startswith(part) else -1
        elif index == len(kept) - 1:
            start = len(text) - len(part) if text.endswith(part) else -1
        else:
            start = text.find(part, position)
        if start < position:
            return None
        spans.append((start, start + len(part)))
        position = start + len(part)
    return spans


def _mask_as_written(text: str) -> str:
    if _may_hold_a_secret(text):
        text = _masked_by(_TEXT_SECRETS, text)
    return _BASE64.sub(_masked_if_secret, text) if _LONG_RUN.search(text) else text


def _mask_over_lines(text: str) -> str:
    return _masked_by(_LINE_RULES, text) if _may_hold_a_secret(text) else text


def _masked_by(rules: tuple[re.Pattern[str], ...], text: str) -> str:
    for pattern in rules:
        needed = _NEEDED_FIRST.get(pattern)
        if needed is None or needed.search(text):
            text = pattern.sub(_keep_before_secret, text)
    return text


def _mask_encoded_names(text: str) -> str:
    """`pass%77ord=abc%20def`: a form's value whose name is encoded too."""
    return _ENCODED_NAME_PAIR.sub(_masked_if_secret_name, text)


def _masked_if_secret_name(match: re.Match[str]) -> str:
    name = match["name"]
    for _ in range(MAX_DECODINGS):
        name = urllib.parse.unquote(name)
    return f"{match['name']}={_MARK}" if _SECRET_NAME.search(name) else match.group()


@functools.lru_cache(maxsize=4096)
def _masked_key(key: str) -> str:
    return mask_text(key)


def _keep_before_secret(match: re.Match[str]) -> str:
    keep = match.groupdict().get("keep")
    return (keep or "") + _MARK


def _masked_if_secret(match: re.Match[str]) -> str:
    blob = match.group()
    if _HEX.fullmatch(blob):  # a hash or an id: no secret's base64 is only hex digits
        return blob
    text = _base64_text(blob)
    if text is not None and (_masked_decoded(text) != text or _is_basic_pair(text)):
        return _MARK
    # bytes that are not text before a token (`\xff` + token), or a word before the base64
    # text that shifts it (`key_` + base64, `/data/` + base64): read from each of its first
    # four characters, it shows the secret's own shape
    return _MARK if any(_holds_a_shape(blob[start:]) for start in range(4)) else blob


def _base64_bytes(blob: str) -> bytes | None:
    try:
        return base64.b64decode(
            blob + "=" * (-len(blob) % 4),
            altchars=b"-_" if "-" in blob or "_" in blob else None,
            validate=True,
        )
    except (binascii.Error, ValueError):
        return None


def _base64_text(blob: str) -> str | None:
    decoded = _base64_bytes(blob)
    try:
        return None if decoded is None else decoded.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _holds_a_shape(blob: str) -> bool:
    """Whether a base64 text decodes to bytes that hold a token or a private key."""
    decoded = _base64_bytes(blob)
    return decoded is not None and any(shape.search(decoded) for shape in _SHAPES_IN_BYTES)


def _is_basic_pair(text: str) -> bool:
    """`user:password`, what HTTP Basic credentials encode."""
    return re.fullmatch(r"[^\s:]{1,100}:[^\s]{4,200}", text) is not None


def mask_secrets(value: Any) -> Any:
    """A copy of parameters with every secret masked (see the module's description)."""
    masked = _masked(value, secret=False)
    return _mask_split_secrets(value, masked)


def _masked(value: Any, secret: bool) -> Any:
    if isinstance(value, str):
        return SECRET if secret else mask_text(value)
    if isinstance(value, dict):
        return {
            (_masked_key(key) if isinstance(key, str) else key): _masked(
                item, secret or (isinstance(key, str) and is_secret_name(key))
            )
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        masked, before = [], None
        for index, item in enumerate(value):
            shown = _masked(item, secret or _secret_option(before))
            if isinstance(item, str) and shown == item and _secret_in_command(value, index):
                shown = SECRET
            masked.append(shown)
            before = item
        return masked
    return value


def _secret_option(item: Any) -> bool:
    """An argument like `--password` or `--api-key`: the next one is its value."""
    return isinstance(item, str) and item.startswith("-") and is_secret_name(item.lstrip("-"))


def _secret_in_command(command: list[Any] | tuple[Any, ...], index: int) -> bool:
    """Whether an argument is a secret as the command line reads it after its program, the
    program's first argument and the argument before it: `["sshpass", "-p", x]`,
    `["docker", "login", "-u", "ana", "-p", x]`, `["mysql", "-px"]`, `["curl", "-u", "ana:x"]`."""
    words = [*command[: min(index - 1, 2)], *command[index - 1 : index + 1]] if index else []
    if not all(isinstance(word, str) for word in words):
        return False
    line = " ".join(words)
    return _may_hold_a_secret(line) and not mask_text(line).endswith(command[index])


def _mask_split_secrets(original: Any, masked: Any) -> Any:
    """Mask every text value a secret spans when the values are read one after the other."""
    texts: list[str] = []
    _collect(original, texts)
    starts = list(itertools.accumulate((len(text) for text in texts), initial=0))
    joined = "".join(texts)
    if len(texts) < 2 or not _may_hold_a_secret(joined):
        return masked
    spanned: set[int] = set()
    for pattern in _SPLIT_SECRETS:  # one pass over all the text: linear in its length
        for match in pattern.finditer(joined):
            first = bisect.bisect_right(starts, match.start()) - 1
            last = bisect.bisect_left(starts, match.end()) - 1
            if last > first:  # across the end of a value
                spanned.update(i for i in range(first, last + 1) if starts[i] < starts[i + 1])
    if not spanned:
        return masked
    counter = iter(range(len(texts)))
    return _replace_leaves(masked, spanned, counter)


def _collect(value: Any, texts: list[str]) -> None:
    if isinstance(value, str):
        texts.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _collect(item, texts)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect(item, texts)


def _replace_leaves(value: Any, spanned: set[int], counter: Any) -> Any:
    if isinstance(value, str):
        return SECRET if next(counter) in spanned else value
    if isinstance(value, dict):
        return {key: _replace_leaves(item, spanned, counter) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace_leaves(item, spanned, counter) for item in value]
    return value
