"""Foundry's sessions, gateway calls and tasks as OpenTelemetry spans (docs/telemetry.md)."""
