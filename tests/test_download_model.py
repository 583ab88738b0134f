"""`rmeval download-model` against a Hugging Face Hub stand-in on 127.0.0.1, and the offline load after it."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from rmeval.registry import ModelResources, ModelSpec
from rmeval.scoring.download import ignore_patterns

REPO_ID = "rmeval-test/tiny-rm"
GATED_ID = "rmeval-test/gated-rm"
COMMIT_V1 = "1" * 40
COMMIT_MAIN = "2" * 40


@dataclass
class FakeHub:
    """A repository with two commits (tag v1 and main) and a gated repository."""

    files: dict[str, dict[str, bytes]]  # commit -> {path: bytes}
    refs: dict[str, str]  # branch/tag -> commit
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)  # (method, path, Authorization)
    url: str = ""


def _hub_handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _reply(self, status: int, body: bytes, headers: dict[str, str], send_body: bool) -> None:
            self.send_response(status)
            for name, value in {**headers, "Content-Length": str(len(body))}.items():
                self.send_header(name, value)
            self.end_headers()
            if send_body:
                self.wfile.write(body)

        def _json(self, document: object, send_body: bool) -> None:
            self._reply(200, json.dumps(document).encode(), {"Content-Type": "application/json"}, send_body)

        def _handle(self, send_body: bool) -> None:
            path = unquote(urlparse(self.path).path)
            hub.requests.append((self.command, path, self.headers.get("Authorization")))
            if GATED_ID in path and self.headers.get("Authorization") != "Bearer hf_granted":
                self._reply(403, b'{"error": "gated"}', {"X-Error-Code": "GatedRepo",
                                                           "X-Error-Message": "Access to this model is restricted"},
                            send_body)
                return
            for prefix in (f"/api/models/{REPO_ID}/", f"/api/models/{GATED_ID}/"):
                if path.startswith(prefix):
                    kind, _, revision = path[len(prefix):].partition("/")
                    commit = hub.refs.get(revision, revision)
                    if commit not in hub.files:
                        self._reply(404, b"{}", {"X-Error-Code": "RevisionNotFound"}, send_body)
                    elif kind == "revision":
                        siblings = [{"rfilename": name} for name in hub.files[commit]]
                        self._json({"id": REPO_ID, "sha": commit, "siblings": siblings}, send_body)
                    else:  # tree listing
                        self._json([{"type": "file", "path": name, "size": len(data),
                                     "oid": hashlib.sha1(data).hexdigest()}
                                    for name, data in hub.files[commit].items()], send_body)
                    return
            if "/resolve/" in path:
                _, _, rest = path.partition("/resolve/")
                revision, _, name = rest.partition("/")
                commit = hub.refs.get(revision, revision)
                data = hub.files.get(commit, {}).get(name)
                if data is None:
                    self._reply(404, b"", {"X-Error-Code": "EntryNotFound"}, send_body)
                else:
                    self._reply(200, data, {"X-Repo-Commit": commit,
                                            "ETag": f'"{hashlib.sha1(data).hexdigest()}"'}, send_body)
                return
            self._reply(404, b"", {"X-Error-Code": "RepoNotFound"}, send_body)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._handle(send_body=True)

        def do_HEAD(self) -> None:  # noqa: N802
            self._handle(send_body=False)

    return Handler


@pytest.fixture
def fake_hub(tiny_model_dir: Path) -> Iterator[FakeHub]:
    real = {item.name: item.read_bytes() for item in tiny_model_dir.iterdir() if item.is_file()}
    assert any(name.endswith(".safetensors") for name in real)
    # main also carries formats a download must skip when safetensors exist.
    main = {**real, "pytorch_model.bin": b"not a real checkpoint", "onnx/model.onnx": b"onnx"}
    v1 = {**real, "README.md": b"v1\n"}
    hub = FakeHub(files={COMMIT_MAIN: main, COMMIT_V1: v1}, refs={"main": COMMIT_MAIN, "v1": COMMIT_V1})
    server = ThreadingHTTPServer(("127.0.0.1", 0), _hub_handler(hub))
    hub.url = f"http://127.0.0.1:{server.server_port}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()


def _env(hub_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    return {**env, "HF_ENDPOINT": hub_url, **extra}


def _download(spec: ModelSpec, out: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "rmeval", "download-model", "--spec", spec.to_json(), "--out", str(out), *extra]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def test_ignore_patterns_skip_duplicate_weights_only_when_safetensors_exist() -> None:
    assert "*.bin" in ignore_patterns(["config.json", "model.safetensors", "pytorch_model.bin"])
    assert "*.bin" not in ignore_patterns(["config.json", "pytorch_model.bin"])
    assert "original/*" in ignore_patterns(["config.json", "pytorch_model.bin"])


@pytest.mark.slow(reason="a fresh interpreter: HF_HUB_OFFLINE is read when huggingface_hub is imported")
def test_download_then_load_offline(fake_hub: FakeHub, tmp_path: Path) -> None:
    hf_home = tmp_path / "hf"
    spec = ModelSpec(name="tiny", path=REPO_ID, revision=None, resources=ModelResources(gpu=0))
    marker_path = tmp_path / "results" / "models" / "tiny.downloaded.json"
    result = _download(spec, marker_path, _env(fake_hub.url, HF_TOKEN="hf_from_env"), "--hf-home", str(hf_home))
    assert result.returncode == 0, result.stderr
    marker = json.loads(marker_path.read_text())
    assert marker["source"] == "hub" and marker["commit"] == COMMIT_MAIN
    assert marker["hf_home"] == str(hf_home.resolve())
    assert "pytorch_model.bin" not in marker["files"] and "onnx/model.onnx" not in marker["files"]
    assert "config.json" in marker["files"] and any(f.endswith(".safetensors") for f in marker["files"])
    snapshot = hf_home / "hub" / "models--rmeval-test--tiny-rm" / "snapshots" / COMMIT_MAIN
    assert Path(marker["snapshot_dir"]) == snapshot
    assert (hf_home / "hub" / "models--rmeval-test--tiny-rm" / "refs" / "main").read_text() == COMMIT_MAIN
    # The token came from the environment and was sent to the hub.
    assert {auth for _, path, auth in fake_hub.requests if REPO_ID in path} == {"Bearer hf_from_env"}
    # A compute node: offline, no endpoint that answers; the model and the commit come from the cache alone.
    load = (
        "import json, sys\n"
        "from transformers import AutoModelForSequenceClassification, AutoTokenizer\n"
        "from rmeval.models.hf import resolve_commit\n"
        "from rmeval.registry import ModelSpec\n"
        f"model = AutoModelForSequenceClassification.from_pretrained({REPO_ID!r})\n"
        f"tokenizer = AutoTokenizer.from_pretrained({REPO_ID!r})\n"
        f"print(json.dumps({{'labels': model.config.num_labels, 'commit': resolve_commit(ModelSpec(name='t', path={REPO_ID!r}))}}))\n"
    )
    offline_env = _env("http://127.0.0.1:9", HF_HOME=str(hf_home), HF_HUB_OFFLINE="1")
    loaded = subprocess.run([sys.executable, "-c", load], capture_output=True, text=True, env=offline_env, timeout=180)
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout.strip().splitlines()[-1]) == {"labels": 1, "commit": COMMIT_MAIN}


def test_pinned_revision_is_fetched_and_recorded(fake_hub: FakeHub, tmp_path: Path) -> None:
    hf_home = tmp_path / "hf"
    spec = ModelSpec(name="tiny", path=REPO_ID, revision="v1")
    marker_path = tmp_path / "tiny.downloaded.json"
    result = _download(spec, marker_path, _env(fake_hub.url, HF_HOME=str(hf_home)))
    assert result.returncode == 0, result.stderr
    marker = json.loads(marker_path.read_text())
    assert marker["commit"] == COMMIT_V1 and marker["requested_revision"] == "v1"
    assert "README.md" in marker["files"]
    assert (hf_home / "hub" / "models--rmeval-test--tiny-rm" / "refs" / "v1").read_text() == COMMIT_V1
    # Without a token none is sent (nothing is read from the config or the command line).
    assert {auth for _, path, auth in fake_hub.requests if REPO_ID in path} == {None}


def test_gated_model_without_token_says_how_to_fix(fake_hub: FakeHub, tmp_path: Path) -> None:
    spec = ModelSpec(name="gated", path=GATED_ID)
    result = _download(spec, tmp_path / "m.json", _env(fake_hub.url, HF_HOME=str(tmp_path / "hf")))
    assert result.returncode == 2
    assert "is gated" in result.stderr and "HF_TOKEN" in result.stderr and GATED_ID in result.stderr
    assert not (tmp_path / "m.json").exists()


def test_unknown_revision_and_unreachable_hub_are_user_errors(fake_hub: FakeHub, tmp_path: Path) -> None:
    bad_revision = _download(ModelSpec(name="tiny", path=REPO_ID, revision="v9"), tmp_path / "a.json",
                             _env(fake_hub.url, HF_HOME=str(tmp_path / "hf")))
    assert bad_revision.returncode == 2 and "revision 'v9' not found" in bad_revision.stderr
    unreachable = _download(ModelSpec(name="tiny", path=REPO_ID), tmp_path / "b.json",
                            _env("http://127.0.0.1:9", HF_HOME=str(tmp_path / "hf")))
    assert unreachable.returncode == 2 and "download failed" in unreachable.stderr
    offline = _download(ModelSpec(name="tiny", path=REPO_ID), tmp_path / "c.json",
                        _env(fake_hub.url, HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1"))
    assert offline.returncode == 2 and "HF_HUB_OFFLINE" in offline.stderr


def test_local_folder_and_api_models_need_no_download(tiny_model_dir: Path, tmp_path: Path) -> None:
    env = _env("http://127.0.0.1:9")  # any hub request would fail
    local = _download(ModelSpec(name="tiny", path=str(tiny_model_dir)), tmp_path / "local.json", env)
    assert local.returncode == 0, local.stderr
    assert json.loads((tmp_path / "local.json").read_text())["source"] == "local-dir"
    api = _download(ModelSpec(name="nemo", path="nvidia/nemotron-4-340b-reward", adapter="nemotron-api",
                              options={"base_url": "https://integrate.api.nvidia.com/v1"}), tmp_path / "api.json", env)
    assert api.returncode == 0, api.stderr
    assert json.loads((tmp_path / "api.json").read_text())["source"] == "api"
    missing = _download(ModelSpec(name="gone", path=str(tmp_path / "nope")), tmp_path / "gone.json", env)
    assert missing.returncode == 2 and "not a model folder" in missing.stderr


RESOLVE = (  # `rmeval run`'s model resolution of one --model, in a fresh interpreter (HF_HOME, HF_ENDPOINT)
    "import json, sys\n"
    "from rmeval.errors import RmevalError\n"
    "from rmeval.run_command.models import HubAccess, Machine, ModelArg, Registry, resolve_model\n"
    "from rmeval.run_outputs.context import REPOSITORY\n"
    "registry = Registry.load(REPOSITORY / 'config' / 'models.yaml')\n"
    "try:\n"
    "    print(json.dumps(resolve_model(ModelArg(sys.argv[1]), registry, Machine(0), HubAccess()).entry))\n"
    "except RmevalError as error:\n"
    "    print(error)\n"
)


@pytest.mark.slow(reason="a fresh interpreter: HF_HOME and HF_ENDPOINT are read when huggingface_hub is imported")
def test_rmeval_run_reads_a_hub_models_config_json_from_the_hub_then_from_the_cache(fake_hub: FakeHub,
                                                                                   tmp_path: Path) -> None:
    hf_home = str(tmp_path / "hf")

    def resolve(repo_id: str, env: dict[str, str]) -> str:
        result = subprocess.run([sys.executable, "-c", RESOLVE, repo_id], capture_output=True, text=True, env=env,
                                timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip().splitlines()[-1]

    expected = {"name": "tiny-rm", "path": REPO_ID, "adapter": "sequence-classification", "dtype": "float32",
                "max_length": 2048, "resources": {"gpu": 0}}
    assert json.loads(resolve(REPO_ID, _env(fake_hub.url, HF_HOME=hf_home))) == expected
    fetched = [path for method, path, _ in fake_hub.requests if method == "GET" and "/resolve/" in path]
    assert fetched == [f"/{REPO_ID}/resolve/main/config.json"]  # one small file, no weights
    # Offline now: the cached config.json answers.
    offline = _env("http://127.0.0.1:9", HF_HOME=hf_home, HF_HUB_OFFLINE="1")
    assert json.loads(resolve(REPO_ID, offline)) == expected
    gated = resolve(GATED_ID, _env(fake_hub.url, HF_HOME=hf_home))
    assert gated.startswith(f"--model {GATED_ID}: cannot read its config.json from the Hugging Face hub (")
