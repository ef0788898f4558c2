"""Generated code for the wire contract ``proto/bigtwo/v1/referee.proto``.

Do not edit: regenerate with ``python tools/gen_proto.py`` (CI checks for drift)."""
