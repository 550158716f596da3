"""A stdio MCP server gets the safe variables and its own `env`, never Foundry's secrets."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from foundry.agent.models import McpServerConfig, StdioServer
from foundry.llm.base import ProviderError
from foundry.llm.openai_compat import OpenAICompatibleProvider
from foundry.llm.registry import ModelChoice, open_provider
from foundry.tools import ServerStatus, ToolHost

ENV_SERVER = '''
import json
import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("test-env")


@server.tool()
def env() -> str:
    """The server's whole environment, as JSON."""
    return json.dumps(dict(os.environ))


if __name__ == "__main__":
    server.run()
'''

SECRETS = {
    "FOUNDRY_API_TOKEN": "foundry-api-token-0123456789",
    "OPENAI_API_KEY": "sk-test-openai-key",
    "FOUNDRY_DATABASE_URL": "postgresql://foundry:db-password@localhost/foundry",
}

StartServer = Callable[..., Awaitable[ToolHost]]


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    return SECRETS


@pytest.fixture
async def start_server(tmp_path: Path) -> AsyncIterator[StartServer]:
    """Starts the environment-reporting server with the given `env`, in the agent folder."""
    (tmp_path / "env_server.py").write_text(ENV_SERVER)
    hosts: list[ToolHost] = []

    async def start(env: dict[str, str] | None = None) -> ToolHost:
        raw = {"probe": {"command": "python", "args": ["env_server.py"], "env": env or {}}}
        servers = TypeAdapter(dict[str, McpServerConfig]).validate_python(raw)
        host = ToolHost(servers, tmp_path)
        hosts.append(host)
        await host.start()
        return host

    yield start
    for host in hosts:
        await host.aclose()


async def server_environment(host: ToolHost) -> dict[str, str]:
    result = await host.call("probe.env", {})
    assert not result.is_error, result.text
    environment: dict[str, str] = json.loads(result.text)
    return environment


def status_of(host: ToolHost) -> ServerStatus:
    return host.statuses()[0]


async def test_a_server_never_sees_foundrys_token_database_url_or_provider_keys(
    start_server: StartServer, secrets: dict[str, str]
) -> None:
    environment = await server_environment(await start_server())

    assert set(secrets) & set(environment) == set()
    assert not set(secrets.values()) & set(environment.values())


async def test_a_server_keeps_path_so_npx_and_uvx_are_found(
    start_server: StartServer, secrets: dict[str, str]
) -> None:
    environment = await server_environment(await start_server())

    assert environment["PATH"] == os.environ["PATH"]


async def test_a_server_gets_a_secret_its_env_names(
    start_server: StartServer, secrets: dict[str, str]
) -> None:
    host = await start_server({"MY_KEY": "env://OPENAI_API_KEY", "MODE": "plain"})
    environment = await server_environment(host)

    assert environment["MY_KEY"] == secrets["OPENAI_API_KEY"]
    assert environment["MODE"] == "plain"
    assert "OPENAI_API_KEY" not in environment
    assert "FOUNDRY_API_TOKEN" not in environment


async def test_a_dotenv_beside_the_agent_serves_both_servers_and_providers(
    start_server: StartServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FOUNDRY_TEST_DOTENV_KEY", raising=False)
    monkeypatch.delenv("FOUNDRY_TEST_DOTENV_URL", raising=False)
    (tmp_path / ".env").write_text(
        "# secrets of this agent\n"
        "export FOUNDRY_TEST_DOTENV_KEY='from-dotenv'\n"
        "FOUNDRY_TEST_DOTENV_URL=http://127.0.0.1:9/v1\n"
    )

    environment = await server_environment(
        await start_server({"MY_KEY": "env://FOUNDRY_TEST_DOTENV_KEY"})
    )
    providers = {"local": {"BASE_URL": "env://FOUNDRY_TEST_DOTENV_URL"}}
    provider = open_provider(ModelChoice.parse("local:model"), providers, tmp_path)
    await provider.aclose()

    assert environment["MY_KEY"] == "from-dotenv"
    assert "FOUNDRY_TEST_DOTENV_URL" not in environment
    assert isinstance(provider, OpenAICompatibleProvider)
    assert provider.base_url == "http://127.0.0.1:9/v1"


async def test_the_environment_wins_over_the_dotenv(
    start_server: StartServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOUNDRY_TEST_DOTENV_KEY", "from-environment")
    (tmp_path / ".env").write_text("FOUNDRY_TEST_DOTENV_KEY=from-dotenv\n")

    environment = await server_environment(
        await start_server({"MY_KEY": "env://FOUNDRY_TEST_DOTENV_KEY"})
    )

    assert environment["MY_KEY"] == "from-environment"


async def test_a_missing_env_variable_fails_the_server_in_plain_words(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FOUNDRY_TEST_UNSET_VARIABLE", raising=False)
    host = await start_server({"API_KEY": "env://FOUNDRY_TEST_UNSET_VARIABLE"})

    status = status_of(host)
    assert status.state == "failed"
    assert status.error == (
        "env.API_KEY asks for the environment variable FOUNDRY_TEST_UNSET_VARIABLE, which is"
        " not set: export it or add it to .env beside the agent"
    )


def test_a_missing_provider_secret_is_a_provider_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FOUNDRY_TEST_UNSET_VARIABLE", raising=False)
    providers = {"openai": {"API_KEY": "env://FOUNDRY_TEST_UNSET_VARIABLE"}}

    with pytest.raises(ProviderError, match="env://FOUNDRY_TEST_UNSET_VARIABLE is not set"):
        open_provider(ModelChoice.parse("openai:gpt-4o"), providers, tmp_path)


def test_an_unpackaged_foundry_gives_servers_the_users_library_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from foundry.tools.host import _stdio_parameters

    monkeypatch.delattr(sys, "frozen", raising=False)
    monkeypatch.setenv("LD_LIBRARY_PATH", "/usr/local/lib")
    parameters = _stdio_parameters(StdioServer(command="npx", args=["server"]), tmp_path)

    assert parameters.env is not None
    assert parameters.env["LD_LIBRARY_PATH"] == "/usr/local/lib"
