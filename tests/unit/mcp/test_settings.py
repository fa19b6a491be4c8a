"""The mcpServers entries: the ecosystem's shape read, and each bad entry one line naming its file and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xmltools import Config
from xmltools.errors import ConfigError
from xmltools.mcp.settings import DEFAULT_TIMEOUT, read_servers


def test_the_ecosystem_s_shape_is_read_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "time": {
                        "command": "uvx",
                        "args": ["mcp-server-time"],
                        "env": {"TZ": "UTC"},
                        "timeout": 5,
                    },
                    "web": {"url": "http://127.0.0.1:3001/mcp", "autoApprove": ["echo"]},
                    "off": {"command": "npx", "disabled": True},
                }
            }
        )
    )
    time, web = read_servers(path)
    assert (time.name, time.command, time.args, dict(time.env), time.timeout) == (
        "time",
        "uvx",
        ("mcp-server-time",),
        {"TZ": "UTC"},
        5.0,
    )
    assert time.transport == "stdio" and web.transport == "http" and web.auto_approve == {"echo"}
    assert web.timeout == DEFAULT_TIMEOUT
    assert [s.name for s in Config(mcp_servers=path).mcp_settings()] == ["time", "web"]
    assert [s.name for s in Config(mcp_servers={"a": {"command": "x"}}).mcp_settings()] == ["a"]


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({"command": "x", "args": "--flag"}, "mcp.json: mcpServers.s.args: a list of strings"),
        ({"command": "x", "timeout": 0}, "mcp.json: mcpServers.s.timeout: a number of seconds above 0"),
        ({"command": "x", "url": "http://h/"}, "mcp.json: mcpServers.s: give command"),
        ({}, "mcp.json: mcpServers.s: give command"),
        ({"url": "ftp://h/"}, "mcp.json: mcpServers.s.url: an http:// or https:// address"),
        ({"command": "x", "comand": "y"}, "mcp.json: mcpServers.s.comand: not a field"),
        ({"command": "x", "env": {"A": 1}}, "mcp.json: mcpServers.s.env: an object of strings"),
        ({"command": "x", "disabled": "yes"}, "mcp.json: mcpServers.s.disabled: true or false"),
    ],
)
def test_a_bad_entry_is_one_line_naming_the_file_and_the_field(
    tmp_path: Path, entry: dict[str, object], said: str
) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"s": entry}}))
    with pytest.raises(ConfigError) as e:
        read_servers(path)
    assert str(e.value).startswith(f"{path.parent}/{said}") and "\n" not in str(e.value)


def test_a_file_that_is_missing_or_not_json_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"mcp\.json: cannot be read"):
        read_servers(tmp_path / "mcp.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ConfigError, match=r"bad\.json: is not JSON"):
        read_servers(tmp_path / "bad.json")


def test_without_servers_nothing_is_read_and_no_sdk_is_needed() -> None:
    assert read_servers(None) == () and Config().mcp_settings() == ()
