"""The engine: its own asyncio loop on a background thread, and the event bus."""
