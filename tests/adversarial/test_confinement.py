"""What a sandboxed bot can reach (issue 8, classes 4, 6 and 9): files outside its own
folder, devices, memory beyond its seat's limit, its neighbours' CPU time, and whether the
process sandbox runs bots wherever Python and the SDK are installed.

Every hostile probe proves that it ran: it reports on purpose, as a fault, what it tried
("DENIED: n of n probes", "HOG: ... CPUs"), and the test requires that report; anything
it managed is reported as "BREACH: ..." (a failure in ``play``)."""

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

import arena
from arena.bots import resolve
from arena.match import run_match
from arena.record import replay
from arena.referee.results import MatchResult
from arena.referee.time_control import TimeControl
from arena.sandbox import cgroups, process

from .conftest import leftovers
from .test_hostile import BOTS, RULES, play


async def play_seats(backend, bots, tmp_path, limits=None, hands=1, **tc):
    """Like ``play``, with every seat's bot given (paths or names in BOTS) and limits."""
    paths = [b if isinstance(b, Path) else BOTS / f"{b}.py" for b in bots]
    control = TimeControl(**{"move_ms": 1500, "bank_ms": 1000, "startup_ms": 30000, **tc})
    rules = RULES.replace(match_end_value=hands)
    record = tmp_path / "match.jsonl"
    folders = set(Path(tempfile.gettempdir()).glob("arena-*"))
    result = await run_match(
        [resolve(str(p)) for p in paths], rules, 3, control, backend, record, limits=limits
    )
    assert result.match_over and result.sandbox == backend
    time.sleep(0.3)
    for p in set(paths):
        assert leftovers(result.match_id, p.name) == []
    assert set(Path(tempfile.gettempdir()).glob("arena-*")) <= folders
    for seat in result.seats:
        for fault in seat.faults:
            assert "BREACH" not in fault.detail, fault.detail
    return result, record


def details(seat):
    return " | ".join(f.detail for f in seat.faults)


def needs_root_controller(name):
    if name not in cgroups.controllers():
        pytest.skip(process.isolation_note() or f"no {name} control group for the seats")


# --- class 4: files, devices, uid, memory --------------------------------------------------


def match_with(python: Path, bot: Path, cwd: Path, *extra: str) -> MatchResult:
    """``arena match`` of ``bot`` against three good bots, run by another interpreter (a
    venv's) with the process sandbox; the result (its ``--json``, read back), after
    checking the good seats."""
    good = str(BOTS / "good.py")
    env = {**os.environ, "PYTHONPATH": str(Path(arena.__file__).parents[1])}  # arena only
    command = [str(python), "-m", "arena", "match", str(bot), good, good, good]
    proc = subprocess.run(
        [*command, "--hands", "1", "--sandbox", "process", "--json", *extra],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=cwd,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = MatchResult.from_json(json.loads(proc.stdout.splitlines()[-1]))
    for seat in result.seats[1:]:
        assert seat.faults == (), seat
    return result


OUTER_PTH = "tests-venv.pth"


def server_venv(prefix: Path) -> tuple[Path, Path]:
    """A venv at ``prefix`` that can run the arena, as a server's would: it sees the
    packages of the interpreter running the tests (``--system-site-packages`` gives it the
    base interpreter's; when the tests run in a venv of their own — the project installed
    there, not in the base — a ``.pth`` names that venv's site-packages too).  Returns its
    interpreter and its site-packages."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(prefix)],
        check=True,
        timeout=120,
    )
    python = prefix / "bin" / "python"
    purelib = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    if sys.prefix != sys.base_prefix:  # the tests' venv: not the nested venv's base
        import site

        ours = [p for p in site.getsitepackages() if os.path.isdir(p)]
        ours = [p for p in ours if not p.startswith(sys.base_prefix.rstrip("/") + "/")]
        (purelib / OUTER_PTH).write_text("".join(f"{p}\n" for p in ours))
    return python, purelib


async def test_cannot_read_files_outside_its_folder(backend, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (tmp_path / "secret.txt").write_text("planted next to the bot's folder\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "bot.py").write_text("# another contestant's source\n")
    (tmp_path / "arena.db").write_bytes(b"SQLite format 3\0 (planted ladder database)")
    (tmp_path / "match.jsonl").write_text("")  # the live record: the referee writes it here
    targets = [
        str(tmp_path / "secret.txt"),
        str(tmp_path / "other" / "bot.py"),
        str(tmp_path / "arena.db"),
        str(tmp_path / "match.jsonl"),
        str(tmp_path) + "/",
        str(BOTS / "good.py"),  # the other seats' source
        str(Path(arena.__file__).parent / "match.py"),  # the arena's own code
        "/etc/shadow",
    ]
    targets += [p for p in ("/var/lib/docker/", "/var/run/docker.sock") if os.path.exists(p)]
    for t in targets:  # each exists here: a refusal inside means something
        assert os.path.exists(t.rstrip("/") or "/"), t
    bot = mine / "prober.py"
    bot.write_text((BOTS / "prober.py.in").read_text().replace("@TARGETS@", json.dumps(targets)))
    seat, _ = await play(backend, bot, tmp_path, max_strikes=5)
    assert f"DENIED: {len(targets)} of {len(targets)} probes" in details(seat), details(seat)


async def test_cannot_open_devices_and_dev_is_minimal(backend, tmp_path):
    seat, _ = await play(backend, "devices", tmp_path, max_strikes=5)
    said = details(seat)
    assert re.search(r"DENIED: (\d+) of \1 probes", said), said
    if backend == "process":
        assert "extra /dev: -;" in said and "no nodev: -;" in said and "no nosuid: -" in said


async def test_process_seat_runs_as_its_own_unprivileged_uid(tmp_path):
    """As root, every seat is a fresh uid of its own (not root, not shared) on the host."""
    if os.geteuid() != 0 or process.confinement_problem():
        pytest.skip("not root (the bot keeps the user's uid) or no bubblewrap")
    from arena.sandbox.launch import UID_BASE

    bot = tmp_path / f"uidcheck_{os.getpid()}.py"
    shutil.copy(BOTS / "honest_cpu.py", bot)  # slow enough to be seen
    seen: dict[int, int] = {}
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            ps = subprocess.run(
                ["pgrep", "-af", f"bigtwo.run .*{bot.name}"], capture_output=True, text=True
            )
            for line in ps.stdout.splitlines():
                if "launch.py" in line:  # the launcher, root until it drops and execs bwrap
                    continue
                try:
                    status = Path(f"/proc/{int(line.split()[0])}/status").read_text()
                except OSError:
                    continue
                uid = int(re.search(r"^Uid:\s+(\d+)", status, re.M).group(1))
                seen[uid] = seen.get(uid, 0) + 1
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        await play_seats("process", [bot] * 4, tmp_path)
    finally:
        stop.set()
        thread.join(5)
    # each bot is seen hundreds of times; a single sighting is a process caught at an exec
    # boundary or a reused pid (once in a CI run: uid 0, seen once), not a seat
    seats = {uid for uid, times in seen.items() if times >= 5}
    assert len(seats) == 4 and all(uid >= UID_BASE for uid in seats), seen


@pytest.mark.parametrize("memory_mb", [512])
async def test_process_seat_memory_is_capped_for_all_its_processes(tmp_path, memory_mb):
    """Four helpers of 40% of the limit each (under the per-process limit, 160% together):
    the seat is killed for its memory, the other seats and the machine carry on."""
    needs_root_controller("memory")
    bot = tmp_path / "seat_memory.py"
    share = memory_mb * 2 // 5
    bot.write_text((BOTS / "seat_memory.py.in").read_text().replace("@MB@", str(share)))
    result, _ = await play_seats(
        "process", [bot, "good", "good", "good"], tmp_path, limits={"memory_mb": memory_mb}
    )
    seat = result.seats[0]
    assert seat.forfeit and "seat's memory limit" in details(seat), details(seat)
    for other in result.seats[1:]:  # and play_seats found no helper left behind
        assert other.faults == () and not other.forfeit, other


# --- class 6: a neighbour's CPU ------------------------------------------------------------


@pytest.mark.serial
@pytest.mark.slow  # three bots thinking 250 ms of CPU a move, for a whole hand
async def test_cpu_hog_neighbour_costs_honest_bots_no_move(backend, tmp_path):
    """A neighbour running 24 busy threads; three honest bots that think 250 ms of CPU per
    move, at 1 s per move and no bank: not one honest move may time out."""
    shared = "cpu" in cgroups.controllers() or (os.geteuid() != 0 and process._autogroup())
    if backend == "process" and not shared:
        pytest.skip(process.isolation_note() or "no CPU share per seat here")
    result, record = await play_seats(
        backend,
        ["cpu_hog", "honest_cpu", "honest_cpu", "honest_cpu"],
        tmp_path,
        move_ms=1000,
        bank_ms=0,
        max_strikes=10,
    )
    hog = result.seats[0]
    said = re.search(r"HOG: 24 threads held ([\d.]+) CPUs", details(hog))
    assert said, details(hog)
    slowest = max(
        e["ms"]
        for e in map(json.loads, record.read_text().splitlines())
        if e.get("type") == "turn" and e["seat"] != 0 and not e.get("by_referee")
    )
    print(f"\n{backend}: hog held {said.group(1)} CPUs; slowest honest move {slowest:.0f} ms")
    # the neighbour really was busy all hand: on a quiet machine it holds about 1.5 CPUs;
    # beside another arena's ladder, 0.2–0.3 — one seat's fair share among the machine's
    # busy control groups, which is the sandbox doing its job (0.5 failed there)
    assert float(said.group(1)) >= 0.15
    for seat in result.seats[1:]:
        assert seat.faults == () and not seat.forfeit, seat
    assert replay(record).complete


# --- class 9: wherever Python and the SDK are ----------------------------------------------


def test_process_sandbox_runs_bots_from_a_venv_and_sdk_under_tmp(own_tmp):
    """A newcomer's layout: a venv under /tmp and the SDK in a checkout under /tmp (the
    sandbox's private /tmp must not hide them)."""
    if process.confinement_problem():
        pytest.skip(process.confinement_problem())
    tmp_path = own_tmp  # the test's own temporary root: in the machine's temporary folder
    assert str(tmp_path).startswith(tempfile.gettempdir())
    venv = tmp_path / "venv"
    python, purelib = server_venv(venv)
    checkout = tmp_path / "checkout" / "sdk"
    import bigtwo

    shutil.copytree(
        Path(bigtwo.__file__).parent,
        checkout / "bigtwo",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    Path(purelib, "bigtwo-checkout.pth").write_text(str(checkout) + "\n")
    where = tmp_path / "where.py"
    where.write_text(
        "import sys\n\nimport bigtwo\nfrom bigtwo import Bot\n\n\n"
        "class Where(Bot):\n"
        "    told = False\n\n"
        "    def act(self, observation):\n"
        "        if not self.told:\n"
        "            self.told = True\n"
        "            raise RuntimeError(f'SDK {bigtwo.__file__} PREFIX {sys.prefix}')\n"
        "        return observation.legal_moves[0]\n"
    )
    result = match_with(python, where, tmp_path)
    said = details(result.seats[0])
    assert f"SDK {checkout}/bigtwo/__init__.py PREFIX {venv}" in said, said


def test_process_sandbox_shows_a_servers_venv_only_what_the_interpreter_needs(tmp_path):
    """Issue 8, class 4: the arena installed in a venv at PREFIX (like /srv/arena) that also
    holds the ladder database, the contestants' bots and a checkout of the SDK (installed by
    a ``.pth``) next to a database of its own.  A bot sees of PREFIX only the interpreter's
    symlink, ``pyvenv.cfg``, the ``.pth`` and the SDK's package folder; of the site-packages
    it inherits, only the packages it imports."""
    if process.confinement_problem():
        pytest.skip(process.confinement_problem())
    prefix = tmp_path / "srv" / "arena"
    python, purelib = server_venv(prefix)
    (prefix / "arena.db").write_bytes(b"SQLite format 3\0 deal_key=planted-ladder-secret")
    (prefix / "bots" / "other").mkdir(parents=True)
    (prefix / "bots" / "other" / "bot.py").write_text("# another contestant's source\n")
    checkout = prefix / "src" / "bigtwo-arena"
    import bigtwo

    shutil.copytree(
        Path(bigtwo.__file__).parent,
        checkout / "sdk" / "bigtwo",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (checkout / "arena.db").write_bytes(b"SQLite format 3\0 (a developer's database)")
    (checkout / "sdk" / "notes.txt").write_text("next to the SDK's package\n")
    (purelib / "bigtwo-checkout.pth").write_text(str(checkout / "sdk") + "\n")
    (purelib / "unrelated").mkdir()
    (purelib / "unrelated" / "__init__.py").write_text("SECRET = 'not imported by bots'\n")
    targets = [
        str(prefix / "arena.db"),
        str(prefix / "bots" / "other" / "bot.py"),
        str(prefix / "bots") + "/",
        str(checkout / "arena.db"),
        str(checkout / "sdk" / "notes.txt"),
        str(purelib / "unrelated" / "__init__.py"),
    ]
    mine = prefix / "bots" / "mine"
    mine.mkdir()
    bot = mine / "bot.py"
    bot.write_text(
        (BOTS / "prefix_prober.py.in").read_text().replace("@TARGETS@", json.dumps(targets))
    )
    result = match_with(python, bot, tmp_path, "--max-strikes", "5")
    # each report without where it was raised (" at bot.py:N in act: …", for the author)
    said = [f.detail.split(f" at {bot}:")[0] for f in result.seats[0].faults]
    assert len(said) == 4 and "BREACH" not in " ".join(said), said
    assert f"DENIED: {len(targets)} of {len(targets)} probes" in said[0], said
    # it ran in the venv, with the checkout's SDK
    assert said[1].endswith(f"PREFIX {prefix} SDK src/bigtwo-arena/sdk/bigtwo/__init__.py")
    seen = json.loads(said[2].split("SEEN ", 1)[1])
    lib = purelib.relative_to(prefix)
    allowed = {"bin", "lib", "lib64", "pyvenv.cfg", "src"}
    allowed |= {str(p) for p in lib.parents if str(p) != "."} | {str(lib)}
    allowed |= {str(lib / "bigtwo-checkout.pth"), "src/bigtwo-arena", "src/bigtwo-arena/sdk"}
    allowed |= {str(lib / OUTER_PTH)}  # the tests' own venv, when they run in one
    allowed.add("src/bigtwo-arena/sdk/bigtwo/")
    assert {"pyvenv.cfg", str(lib / "bigtwo-checkout.pth")} <= set(seen), seen
    assert "src/bigtwo-arena/sdk/bigtwo/" in seen, seen
    extra = {p for p in seen if p not in allowed and not p.startswith("bin/python")}
    assert extra == set(), seen
    sites = json.loads(said[3].split("SITES ", 1)[1])
    assert set(sites.get(str(purelib), [])) - {OUTER_PTH} == {"bigtwo-checkout.pth"}, sites
    inherited = {n for folder, names in sites.items() if folder != str(purelib) for n in names}
    assert {"grpc", "google"} <= inherited, sites  # what the bot imports, and no more:
    assert not inherited & {"pytest", "_pytest", "unrelated", "pip"}, sites


async def test_process_sandbox_error_reaches_the_user_verbatim(tmp_path, monkeypatch):
    """When bubblewrap refuses (here: a root symlink that leaves no place for the socket
    folder), its own words are the seat's fault, not a bare exit code."""
    if process.confinement_problem():
        pytest.skip(process.confinement_problem())
    real = process.runtime

    def broken(executable):
        run = real(executable)
        return {**run, "symlinks": [*run["symlinks"], ["nowhere", "/run"]]}

    monkeypatch.setattr(process, "runtime", broken)
    result, _ = await play_seats("process", ["good"] * 4, tmp_path, startup_ms=10000)
    for seat in result.seats:
        assert "bwrap: Can't mkdir /run/arena: No such file or directory" in details(seat), seat


async def test_without_confinement_only_the_arenas_own_sample_bots_run(tmp_path):
    """Where bubblewrap cannot confine (not installed, not Linux), a stranger's bot is
    refused before anything starts, with the fix; the sample bots shipped with the arena
    still run, so the default ladder works on a fresh machine."""
    from arena.bots import resolve
    from arena.sandbox.base import SandboxUnavailable
    from arena.sandbox.process import ProcessSandbox

    box = ProcessSandbox()
    box.problem = "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    await box.prepare([resolve("random"), resolve("heuristic")])
    stranger = tmp_path / "mine.py"
    stranger.write_text("from bigtwo import Bot\n")
    with pytest.raises(SandboxUnavailable, match=r"cannot confine bot 'mine'.*bubblewrap"):
        await box.prepare([resolve("random"), resolve(str(stranger))])


# --- issue 21: host-wide counters and host paths (a covert channel between seats) ----------


def _bot_pids(pattern: str) -> list[int]:
    ps = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return [int(p) for p in ps.stdout.split()]


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _touch(size: int) -> bytearray:
    """``size`` bytes of this process's memory, every page written (really resident)."""
    block = bytearray(size)
    for i in range(0, size, 4096):
        block[i] = 1
    return block


async def test_process_bot_reads_no_host_wide_counter_and_no_host_path(tmp_path):
    """Issue 21: a neighbour decoded another seat's cards through ``MemFree``.  A bot
    samples every host-wide counter it might read (/proc's memory, CPU, load and pressure
    files, sysfs, the ``sysinfo`` call); between its two samples this test allocates and
    touches 500 MB.  Nothing it reads may have moved, nothing host-wide may be readable at
    all, and no host path may appear in any mount table it can read."""
    if process.confinement_problem():
        pytest.skip(process.confinement_problem())
    import tempfile as tf

    mine = tmp_path / "mine"
    mine.mkdir()
    host = [str(tmp_path), str(Path(tf.gettempdir()) / "arena-"), sys.prefix, sys.base_prefix]
    host += [str(Path(arena.__file__).parents[1]), str(Path(tf.gettempdir()))]
    home = os.path.expanduser("~")
    host += [home] if home not in ("/", "") else []
    host = sorted({h for h in host if h not in ("/", "/tmp", "/usr")})
    name = f"counters_{os.getpid()}_{time.monotonic_ns() % 10**6}"
    bot = mine / f"{name}.py"
    bot.write_text((BOTS / "host_counters.py.in").read_text().replace("@HOST@", json.dumps(host)))
    done = threading.Event()  # the match is over
    held: list[bytearray] = []

    def neighbour() -> bool:
        """At the bot's first sample, allocate and touch 500 MB (held until the match is
        over) and signal the bot to sample again; whether that moment came."""
        deadline = time.monotonic() + 60
        while not done.is_set() and time.monotonic() < deadline:
            for pid in _bot_pids(f"bigtwo.run .*{name}"):
                if _comm(pid) == "ctr-wait":
                    held.append(_touch(500 << 20))  # the host (a neighbour) allocates
                    os.kill(pid, signal.SIGUSR1)
                    until = time.monotonic() + 20
                    while _comm(pid) == "ctr-wait" and time.monotonic() < until:
                        time.sleep(0.05)
                    return True
            time.sleep(0.05)
        return False

    watcher = asyncio.ensure_future(asyncio.to_thread(neighbour))  # beside the match
    try:
        result, _ = await play_seats(
            "process", [bot, "good", "good", "good"], tmp_path, max_strikes=5
        )
    finally:
        done.set()
        signalled = await watcher
    held.clear()
    said = details(result.seats[0])
    assert signalled and "COUNTERS signalled: yes" in said, said
    counters = re.search(r"COUNTERS [^|]*", said).group(0)
    mounts = re.search(r"MOUNTS [^|]*", said).group(0)
    print(f"\n{counters}\n{mounts}")
    assert "varied: -;" in counters, counters  # no counter moved with the host's memory
    assert "readable: -;" in counters, counters  # nor is anything host-wide readable
    assert "sysinfo: refused" in counters, counters
    assert "MOUNTS host paths: -;" in mounts, mounts
    assert "sys: -" in mounts, mounts
