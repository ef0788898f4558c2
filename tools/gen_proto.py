"""Regenerate the committed Python code for the wire contract.

    python tools/gen_proto.py           # writes sdk/bigtwo/v1/referee_pb2*.py
    python tools/gen_proto.py --check   # exit 1 when the committed code differs (drift)

Generated code is committed so that a bot author needs no protoc; CI checks it for drift.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROTO_ROOT = ROOT / "proto"
PROTO = PROTO_ROOT / "bigtwo" / "v1" / "referee.proto"
OUT = ROOT / "sdk"
GENERATED = ["referee_pb2.py", "referee_pb2.pyi", "referee_pb2_grpc.py"]


def generate(out_dir: Path) -> None:
    from grpc_tools import protoc

    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        str(PROTO.relative_to(PROTO_ROOT)),
    ]
    import os

    cwd = os.getcwd()
    os.chdir(PROTO_ROOT)
    try:
        if protoc.main(args) != 0:
            raise SystemExit("protoc failed")
    finally:
        os.chdir(cwd)


def drift() -> list[str]:
    """Names of generated files that differ from what protoc makes now."""
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        fresh = Path(tmp) / "bigtwo" / "v1"
        committed = OUT / "bigtwo" / "v1"
        return [
            name
            for name in GENERATED
            if not (committed / name).exists()
            or (committed / name).read_bytes() != (fresh / name).read_bytes()
        ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report drift")
    args = parser.parse_args()
    if args.check:
        bad = drift()
        for name in bad:
            print(f"drift: sdk/bigtwo/v1/{name} differs from {PROTO.relative_to(ROOT)}")
        return 1 if bad else 0
    generate(OUT)
    print("generated:", ", ".join(f"sdk/bigtwo/v1/{n}" for n in GENERATED))
    return 0


if __name__ == "__main__":
    sys.exit(main())
