#!/usr/bin/env python3
"""Writes the seed corpus of tests/fuzz/pgoutput_fuzz.cc from the captures.

    tests/unit/data/pgoutput/make_fuzz_seeds.py

Each capture NAME.txt (but big_row: its 2 MB message would set libFuzzer's
input size) becomes tests/fuzz/corpus/pgoutput/NAME: its messages in order,
each framed by a 2-byte big-endian length. Each message on its own becomes
NAME.N too (one frame), so that single messages seed the parser alone. capture.sh runs
this after every capture.
"""
import pathlib

here = pathlib.Path(__file__).resolve().parent
corpus = here.parents[2] / "fuzz" / "corpus" / "pgoutput"
corpus.mkdir(parents=True, exist_ok=True)
for old in corpus.iterdir():
    old.unlink()
for capture in sorted(here.glob("*.txt")):
    if capture.stem == "big_row":
        continue
    framed = b""
    for n, line in enumerate(capture.read_text().splitlines()):
        data = bytes.fromhex(line.split("\t")[2][2:])
        assert len(data) < 65536, capture
        frame = len(data).to_bytes(2, "big") + data
        framed += frame
        (corpus / f"{capture.stem}.{n}").write_bytes(frame)
    (corpus / capture.stem).write_bytes(framed)
