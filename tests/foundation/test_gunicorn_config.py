"""config/gunicorn.py, the settings the Dockerfile's command and the fault tests start gunicorn with: every name is
a gunicorn setting, keep-alive outlasts the TLS proxy's idle upstream connections, and the environment overrides."""

from __future__ import annotations

import runpy

import pytest
from gunicorn.config import Config

from tests.processes import ROOT

PATH = ROOT / "config" / "gunicorn.py"
# Caddy keeps idle upstream connections 2 minutes; gunicorn must not close one first (a request on it gets nothing).
PROXY_IDLE_SECONDS = 120


def _settings() -> dict[str, object]:
    # What gunicorn takes from a config file: its names bound to plain values (not imports or helpers).
    found = runpy.run_path(str(PATH)).items()
    return {k: v for k, v in found if not k.startswith("_") and isinstance(v, int | str)}


def test_every_name_is_a_gunicorn_setting_and_keep_alive_outlasts_the_proxy(monkeypatch):
    for name in ("WEB_CONCURRENCY", "WEB_THREADS", "GUNICORN_KEEPALIVE", "GUNICORN_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    settings = _settings()
    config = Config()
    for name, value in settings.items():
        assert name in config.settings, f"{name} is not a gunicorn setting"
        config.set(name, value)
    assert config.worker_class_str == "gthread"
    assert config.keepalive > PROXY_IDLE_SECONDS
    assert config.timeout >= 60


def test_the_environment_overrides_and_a_bad_value_is_named(monkeypatch):
    monkeypatch.setenv("WEB_CONCURRENCY", "3")
    monkeypatch.setenv("GUNICORN_KEEPALIVE", "200")
    settings = _settings()
    assert (settings["workers"], settings["keepalive"]) == (3, 200)
    monkeypatch.setenv("WEB_THREADS", "many")
    with pytest.raises(SystemExit, match="WEB_THREADS"):
        _settings()
