"""Chat sessions: messages, context selection, the turn and tool loop, the events they record."""
