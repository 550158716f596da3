"""The approvals HTTP API on loopback: agent-mesh's supervisor protocol over Foundry's store."""

from foundry.api.app import create_app
from foundry.api.server import ApiServer, ApiServerError
from foundry.api.token import TokenError, load_or_create_token

__all__ = ["ApiServer", "ApiServerError", "TokenError", "create_app", "load_or_create_token"]
