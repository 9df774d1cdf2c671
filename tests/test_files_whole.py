"""Files written whole (issue 58 item 5): every file the tool writes goes through ``fileio.write_whole`` (a
temporary file beside the output, fsync, os.replace), so a command killed while it writes leaves the old file or the
new one, never a torn one, and two writers of one output never interleave.

The kill tests run each writing command in a subprocess whose writer is stopped by SIGKILL half-way through the
first chunk of the chosen output (the temporary file holds part of the new bytes when the process dies): the output
must still hold its old bytes, and the half-written temporary file must be there (the kill did come mid-stream)."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from perfmodel import fileio
from perfmodel.cli.main import main
from perfmodel.errors import SpecError

ROOT = Path(__file__).resolve().parent.parent
OLD = b"old,content\n1,2\n"

KILLER = textwrap.dedent('''
    import fnmatch, json, os, signal, sys
    from pathlib import Path
    import perfmodel.fileio as fileio
    kill_dir, kill_name, setup, argv = json.loads(sys.argv[1])
    real_open = open

    class Killed:
        """A temporary file whose first write stops half-way: the first half written and on disk, then SIGKILL."""
        def __init__(self, f):
            self.f = f
        def write(self, b):
            self.f.write(b[: max(1, len(b) // 2)])
            self.f.flush()
            os.fsync(self.f.fileno())
            os.kill(os.getpid(), signal.SIGKILL)
        def __getattr__(self, name):
            return getattr(self.f, name)
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            return self.f.__exit__(*exc)

    def killing_open(fd, mode="r", *a, **k):
        f = real_open(fd, mode, *a, **k)
        if isinstance(fd, int):
            tmp = Path(os.readlink(f"/proc/self/fd/{fd}"))
            if str(tmp.parent) == kill_dir and fnmatch.fnmatch(tmp.name, "." + kill_name + ".*" + fileio.TEMP_SUFFIX):
                return Killed(f)
        return f

    fileio.open = killing_open
    exec(setup)
    from perfmodel.cli.main import main
    sys.exit(main(argv))
''')


def _kill_mid_write(argv: list[str], target: Path, setup: str = "", name: str | None = None,
                    timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``perfmodel ARGV`` in a subprocess killed half-way through writing a file of ``target``'s directory whose
    name matches ``name`` (a glob; default ``target``'s name)."""
    import json
    spec = json.dumps([str(target.parent.resolve()), name or target.name, setup, argv])
    env = {**os.environ, "PERFMODEL_JOBS": "1", "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-c", KILLER, spec], cwd=ROOT, env=env, capture_output=True,
                          timeout=timeout, check=False)


def _assert_killed_mid_write(proc: subprocess.CompletedProcess, d: Path, name: str) -> None:
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    parts = list(d.glob(f".{name}.*{fileio.TEMP_SUFFIX}"))
    assert len(parts) == 1 and parts[0].stat().st_size > 0, "the kill did not come while a file was being written"


# ------------------------------------------------------------------ the writer itself
def test_write_whole_replaces_the_file_and_keeps_its_permission_bits(tmp_path):
    p = tmp_path / "a" / "b.csv"
    fileio.write_whole(p, "x,y\n1,2\n")                       # the missing parent is created
    assert p.read_bytes() == b"x,y\n1,2\n"
    assert stat.S_IMODE(p.stat().st_mode) == fileio._new_file_mode()
    p.chmod(0o640)
    ino = p.stat().st_ino
    big = bytes(range(256)) * (3 * fileio.WRITE_CHUNK // 256 + 7)      # several chunks
    fileio.write_whole(p, big)
    assert p.read_bytes() == big and p.stat().st_ino != ino          # a new file renamed over the old one
    assert stat.S_IMODE(p.stat().st_mode) == 0o640
    fileio.write_whole(p, iter([b"a", b"b", b"c"]))
    assert p.read_bytes() == b"abc"
    assert [q.name for q in tmp_path.rglob("*")] == ["a", "b.csv"]  # no temporary file left


def test_write_whole_through_a_link_rewrites_the_file_it_names(tmp_path):
    real = tmp_path / "real.csv"
    real.write_bytes(OLD)
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    fileio.write_whole(link, "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"


class _Interrupted(Exception):
    pass


def _raising_open(after: int):
    """``open`` for fileio whose files raise once ``after`` bytes were written (a writer stopped mid-stream)."""
    real_open = open

    class Raising:
        def __init__(self, f):
            self.f, self.n = f, 0

        def write(self, b):
            room = after - self.n
            self.f.write(b[:max(room, 0)])
            self.n += len(b)
            if self.n > after:
                self.f.flush()
                raise _Interrupted

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self.f.__exit__(*exc)

    return lambda *a, **k: Raising(real_open(*a, **k))


@pytest.mark.parametrize("after", [0, 10, fileio.WRITE_CHUNK + 10])
def test_a_writer_stopped_mid_stream_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch, after):
    p = tmp_path / "out.csv"
    p.write_bytes(OLD)
    monkeypatch.setattr(fileio, "open", _raising_open(after), raising=False)
    with pytest.raises(_Interrupted):
        fileio.write_whole(p, b"n" * (2 * fileio.WRITE_CHUNK))
    assert p.read_bytes() == OLD
    assert [q.name for q in tmp_path.iterdir()] == ["out.csv"]


def test_a_file_that_cannot_be_written_is_a_one_line_error(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    (d / "x.csv").write_bytes(OLD)
    d.chmod(0o500)
    try:
        if os.access(d, os.W_OK):
            pytest.skip("running as a user that writes into read-only directories")
        with pytest.raises(SpecError, match=r"x\.csv: cannot write file") as e:
            fileio.write_whole(d / "x.csv", "new\n")
        assert "\n" not in str(e.value)
        assert (d / "x.csv").read_bytes() == OLD
    finally:
        d.chmod(0o700)


def test_a_command_stopped_mid_write_keeps_the_old_csv(tmp_path, monkeypatch, capsys):
    """In process: ``frontier --csv`` whose writer raises mid-stream exits without touching the old CSV."""
    csv = tmp_path / "f.csv"
    csv.write_bytes(OLD)
    monkeypatch.setattr(fileio, "open", _raising_open(100), raising=False)
    with pytest.raises(_Interrupted):
        main(["frontier", "--hardware", "h100-sxm", "--model", "llama-3.1-70b", "--batch-points", "8",
              "--spec-tokens", "0", "--csv", str(csv)])
    assert csv.read_bytes() == OLD and [q.name for q in tmp_path.iterdir()] == ["f.csv"]


WRITER = textwrap.dedent('''
    import sys
    from perfmodel.fileio import write_whole
    path, byte, n = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3])
    for _ in range(n):
        write_whole(path, byte * 3_000_000)
''')


def test_two_writers_of_one_output_never_interleave(tmp_path):
    """Two processes rewrite one 3 MB file over and over with different bytes; every read finds one writer's file
    whole (all 'a' or all 'b', full length)."""
    p = tmp_path / "shared.csv"
    p.write_bytes(b"a" * 3_000_000)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(p), c, "15"]) for c in "ab"]
    seen = set()
    while any(q.poll() is None for q in procs):
        data = p.read_bytes()
        assert len(data) == 3_000_000 and data.count(data[:1]) == len(data)
        seen.add(data[:1])
    assert all(q.returncode == 0 for q in procs)
    data = p.read_bytes()
    assert data in (b"a" * 3_000_000, b"b" * 3_000_000)
    assert not list(tmp_path.glob(f"*{fileio.TEMP_SUFFIX}"))


# ------------------------------------------------------------------ each writing command killed mid-write
FAST = ["--model", "llama-3.1-70b", "--batch-points", "8", "--spec-tokens", "0"]


@pytest.mark.parametrize("argv", [
    ["frontier", "--hardware", "h100-sxm", *FAST, "--csv", "{out}"],
    ["plan", "--model", "llama-3.3-70b", "--system", "b200:vllm", "--rate", "20", "--ttft-ms", "1500",
     "--spec-tokens", "0", "--batch-points", "12", "--max-gpus", "8", "--no-disaggregation", "--csv", "{out}"],
    ["models", "import", str(ROOT / "tests" / "fixtures" / "hf_configs" / "deepseek-v3.json"), "-o", "{out}"],
], ids=["frontier-csv", "plan-csv", "models-import"])
def test_a_command_killed_mid_write_leaves_the_old_file(tmp_path, argv):
    out = tmp_path / ("model.yaml" if argv[0] == "models" else "out.csv")
    out.write_bytes(OLD)
    proc = _kill_mid_write([a.format(out=out) for a in argv], out)
    _assert_killed_mid_write(proc, tmp_path, out.name)
    assert out.read_bytes() == OLD


def test_calibrate_in_place_killed_mid_write_leaves_every_profile_as_it_was(tmp_path):
    """``calibrate --in-place`` on a copy of the catalog (its profiles/ copied, the rest linked), killed while it
    writes the first profile: every profile file is byte for byte the old one."""
    root = tmp_path / "root"
    root.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in ("profiles", ".git") and (entry.is_dir() or entry.suffix in (".toml", ".md")):
            (root / entry.name).symlink_to(entry)
    shutil.copytree(ROOT / "profiles", root / "profiles")
    before = {p.name: p.read_bytes() for p in (root / "profiles").glob("*.yaml")}
    lines = (ROOT / "data/shared/inferencex-silicon.csv").read_text().splitlines()
    data = tmp_path / "slice.csv"
    data.write_text("\n".join([lines[0], *[ln for ln in lines[1:] if ",vllm," in ln][::40][:4]]) + "\n")
    setup = (f"import perfmodel.catalog as c, perfmodel.validation.calibrate as cal; from pathlib import Path\n"
             f"c.builtin_root = lambda: Path({str(root)!r}); cal.MAX_NFEV = 3")
    proc = _kill_mid_write(["calibrate", "--data", str(data), "--in-place"], root / "profiles" / "x.yaml", setup,
                           name="*.yaml")
    _assert_killed_mid_write(proc, root / "profiles", "*.yaml")
    assert {p.name: p.read_bytes() for p in (root / "profiles").glob("*.yaml")} == before


def test_report_killed_mid_write_leaves_every_old_file(tmp_path):
    """``perfmodel report --out DIR`` over an earlier report, killed while it writes its first file: every file of
    the earlier report is still there, byte for byte (stale files are removed only once the new report is whole)."""
    out = tmp_path / "reports"
    (out / "claims").mkdir(parents=True)
    old = {"claims.md": b"# old report\n", "claims/claims.csv": OLD, "claims/frontiers.csv": OLD,
           "claims/frontier-kimi-k3.png": b"\x89PNG old", "claims/gone.json": b"{}"}
    for name, b in old.items():
        (out / name).write_bytes(b)
    proc = _kill_mid_write(["report", "--out", str(out)], out / "claims" / "x", name="*")
    _assert_killed_mid_write(proc, out / "claims", "*")
    assert {name: (out / name).read_bytes() for name in old} == old
