"""The chat view of one session: its conversation, timeline, trust bar and controller."""
