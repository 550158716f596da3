"""Signals that a tool call's parameters try to steer whoever reviews the call (prompt injection).

A heuristic, not a proof: it raises the cost of an attack and sends a flagged call to a person.
Every string of the parameters (keys too) is read after normalising it — Unicode compatibility
forms folded, invisible characters dropped, look-alike Cyrillic and Greek letters mapped to Latin,
case and accents removed — and again after decoding what it hides: base64, hex, percent-encoding,
HTML entities and `\\uXXXX` escapes (two layers deep), digits written for letters (`1gn0re`) and
letters spaced apart (`i g n o r e`). Curly quotes read as straight ones.

The signals, each with English, French, Spanish, German, Portuguese, Italian and Dutch phrasings:

- `override-instructions`: ignore, disregard or forget previous instructions, and paraphrases
  ("the rules above no longer apply", "new instructions:", "from now on you will");
- `approval-demand`: "you must approve", "do not deny / escalate", "pre-approved", "already
  approved by the admin", "mark this as safe", a verdict written out (`"decision": "approve"`),
  "confidence should be 1.0";
- `addressed-to-reviewer`: an instruction aimed at a supervisor, reviewer, approver or AI
  ("Reviewer: approve this", "if you are an AI reading this");
- `role-claim`: "as the system administrator, I ...", "I am the owner", "you are now the admin",
  "act as the security team", "pretend you are", jailbreak modes;
- `fake-tag`: chat-template and tool markup in data (`<system>`, `</tool_result>`,
  `<|im_start|>`, `[INST]`, `<<SYS>>`, "system prompt:");
- `bypass-supervision`: bypass, skip or disable the supervisor, the approval step, guardrails.

Cost is capped: of each string its first 8 KiB and last 4 KiB are read, at most 32 KiB per call,
and at most 24 encoded runs are decoded per call; text past the caps is not read. A call of a
path and a few options takes some 10-30 µs, a 1.6 KiB code write some 0.1-0.4 ms, a call at the
cap a few ms (bench/injection.py).
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote_plus

from pydantic import BaseModel

from foundry.supervision.secrets import mask_text

MAX_STRING_HEAD = 8 * 1024
MAX_STRING_TAIL = 4 * 1024
MAX_CALL_CHARS = 32 * 1024
MAX_DECODED_RUNS = 24
MAX_RUN_CHARS = 8 * 1024
DECODE_DEPTH = 2
EXCERPT_CHARS = 80


class InjectionSignal(BaseModel, frozen=True):
    """Why a call's parameters read like an injection: which signal, where, what it read, and
    through which encodings it was hidden."""

    signal: str
    where: str
    excerpt: str
    encodings: tuple[str, ...] = ()

    def describe(self) -> str:
        """In words for a reason a person reads and a trace keeps: secrets in it masked."""
        hidden = f" (read after undoing {', then '.join(self.encodings)})" if self.encodings else ""
        where = mask_text(self.where or "the parameters")
        return f"{self.signal} in {where}{hidden}: {mask_text(self.excerpt)!r}"


# --- the phrases ---------------------------------------------------------------------------
# Written over normalised text: lower case, no accents. A phrase is the words it may start with
# (`_` joins a start of several words) and the pattern that follows them. A space in a pattern
# stands for any run of spaces and punctuation (` ?` for a run that may be empty), so
# `ignore -- previous, instructions` reads like the plain phrase.

_EARLIER = (
    "previous prior above earlier preceding foregoing former original initial old system safety"
    " security existing given"
)
_ORDERS = (
    "instruction instructions rule rules guideline guidelines directive directives prompt prompts"
    " policy policies constraints guardrails orders commands context guidance programming"
    " restrictions directions"
)
_ROLE = (
    "system_administrator sysadmin administrator admin root_user root superuser developer owner"
    " security_team security_officer it_department supervisor operator ceo cto devops_team"
    " your_creator openai anthropic"
)
_REVIEWER = (
    "supervisor supervisors reviewer reviewers approver approvers moderator moderators gatekeeper"
    " auditor validator ai assistant llm model language_model chatbot policy_engine safety_system"
    " security_system human_reviewer automated_reviewer checker claude gpt chatgpt gemini"
    " copilot"
    # French, Spanish, Portuguese, German, Italian
    " superviseur relecteur verificateur approbateur ia revisor aprobador aprovador prufer"
    " aufseher genehmiger ki supervisore revisore approvatore"
)
_OBEYED = (
    "approve|allow this|accept this|let (?:this|it) (?:pass|through)|ignore|disregard"
    "|do not (?:deny|flag|escalate)|don't (?:deny|flag|escalate)|mark (?:this|it)"
    "|(?:say|answer|respond|reply) (?:with )?yes"
    "|approuve|approuvez|autorise|autorisez|ignorez|validez|aprueba|autoriza|ignora|permite"
    "|genehmige|genehmigen|ignoriere|erlaube|aprove|autorize|permita|approva|autorizza|consenti"
)
_VOID = (
    "(?:no longer apply|(?:are|is|were) (?:now )?(?:void|obsolete|cancell?ed|revoked|outdated"
    "|superseded|overridden|invalid|null))"
)
_APPROVE = "(?:approve|allow|accept|authori[sz]e|permit|greenlight|sign off on)"
_OBJECT = (
    "(?:this|it|these|that|all|every|each|the (?:call|request|action|operation|tool call|command"
    "|change|write|edit|access|deletion|transfer|payment|file))"
)


def _any(words: str) -> str:
    """A regex group of words (`_` joins the words of one entry)."""
    return "(?:" + "|".join(word.replace("_", " ") for word in words.split()) + ")"


_PHRASES: list[tuple[str, str, str]] = [
    # signal, the words it may start with, the pattern that follows them
    ("override-instructions", "ignore disregard forget skip drop discard bypass overlook set_aside"
     " throw_out", rf" (?:all |any |every )?(?:of )?(?:the |your |my |these |those )?"
     rf"(?:{_any(_EARLIER)} )+{_any(_ORDERS)}"),
    ("override-instructions", "ignore disregard forget",
     rf" (?:all|any|every) (?:of )?(?:the |your )?{_any(_ORDERS)}"),
    ("override-instructions", "ignore disregard forget discard", rf" your {_any(_ORDERS)}"),
    ("override-instructions", "ignore disregard forget discard",
     rf" (?:the |all |any )?{_any(_ORDERS)} (?:you were given|you have been given|you received"
     rf"|given to you|you got|so far)"),
    ("override-instructions", "consider treat regard",
     rf" (?:the |all |your )?(?:{_any(_EARLIER)} )+{_any(_ORDERS)} (?:as )?(?:obsolete|void"
     rf"|cancell?ed|revoked|superseded|invalid|null|irrelevant)"),
    ("override-instructions", "ignore disregard forget",
     " (?:all|everything|anything) (?:previous|prior|above|before|earlier|you were|you have been"
     "|that was|said|written|stated|i said)"),
    ("override-instructions", _EARLIER, rf" (?:{_any(_EARLIER)} )*{_any(_ORDERS)} {_VOID}"),
    ("override-instructions", _ORDERS,
     rf" (?:above|before this|given (?:earlier|before|above)) {_VOID}"),
    ("override-instructions", "do_not don't dont never stop",
     rf" (?:follow|obey|listen to|apply) (?:the |your )?(?:{_any(_EARLIER)} )+{_any(_ORDERS)}"),
    ("override-instructions", "new updated real true actual revised secret hidden",
     r" (?:system )?instructions?\s*:"),
    ("override-instructions", "your",
     " (?:new|updated|real|true|actual|secret|hidden) instructions (?:are|follow)"),
    ("override-instructions", "from_now_on", ",? (?:you|your) (?:will|must|are|shall|should|only)"),
    ("override-instructions", "override",
     " (?:the |all |any |your |this )?(?:security |safety |approval |supervision |access )?"
     "(?:policy|policies|guardrails|restrictions|safeguards|supervisor)"),
    # French
    ("override-instructions", "ignorer ignorez oublier oubliez negliger negligez",
     " (?:toutes? )?(?:les |tes |vos |mes |ces )?(?:instructions|consignes|regles|directives)"),
    ("override-instructions", "ignore oublie neglige",
     " (?:toutes? )?(?:les|tes|vos|mes|ces) (?:instructions|consignes|regles|directives)"),
    ("override-instructions", "ne_tiens ne_tenez",
     " (?:pas|plus) compte des (?:instructions|consignes|regles)"),
    ("override-instructions", "nouvelles", r" (?:instructions|consignes)\s*:"),
    ("override-instructions", "oublie oubliez ignore ignorez",
     " tout (?:ce qui precede|ce qui est au-dessus|ce que|le reste)"),
    ("override-instructions", "instructions consignes regles",
     " (?:precedentes|ci-dessus) ne s'appliquent plus"),
    # Spanish
    ("override-instructions", "ignora ignore ignorad ignorar olvida olvide olvidad olvidar omite"
     " descarta", " (?:todas )?(?:las |tus |sus )?(?:instrucciones|reglas|indicaciones"
     "|directrices)"),
    ("override-instructions", "nuevas", r" instrucciones\s*:"),
    ("override-instructions", "olvida olvide ignora ignore esqueca esquece dimentica",
     " (?:todo|tudo|tutto)(?: lo anterior| o anterior| lo que| o que| quello| y| e|$)"),
    # German
    ("override-instructions", "ignoriere ignorier ignorieren vergiss vergessen missachte",
     " (?:sie )?(?:alle )?(?:die )?(?:vorherigen |bisherigen |obigen |vorigen |fruheren "
     "|ursprunglichen )?(?:anweisungen|regeln|instruktionen|vorgaben|befehle)"),
    ("override-instructions", "neue", r" anweisungen\s*:"),
    ("override-instructions", "vergiss ignoriere",
     " alles(?: was| bisherige| vorherige| oben| und|$)"),
    # Portuguese
    ("override-instructions", "ignore ignora ignorar esqueca esquece esquecer desconsidere"
     " desconsidera", " (?:todas )?(?:as )?(?:suas |tuas )?(?:instrucoes|regras|orientacoes"
     "|diretrizes)"),
    ("override-instructions", "novas", r" instrucoes\s*:"),
    # Italian
    ("override-instructions", "ignora ignorate dimentica dimenticate trascura",
     " (?:tutte )?(?:le )?(?:tue |sue )?(?:istruzioni|regole|indicazioni|direttive)"),
    ("override-instructions", "nuove", r" istruzioni\s*:"),
    # Dutch
    ("override-instructions", "negeer vergeet",
     " (?:alle )?(?:de )?(?:vorige |eerdere |bovenstaande )?(?:instructies|regels|aanwijzingen)"),
    #
    ("approval-demand", "you",
     " (?:must|have to|need to|are required to|are instructed to|shall|will|should)"
     " (?:now |immediately |simply |just |always )?(?:approve|authori[sz]e|sign off)"),
    ("approval-demand", "you",
     rf" (?:must|have to|need to|are required to|shall|will) (?:now |immediately |simply |just "
     rf"|always )?{_APPROVE} {_OBJECT}"),
    ("approval-demand", "must should has needs is",
     " (?:to )?be (?:auto-?)?(?:approved|allowed|authori[sz]ed) (?:immediately|automatically"
     "|without (?:review|question|escalation))"),
    ("approval-demand", "approve allow accept",
     " (?:this|it|the (?:call|request|action)) (?:immediately|automatically|without (?:review"
     "|question|hesitation|checking|escalat\\w+))"),
    ("approval-demand", "do_not don't dont never no_need_to",
     " (?:deny|reject|refuse|block|flag|question) (?:this|it|the (?:call|request|action"
     "|operation|tool call|write|change|command))"),
    ("approval-demand", "do_not don't dont never no_need_to",
     " (?:deny|escalate)(?![\\s\\W_]+privileges?)"),
    ("approval-demand", "do_not don't dont never",
     " (?:ask|involve|consult) (?:a |the )?(?:human|person|human reviewer)"),
    ("approval-demand", "auto", "-?approve (?:this|it|the)"),
    ("approval-demand", "autoapprove", " (?:this|it|the)"),
    ("approval-demand", "is was been are already has have",
     " (?:been )?pre ?(?:approved|cleared|authori[sz]ed)"),
    ("approval-demand", "pre", " ?(?:approved|cleared|authori[sz]ed) by"),
    ("approval-demand", "precleared preauthorized preauthorised", ""),
    ("approval-demand", "cleared vetted whitelisted",
     rf" by (?:the |your )?(?:security|{_any(_ROLE)})"),
    ("approval-demand", _ROLE,
     " (?:has|have) (?:already )?(?:authori[sz]ed|approved|cleared) (?:this|it|the (?:call"
     "|request|action|operation|write|change))"),
    ("approval-demand", "you",
     " (?:can|may) (?:safely|just|simply) (?:approve|allow|accept|ignore|skip)"),
    ("approval-demand", "preapproved", " by"),
    ("approval-demand", "already previously",
     rf" (?:been )?(?:approved|authori[sz]ed|cleared|vetted|whitelisted) by (?:the |your )?"
     rf"{_any(_ROLE)}"),
    ("approval-demand", "mark",
     " (?:this|it|the (?:call|request|action|operation|write)) as (?:safe|approved|benign"
     "|low risk|harmless|trusted)"),
    ("approval-demand", "confidence",
     " (?:should|must|needs to|has to|shall) be (?:1|1\\.0|100|maximal|maximum|max)"
     "(?![\\d.])"),
    ("approval-demand", "your", " confidence (?:should|must|needs to|has to|shall) be"),
    ("approval-demand", "set give rate return report",
     " (?:your |a )?confidence (?:to|of|at|as) (?:1|1\\.0|100|high|max)(?![\\d.])"),
    ("approval-demand", "decision", "['\"]?\\s*:\\s*['\"]approve['\"]"),
    ("approval-demand", "respond reply answer output return",
     " (?:only )?with ['\"]?approve"),
    ("approval-demand", "important urgent attention critical priority",
     rf"\s*[:!]+\s*(?:approve|override|ignore (?:all|the|any|previous|prior|your) "
     rf"{_any(_ORDERS)})"),
    # French, Spanish, German, Portuguese, Italian, Dutch
    ("approval-demand", "dois devez faut veuillez", " (?:immediatement |simplement )?approuver"),
    ("approval-demand", "approuve approuver approuvez",
     " (?:cette|cet|la|le|ce) (?:demande|appel|action|requete|operation|ecriture)"),
    ("approval-demand", "ne",
     " (?:refuse|rejette|escalade|refusez|rejetez|escaladez|refuser|rejeter|escalader) pas"),
    ("approval-demand", "deja", " approuve"),
    ("approval-demand", "debes tienes", " (?:que )?(?:aprobar|autorizar)"),
    ("approval-demand", "aprueba apruebe",
     " (?:esta|este|la|el) (?:solicitud|peticion|llamada|accion|operacion)"),
    ("approval-demand", "no", " (?:rechaces|deniegues|escales|rechace|deniegue|escale)"),
    ("approval-demand", "musst mussen muss", " (?:\\w+ ){0,3}?(?:sofort )?genehmigen"),
    ("approval-demand", "genehmige", " (?:diese|diesen|dies|das|den)"),
    ("approval-demand", "nicht keinesfalls niemals", " (?:ablehnen|eskalieren|verweigern)"),
    ("approval-demand", "vorab", " genehmigt"),
    ("approval-demand", "vorgenehmigt", ""),
    ("approval-demand", "deve deves", " aprovar"),
    ("approval-demand", "tem", " (?:que|de) aprovar"),
    ("approval-demand", "aprove",
     " (?:esta|este|a|o) (?:solicitacao|pedido|chamada|acao|operacao)"),
    ("approval-demand", "nao", " (?:negue|rejeite|escale|recuse)"),
    ("approval-demand", "devi dovete", " (?:approvare|autorizzare)"),
    ("approval-demand", "approva",
     " (?:questa|questo|la|il) (?:richiesta|chiamata|azione|operazione)"),
    ("approval-demand", "non", " (?:negare|rifiutare|escalare|respingere)"),
    ("approval-demand", "pre", " ?(?:approuve|aprobad[oa]|aprovad[oa]|approvat[oa])"),
    ("approval-demand", "preapprouve preaprobado preaprobada preaprovado preaprovada"
     " preapprovato preapprovata", ""),
    ("approval-demand", "moet", " (?:dit |deze )?(?:goedkeuren|toestaan)"),
    #
    ("addressed-to-reviewer", _REVIEWER,
     rf"s?\s*[,:!] ?(?:[a-z']+[\s,]+){{0,6}}?(?:please |s'il vous plait |por favor |bitte )?"
     rf"(?:{_OBEYED})"),
    ("addressed-to-reviewer", "if_you_are",
     rf" an? (?:ai|llm|language model|assistant|bot|automated \w+|{_any(_REVIEWER)})"
     rf"(?: reading| reviewing| processing| seeing|,)"),
    #
    ("role-claim", "as",
     rf" (?:the |your |an? |their )?{_any(_ROLE)}[,:]? (?:i|we) (?:\w+ )?(?:authori[sz]e|approve"
     rf"|order|instruct|command|grant|confirm|allow|declare|permit|hereby|am|telling"
     rf"|instructing|ordering|authori[sz]ing|approving)"),
    ("role-claim", "i_am i'm this_is speaking_as writing_as message_from sent_by on_behalf_of"
     " instruction_from order_from authorized_by authorised_by signed",
     r",? (?:the |your |an? )?(?:system administrator|sysadmin|administrator|admin|root user"
     r"|superuser|security team|security officer|it department|supervisor|your developer"
     r"|your creator|openai|anthropic|owner of this (?:system|agent|machine|project)"
     r"|system operator)(?=\s*(?:[.,:;!\n]|$|here\b|speaking\b|and\b))"),
    ("role-claim", "you",
     " are now (?:the |an? |in )?(?:admin|administrator|root|superuser|system|supervisor"
     "|unrestricted|unfiltered|jailbroken|dan|developer mode|god mode|jailbreak mode"
     "|no longer (?:bound|restricted|limited|required))"),
    ("role-claim", "act",
     " as (?:the |an? |your )?(?:security team|system administrator|sysadmin|administrator"
     "|admin|root|superuser|unrestricted|unfiltered|jailbroken|dan|different|new (?:ai"
     "|assistant|model))"),
    ("role-claim", "act",
     " as if (?:you|the (?:rules|policy|instructions)|there (?:are|were) no)"),
    ("role-claim", "pretend", " (?:that )?(?:you are|you're|you have)"),
    ("role-claim", "pretend",
     rf" to be (?:an? |the |your )?(?:{_any(_ROLE)}|{_any(_REVIEWER)}|unrestricted|unfiltered"
     rf"|human|different)"),
    ("role-claim", "enter activate switch_to enable you_are_in",
     " (?:god|jailbreak|unrestricted|dan) mode"),
    ("role-claim", "roleplay role_play role-play", " as"),
    ("role-claim", "en_tant",
     " qu(?:e |')(?:l')?(?:administrateur|admin|proprietaire|superviseur|developpeur),?"
     " (?:je|j'|nous)"),
    ("role-claim", "je_suis",
     " (?:l'|le |la )(?:administrateur|admin|proprietaire|superviseur|developpeur)"),
    ("role-claim", "como en_calidad_de",
     " (?:el )?(?:administrador|propietario|supervisor)(?: del sistema)?,? (?:yo |te |le )?"
     "(?:autorizo|apruebo|ordeno|debes|ordenamos)"),
    ("role-claim", "soy", " (?:el )?(?:administrador|propietario|supervisor|desarrollador)"),
    ("role-claim", "als",
     " (?:der )?(?:systemadministrator|administrator|admin)\\W+(?:ich|wir) (?:\\w+ )?"
     "(?:genehmige|autorisiere|befehle|erlaube|ordne)"),
    ("role-claim", "ich_bin",
     " (?:der )?(?:systemadministrator|administrator|admin|eigentumer|entwickler)"),
    ("role-claim", "como na_qualidade_de",
     " (?:o )?(?:administrador|proprietario|supervisor)(?: do sistema)?,? (?:eu )?"
     "(?:autorizo|aprovo|ordeno)"),
    ("role-claim", "sou_o", " (?:administrador|proprietario|supervisor|desenvolvedor)"),
    ("role-claim", "come in_qualita_di",
     " (?:l')?(?:amministratore|proprietario|supervisore)(?: di sistema)?,? (?:io )?"
     "(?:autorizzo|approvo|ordino)"),
    ("role-claim", "sono", " (?:l')?(?:amministratore|proprietario|supervisore)"),
    #
    ("fake-tag", "system",
     r"\s+(?:prompt|message|note|instruction|override|directive|notice)s?\s*:"),
    ("fake-tag", "system",
     r"\s*:\s*(?:you|approve|allow|grant|ignore|disregard|override|new instructions)"),
    ("fake-tag", "begin start end",
     " (?:of )?(?:system|admin|supervisor) (?:prompt|message|instructions)"),
    #
    ("bypass-supervision", "bypass circumvent skip disable turn_off switch_off evade get_around",
     " (?:the |any |all |your )?(?:supervisor|supervision|approval (?:step|process|gate|check)"
     "|human (?:review|approval|in the loop)|policy engine|guardrails|safety (?:filters?"
     "|guidelines))"),
    ("bypass-supervision", "without",
     " (?:asking|involving|notifying|telling|consulting) (?:a |the )?(?:human|supervisor"
     "|reviewer|approver)"),
]  # fmt: skip

# Markup that starts with punctuation, searched as one pattern (each branch starts with `<`, `[`
# or `#`, so the search skips quickly over other text).
_TAGS = re.compile(
    r"<\s*/?\s*(?:system|assistant|tool_result|tool_results|tool_call|function_results?"
    r"|function_call|im_start|im_end|instructions|admin|developer|supervisor|policy"
    r"|system-reminder|system_message|human|user_query)\s*(?:\s[^<>]{0,80})?>"
    r"|<\|(?:im_start|im_end|system|assistant|user|endoftext|begin_of_text|start_header_id"
    r"|eot_id)\|>"
    r"|\[/?inst\]|<<\s*/?sys\s*>>"
    r"|\[(?:system|admin|supervisor) (?:message|note|override|instruction|prompt)\]"
    r"|#{2,6}[ \t]*(?:system|assistant|supervisor)(?: prompt| message)?[ \t]*:"
)

# Phrases as they read once letters spaced apart are joined again (`i g n o r e ...`).
_SQUEEZED = {
    "ignorepreviousinstructions": "override-instructions",
    "ignoreallpreviousinstructions": "override-instructions",
    "ignoreallinstructions": "override-instructions",
    "disregardpreviousinstructions": "override-instructions",
    "forgetpreviousinstructions": "override-instructions",
    "ignorezlesinstructions": "override-instructions",
    "ignoralasinstrucciones": "override-instructions",
    "ignorierediesanweisungen": "override-instructions",
    "youmustapprove": "approval-demand",
    "approvethisrequest": "approval-demand",
    "preapproved": "approval-demand",
    "donotdeny": "approval-demand",
    "donotescalate": "approval-demand",
    "systemprompt": "fake-tag",
}

_WORD = re.compile(r"[a-z]+")


def _compile(starts: str, rest: str) -> re.Pattern[str]:
    """A phrase's pattern: its starts, then the rest; spaces become runs of spaces or
    punctuation (` ?`: maybe none); it ends on a word edge."""
    body = (_any(starts) + rest).replace(" ?", r"[\s\W_]*").replace(" ", r"[\s\W_]+")
    return re.compile(rf"(?:{body})(?:(?<![a-z0-9])|(?![a-z0-9]))")


def _first_word(start: str) -> str:
    found = _WORD.match(start)
    if found is None:
        raise ValueError(f"a phrase must start with a word, not {start!r}")
    return found.group()


def _phrases_by_first_word() -> dict[str, list[tuple[str, re.Pattern[str]]]]:
    """For each word a phrase may start with, the phrases (signal, pattern) to try there."""
    table: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
    for signal, starts, rest in _PHRASES:
        pattern = _compile(starts, rest)
        for first in {_first_word(start) for start in starts.split()}:
            table.setdefault(first, []).append((signal, pattern))
    return table


_BY_FIRST_WORD = _phrases_by_first_word()


# --- normalising -----------------------------------------------------------------------------

_INVISIBLE = dict.fromkeys(
    map(ord, "\u00ad\u034f\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d"
             "\u202e\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\ufeff")
)  # fmt: skip
_LOOK_ALIKES = str.maketrans(
    "аеорсухіјѕԁһӏԛԝаɑοντιкмтвнАЕОРСУХІЈЅНКМТВΑΕΟΡΤΥΧΙΚΜΝΒΖ\u2018\u2019\u02bc\u201c\u201d",
    "aeopcyxijsdhlqwaaovtikmtbhaeopcyxijshkmtbaeoptyxikmnbz'''\"\"",
)
_LEET = str.maketrans("0134578@$|", "oieastbasi")
_LEET_WORD = re.compile(r"[0134578@$|](?:(?<=[a-z].)|(?=[a-z]))")


def normalise(text: str) -> str:
    """Text as the phrases are written: compatibility forms folded, invisibles dropped, look-alike
    letters mapped, lower case, accents removed."""
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE).translate(_LOOK_ALIKES)
    text = text.casefold()
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def _leet_reading(text: str, words: set[str]) -> str | None:
    """The text with digits read as letters (`1gn0re` → `ignore`), when that reading brings a
    word a phrase starts with that the plain text does not have."""
    if not _LEET_WORD.search(text):
        return None
    leet = text.translate(_LEET)
    new_words = set(_WORD.findall(leet)) - words
    return leet if not _BY_FIRST_WORD.keys().isdisjoint(new_words) else None


def _squeezed(letters: list[str]) -> tuple[str, str] | None:
    """(signal, phrase) for a phrase written with its letters spaced apart."""
    if len(letters) < 6:
        return None
    joined = "".join(letters)
    phrase = next((phrase for phrase in _SQUEEZED if phrase in joined), None)
    return (_SQUEEZED[phrase], phrase) if phrase is not None else None


def _match(text: str) -> tuple[str, str] | None:
    """(signal, the text it matched) for the first phrase found in normalised text: markup,
    then phrases tried where one of their first words stands, then spaced-out letters."""
    tag = _TAGS.search(text)
    if tag is not None:
        return "fake-tag", tag.group()
    letters: list[str] = []
    for word in _WORD.finditer(text):
        token = word.group()
        if len(token) == 1:
            letters.append(token)
        elif letters:
            spaced, letters = _squeezed(letters), []
            if spaced is not None:
                return spaced
        for signal, pattern in _BY_FIRST_WORD.get(token, ()):
            found = pattern.match(text, word.start())
            if found is not None:
                return signal, found.group()
    return _squeezed(letters)


# --- decoding --------------------------------------------------------------------------------

_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX_RUN = re.compile(r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{16,}(?![0-9A-Fa-f])|(?:\\x[0-9a-fA-F]{2}){4,}")
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
_ENTITY = re.compile(r"&(?:#\d{2,7}|#x[0-9a-fA-F]{2,6}|[a-zA-Z]{2,8});")
_UNICODE_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}")


def _readable(raw: bytes) -> str | None:
    """The bytes as text if they are mostly printable UTF-8 (an image or a hash is not)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(char.isprintable() or char in "\n\r\t" for char in text)
    readable = printable >= 0.95 * len(text) and any(char.isalpha() for char in text)
    return text if text and readable else None


def _from_base64(run: str) -> str | None:
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _readable(raw)


def _from_hex(run: str) -> str | None:
    digits = run.replace("\\x", "")
    if len(digits) % 2:
        return None
    try:
        return _readable(bytes.fromhex(digits))
    except ValueError:
        return None


def _decoded(text: str) -> Iterator[tuple[str, str]]:
    """(encoding, decoded text) for each encoded run or form the text holds."""
    if _PERCENT.search(text, 0, MAX_RUN_CHARS):
        yield "percent-encoding", unquote_plus(text[:MAX_RUN_CHARS])
    if _ENTITY.search(text):
        yield "HTML entities", html.unescape(text[:MAX_RUN_CHARS])
    if _UNICODE_ESCAPE.search(text):
        yield (
            "unicode escapes",
            _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group()[2:], 16)), text[:MAX_RUN_CHARS]),
        )
    for run in _HEX_RUN.finditer(text):
        decoded = _from_hex(run.group()[:MAX_RUN_CHARS])
        if decoded is not None:
            yield "hex", decoded
    for run in _BASE64_RUN.finditer(text):
        decoded = _from_base64(run.group()[:MAX_RUN_CHARS])
        if decoded is not None:
            yield "base64", decoded


# --- scanning a call -------------------------------------------------------------------------


@dataclass
class _Scan:
    """One call's scan, within its budget of characters and decoded runs."""

    chars_left: int = MAX_CALL_CHARS
    runs_left: int = MAX_DECODED_RUNS
    found: list[InjectionSignal] = field(default_factory=list)

    def text(self, text: str, where: str, encodings: tuple[str, ...] = ()) -> bool:
        """Scan one string (and what it hides); True when a signal was found."""
        for part in _parts(text):
            part = part[: max(self.chars_left, 0)]
            if not part:
                return False
            self.chars_left -= len(part)
            if self._plain(part, where, encodings) or self._hidden(part, where, encodings):
                return True
        return False

    def _plain(self, text: str, where: str, encodings: tuple[str, ...]) -> bool:
        normal = normalise(text)
        hit = _match(normal)
        if hit is None:
            leet = _leet_reading(normal, set(_WORD.findall(normal)))
            hit = _match(leet) if leet is not None else None
            encodings = (*encodings, "digits for letters") if hit is not None else encodings
        if hit is not None:
            self.found.append(_signal(hit, where, encodings))
        return hit is not None

    def _hidden(self, text: str, where: str, encodings: tuple[str, ...]) -> bool:
        if len(encodings) >= DECODE_DEPTH:
            return False
        for encoding, decoded in _decoded(text):
            if self.runs_left <= 0:
                return False
            self.runs_left -= 1
            if decoded != text and self.text(decoded, where, (*encodings, encoding)):
                return True
        return False


def _parts(text: str) -> tuple[str, ...]:
    """The stretches of a string that are read: all of it, or its head and its tail."""
    if len(text) <= MAX_STRING_HEAD + MAX_STRING_TAIL:
        return (text,)
    return text[:MAX_STRING_HEAD], text[-MAX_STRING_TAIL:]


def _signal(hit: tuple[str, str], where: str, encodings: tuple[str, ...]) -> InjectionSignal:
    signal, matched = hit
    excerpt = " ".join(matched.split())[:EXCERPT_CHARS]
    return InjectionSignal(signal=signal, where=where, excerpt=excerpt, encodings=encodings)


def _strings(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """(where, text) for every string in the parameters, keys included."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, bytes):
        yield where, value.decode("utf-8", "replace")
    elif isinstance(value, dict):
        for key, item in value.items():
            inner = f"{where}.{key}" if where else str(key)
            yield inner, str(key)
            yield from _strings(item, inner)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _strings(item, f"{where}[{index}]")


def find_injection(params: Any) -> InjectionSignal | None:
    """The first injection signal in the parameters, or None when they read clean."""
    scan = _Scan()
    for where, text in _strings(params):
        if scan.chars_left <= 0:
            break
        if scan.text(text, where):
            return scan.found[0]
    return None


def injection_risk(params: Any) -> bool:
    """Whether any string in the parameters (keys included) reads like a prompt injection."""
    return find_injection(params) is not None
