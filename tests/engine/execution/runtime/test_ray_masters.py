"""The ray masters against a head started as users start one, `ray start --head`, on loopback:
`ray` joins it (instead of starting a second Ray), `ray://host:port` reaches it through Ray Client.
Each client runs in a fresh interpreter, as a user's program would."""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")

REPO = Path(__file__).resolve().parents[4]
RAY = shutil.which("ray", path=str(Path(sys.executable).parent))


def _without_ray_settings() -> dict[str, str]:
    """This process's environment less the RAY_* variables an earlier test's ray.init may have left (such as
    RAY_ADDRESS of a cluster since stopped), which the head and its clients would otherwise follow."""
    return {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def head(tmp_path_factory):
    """`ray start --head --block` on loopback with Ray Client's server; stopped (process group) after.

    It runs with token authentication, as Ray's docs set it up, on a token of its own: whether
    `ray start` turns token auth on by itself depends on a token left in ~/.ray by earlier Ray runs.
    """
    if RAY is None:
        pytest.skip("the ray command is not installed next to this interpreter")
    port, client_port = _free_port(), _free_port()
    token = tmp_path_factory.mktemp("ray-auth") / "auth_token"
    token.write_text(secrets.token_hex(32))
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}
    env = dict(_without_ray_settings(), RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", **auth)
    proc = subprocess.Popen(
        [RAY, "start", "--head", "--block", f"--port={port}", "--node-ip-address=127.0.0.1", "--num-cpus=3",
         f"--ray-client-server-port={client_port}", "--include-dashboard=false", "--disable-usage-stats"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 90
    while not (_answers(port) and _answers(client_port)):
        if proc.poll() is not None or time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"ray start --head did not come up on 127.0.0.1:{port} (exit {proc.poll()})")
        time.sleep(0.5)
    yield {"address": f"127.0.0.1:{port}", "client": f"ray://127.0.0.1:{client_port}", "auth": auth}
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def _run(master: str, env: dict[str, str]) -> list[str]:
    """A small job on `master` in a fresh interpreter; its printed lines."""
    program = textwrap.dedent(f"""
        import ray
        import quiver
        from quiver import functions as F

        spark = quiver.Session.builder.master({master!r}).getOrCreate()
        rows = (spark.range(0, 1000, numPartitions=3).groupBy((F.col("id") % 4).alias("k")).count()
                .orderBy("k").collect())
        print("rows", [(r.k, r["count"]) for r in rows])
        print("cpus", spark.sparkContext.defaultParallelism)
        spark.stop()
        print("still up", ray.is_initialized())
    """)
    for _attempt in range(2):
        out = subprocess.run([sys.executable, "-c", program], env={**_without_ray_settings(), **env}, cwd=REPO,
                             capture_output=True, text=True, timeout=240)
        # Ray Client's proxy now and then loses the per-client server it forks ("Initialization failure from
        # server", its own log empty); a second connection gets a fresh one, as a user retrying would
        if out.returncode == 0 or "Initialization failure from server" not in out.stderr:
            break
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.splitlines()


def test_ray_master_joins_the_head_this_machine_started(head):
    lines = _run("ray", head["auth"])  # found through Ray's record of the head `ray start` began
    assert "rows [(0, 250), (1, 250), (2, 250), (3, 250)]" in lines
    assert "cpus 3" in lines  # the head's 3 CPUs, not a new Ray with this machine's 2 cores
    assert _answers(int(head["address"].rpartition(":")[2]))  # leaving, the session did not stop the head
    assert "still up False" in lines


def test_ray_client_address_runs_the_job_through_ray_client(head):
    lines = _run(head["client"], head["auth"])  # an explicit address gets the token only with RAY_AUTH_MODE
    assert "rows [(0, 250), (1, 250), (2, 250), (3, 250)]" in lines
    assert "cpus 3" in lines
