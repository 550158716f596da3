"""Times as the app shows them: in the user's time zone, the date only when it is not today."""

from __future__ import annotations

from datetime import datetime


def local_time(moment: datetime | None) -> str:
    if moment is None:
        return "—"
    local = moment.astimezone()
    today = datetime.now().astimezone().date()
    return local.strftime("%H:%M:%S" if local.date() == today else "%b %d %H:%M")
