"""The MCP gateway: an MCP server that offers an agent's tools to any MCP client, every call
decided by the agent's supervision and recorded like a chat (docs/gateway.md)."""
