"""Injection phrases in Chinese and Russian, matched over readings of their own.

Chinese has no spaces between words and Russian is read without mapping its letters to Latin
look-alikes (as the Latin-script phrases' normalising does), so both have patterns of their own:
the same intents as the Latin-script phrases (override earlier instructions, a new task or
role, send secrets, hide from the user, approve the call, act covertly).
"""

# ruff: noqa: RUF001, RUF003 (this file is written in Chinese and Russian)

from __future__ import annotations

import re

_ZH_ORDERS = (
    "(?:指令|指示|说明|說明|规则|規則|提示|命令|要求|设定|設定|约束|約束|限制|任务|任務|内容|內容"
    "|消息|信息|话|話)"
)
_ZH_SECRETS = (
    "(?:密钥|密鑰|密码|密碼|口令|令牌|凭证|憑證|凭据|憑據|私钥|私鑰|秘钥|token|api|cookie|聊天记录"
    "|聊天記錄|对话记录|對話記錄)"
)
_ZH_USER = "(?:用户|用戶|使用者|用家|人类|人類|主人)"
_ZH_SEND = (
    "发送|發送|发给|發給|发到|發到|上传|上傳|转发|轉發|泄露|洩露|传给|傳給|寄给|寄給|交给|交給"
)
_ZH_PHRASES = {
    "override-instructions": [
        "(?:忽略|忽视|忽視|无视|無視|不要理会|不要理會|不用理会|别管|別管|忘记|忘記|忘掉|抛开|拋開"
        "|丢弃|丟棄|放弃|放棄|不再遵守|停止遵守|不必遵守|无需遵守|無需遵守)"
        "(?:掉)?(?:你|您)?(?:之前|以前|先前|此前|上面|上述|前面|以上|原来|原來|原先|原有|所有|全部"
        "|一切|刚才|剛才|早先|系统|系統)[^。\uff01\uff1f.!?\n]{0,12}?" + _ZH_ORDERS,
        "(?:之前|以前|先前|上面|上述|以上|原来|原來|所有)的?"
        + _ZH_ORDERS
        + "(?:都)?(?:已经|已經)?(?:作废|作廢|无效|無效|不再适用|不再適用|失效)",
    ],
    "new-task": [
        "(?:你|您)(?:的)?(?:新|新的|真正的?|实际的?|實際的?|现在的|現在的)(?:任务|任務|角色|目标"
        "|目標|使命|指令|身份)",
        "新(?:的)?(?:指令|指示|任务|任務)[:\uff1a]",
        "(?:从现在开始|從現在開始|从现在起|從現在起|从今以后|從今以後|今后|今後)[,\uff0c]?(?:你|您)"
        "(?:只|必须|必須|要|将|將|是|就是|应该|應該)",
        "(?:你|您)(?:现在|現在|从现在起|從現在起|从现在开始|從現在開始)(?:是|扮演|充当|充當|作为|作為"
        "|必须|必須|只能|要)(?!否)",
    ],
    "exfiltration": [
        f"(?:{_ZH_SEND})[^。\uff01\uff1f\n]{{0,20}}?{_ZH_SECRETS}",
        "(?:把|将|將)[^。\uff01\uff1f\n]{0,15}?"
        + _ZH_SECRETS
        + "[^。\uff01\uff1f\n]{0,15}?(?:"
        + _ZH_SEND
        + "|写进|寫進|写入|寫入|贴到|貼到)",
    ],
    "concealment": [
        "(?:不要|别|別|切勿|请勿|請勿|无需|無需|不必|千万不要|千萬不要)[^。\uff01\uff1f\n]{0,8}?"
        "(?:告诉|告訴|通知|提醒|让|讓|透露给?|透露給?|告知)" + _ZH_USER,
        "(?:对|對|向)" + _ZH_USER + "(?:隐瞒|隱瞞|保密)",
        "(?:瞒着|瞞著|不让|不讓|避开|避開)" + _ZH_USER,
    ],
    "approval-demand": [
        "(?:你|您)(?:必须|必須|一定要|务必|務必|应该|應該)(?:批准|同意|允许|允許|放行)",
        "(?:批准|放行)(?:这个|這個|此|该|該)(?:请求|請求|调用|調用|操作)",
        "已(?:经|經)?(?:被)?(?:管理员|管理員)(?:批准|授权|授權)",
    ],
    "tool-instruction": [
        "(?:悄悄|偷偷|秘密|暗中)地?(?:调用|調用|执行|執行|运行|運行|发送|發送|上传|上傳)"
    ],
}

_RU_ORDERS = (
    r"(?:инструкци\w*|указани\w*|правил\w*|команд\w*|установк\w*|директив\w*|ограничени\w*"
    r"|промпт\w*|сообщени\w*)"
)
_RU_EARLIER = (
    r"(?:все|всё|свои|твои|ваши|эти|те|предыдущ\w*|прежн\w*|предшествующ\w*|вышеуказанн\w*"
    r"|вышеизложенн\w*|ранее|данн\w*|полученн\w*|стар\w*|системн\w*|исходн\w*|изначальн\w*"
    r"|перв\w*|прошл\w*)"
)
_RU_IGNORE = (
    r"(?:игнорируй(?:те)?|игнорировать|проигнорируй(?:те)?|забудь(?:те)?|забыть|отбрось(?:те)?"
    r"|не обращай(?:те)? внимания на|не слушай(?:те)?|не следуй(?:те)?|перестань(?:те)? следовать"
    r"|отмени(?:те)?|не выполняй(?:те)?|пренебреги(?:те)?)"
)
_RU_SECRETS = r"(?:ключ\w*|парол\w*|токен\w*|секрет\w*|учетн\w* данн\w*|креды|куки)"
_RU_USER = r"(?:пользовател\w*|человек\w*|юзер\w*|владельц\w*)"
_RU_PHRASES = {
    "override-instructions": [
        rf"\b{_RU_IGNORE}\s+(?:{_RU_EARLIER}\s+){{1,3}}{_RU_ORDERS}",
        rf"\b{_RU_IGNORE}\s+{_RU_ORDERS}\s+(?:выше|ранее|до этого|сверху)",
        r"\bзабудь(?:те)?\s+(?:обо\s+)?вс[её](?:,?\s+что|\s+выше|\s+сказанное|\s+предыдущее|\s+ранее)",
        rf"\b(?:{_RU_EARLIER}\s+)+{_RU_ORDERS}\s+(?:больше не действуют|отменены|недействительны"
        r"|не действуют|утратили силу)",
    ],
    "new-task": [
        r"\b(?:тво[яий]|ваш[аие]?)\s+(?:нов\w+|настоящ\w+|истинн\w+|реальн\w+|единственн\w+"
        r"|секретн\w+)\s+(?:задач\w*|рол\w+|цел\w*|мисси\w+|инструкци\w*)",
        r"\bнов\w+\s+(?:инструкци\w+|указани\w+|задач\w+)\s*:",
        r"\b(?:теперь|отныне|с этого момента)\s+(?:ты|вы)\s+(?:—\s*)?(?:не\s+)?(?:администратор\w*"
        r"|админ\w*|суперпользовател\w*|разработчик\w*|владел\w*|ассистент\w*|бот\w*"
        r"|модель\w*|агент\w*|свободн\w*|неограничен\w*|без ограничений|работаешь на"
        r"|работаете на|подчиняешься|подчиняетесь|служишь|служите|должен|должны|обязан\w*)",
    ],
    "exfiltration": [
        r"(?<!не\s)\b(?:отправь|отправьте|отправить|перешли(?:те)?|переслать|загрузи(?:те)?"
        r"|выгрузи(?:те)?|слей(?:те)?|слить|передай(?:те)?|передать|скинь(?:те)?|вышли(?:те)?"
        rf"|опубликуй(?:те)?)\s+(?:\w+\s+){{0,4}}?{_RU_SECRETS}",
    ],
    "concealment": [
        r"\b(?:не|ничего не)\s+(?:говори|говорите|сообщай|сообщайте|рассказывай|рассказывайте"
        rf"|упоминай|упоминайте)\s+(?:об этом\s+|ничего\s+)?{_RU_USER}",
        rf"\b{_RU_USER}\s+(?:ничего\s+|об этом\s+)?не\s+(?:сообщай|говори|рассказывай)(?:те)?",
        rf"\bскрой(?:те)?\s+(?:это\s+)?от\s+{_RU_USER}",
        rf"\bвтайне от\s+{_RU_USER}",
        rf"\bчтобы\s+{_RU_USER}\s+не\s+(?:узнал|заметил|увидел)",
    ],
    "approval-demand": [
        r"\b(?:ты|вы)\s+(?:должен|должна|должны|обязан\w*)\s+(?:\w+\s+)?(?:одобрить|разрешить"
        r"|пропустить)",
        r"\bодобри(?:те)?\s+(?:этот|это|эту|данн\w+)\s+(?:запрос|вызов|действие|операци\w+)",
        r"\bне\s+(?:отклоняй|блокируй|эскалируй)(?:те)?\b",
    ],
    "role-claim": [
        r"\bкак\s+(?:администратор|владелец|разработчик)(?:\s+системы)?,?\s+я\s+(?:разрешаю"
        r"|одобряю|приказываю|требую)",
    ],
}


def _script_pattern(phrases: dict[str, list[str]]) -> re.Pattern[str]:
    """One pattern for a script's phrases, its groups named after their signals."""
    groups = (
        f"(?P<{signal.replace('-', '_')}>{'|'.join(options)})"
        for signal, options in phrases.items()
    )
    return re.compile("|".join(groups))


_CHINESE = _script_pattern(_ZH_PHRASES)
_RUSSIAN = _script_pattern(_RU_PHRASES)
_HAN = re.compile("[\u4e00-\u9fff]")
_CYRILLIC = re.compile("[\u0400-\u04ff]")
_TO_CYRILLIC = str.maketrans("aeopcyxkmtbhё", "аеорсухкмтвне")
_SPACES = re.compile(r"\s+")


def _script_hit(pattern: re.Pattern[str], text: str) -> tuple[str, str] | None:
    found = pattern.search(text)
    if found is None or found.lastgroup is None:
        return None
    return found.lastgroup.replace("_", "-"), found.group()


def match_scripts(visible: str) -> tuple[str, str] | None:
    """(signal, the text it matched) for a Chinese or Russian phrase in a text whose
    compatibility forms are folded and invisible characters dropped."""
    if _HAN.search(visible):
        hit = _script_hit(_CHINESE, _SPACES.sub("", visible).casefold())
        if hit is not None:
            return hit
    if _CYRILLIC.search(visible):
        # Latin look-alikes read as the Cyrillic letters they pass for (`игнoрируй`, Latin o).
        return _script_hit(_RUSSIAN, visible.casefold().translate(_TO_CYRILLIC))
    return None
