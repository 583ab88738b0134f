"""Secrets: a fake API key goes through the Nemotron adapter in a real `snakemake` run against a loopback
server that echoes the key back in its error bodies; the key must reach the server and appear nowhere else:
not under results/, not in .snakemake/log, not in any other file of the run, not on stdout or stderr."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from drill_helpers import drill_config, synthetic_papers, write_snapshot
from test_models_nemotron import MODEL, FakeNemotron
from test_models_nemotron import Handler as NemotronHandler
from workflow_helpers import run_snakemake_process, workflow_argv

SECRET = "nvapi-DRILL-5c1e7a0b9d4f2e86-DO-NOT-LEAK"


class LeakyGateway(NemotronHandler):
    """Answers every third conversation's first request with a 500 and then a 429, both echoing the
    Authorization header back in the body, as careless gateways do; then answers normally."""

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers["Content-Length"])
        raw = self.rfile.read(length)
        request = json.loads(raw)
        prompt = request["messages"][0]["content"]
        state = self.server
        with state.lock:
            state.leaky_attempts[prompt] = state.leaky_attempts.get(prompt, 0) + 1
            attempt = state.leaky_attempts[prompt]
            state.authorizations.add(self.headers.get("Authorization", ""))
        if sum(prompt.encode()) % 3 == 0 and attempt <= 2:
            status = 500 if attempt == 1 else 429
            body = json.dumps({"error": f"upstream rejected credentials {self.headers.get('Authorization')}"}).encode()
            self.send_response(status)
            if status == 429:
                self.send_header("Retry-After", "0.1")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        # Hand the already-read body to the recorded-format handler.
        import io

        self.rfile = io.BytesIO(raw)
        return super().do_POST()


@pytest.fixture()
def gateway():
    server = FakeNemotron()
    server.RequestHandlerClass = LeakyGateway
    server.leaky_attempts = {}
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _nemotron_entry(name: str, server: FakeNemotron, cache: Path, weights: dict | None = None) -> dict:
    options = {"base_url": server.base_url, "model": MODEL, "api_key_env": "RMEVAL_DRILL_SECRET_KEY",
               "max_concurrency": 2, "timeout_s": 10, "backoff_s": 0.05, "cache_dir": str(cache)}
    if weights:
        options["weights"] = weights
    return {"name": name, "path": MODEL, "adapter": "nemotron-api", "resources": {"gpu": 0, "mem_mb": 1000},
            "options": options}


def test_the_api_key_never_leaves_the_authorization_header(gateway: FakeNemotron, tmp_path: Path, drill) -> None:
    drill("secret API key", "fault",
          "fake key in $RMEVAL_DRILL_SECRET_KEY through a full `snakemake` run; the server echoes it in 500/429 bodies",
          "the key reaches the server; grep finds it in no file under the run (results/, .snakemake/log, logs, "
          "cache) nor on stdout/stderr")
    workdir = tmp_path / "run"
    snapshot = write_snapshot(synthetic_papers(8, seed=13), workdir / "inputs" / "snapshot.jsonl")
    cache = workdir / "api-cache"
    models = [_nemotron_entry("nemo-a", gateway, cache),
              _nemotron_entry("nemo-b", gateway, cache, weights={"helpfulness": 1.0, "verbosity": -0.5})]
    configfile = workdir / "config.yaml"
    drill_config(configfile, models, {"source": "snapshot", "snapshot": str(snapshot), "papers_per_group": 6},
                 reference_model="nemo-a")
    env = {**os.environ, "RMEVAL_DRILL_SECRET_KEY": SECRET}
    result = run_snakemake_process(workflow_argv(workdir, configfile, "--cores", "2"), env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-6000:]
    assert gateway.authorizations == {f"Bearer {SECRET}"}, "the key must reach the server"
    assert any(n > 1 for n in gateway.leaky_attempts.values()), "the leaky error replies were never served"
    assert (workdir / "results" / "tables" / "table1_anova.csv").exists()
    assert list((workdir / ".snakemake" / "log").glob("*.snakemake.log")), "no .snakemake/log to check"

    searched = [p for p in workdir.rglob("*") if p.is_file()]
    leaks = [str(p.relative_to(workdir)) for p in searched if SECRET.encode() in p.read_bytes()]
    assert len([p for p in searched if "results" in p.parts]) > 10
    assert not leaks, f"the key was written to {leaks}"
    assert SECRET not in result.stdout and SECRET not in result.stderr
    retried = "".join(p.read_text() for p in (workdir / "logs").rglob("*.log"))
    assert "HTTP 500" in retried and "HTTP 429" in retried, "the rule logs must show the retried errors"
