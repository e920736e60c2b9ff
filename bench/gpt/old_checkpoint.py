"""Writes a checkpoint of prepare/checkpoint.h ("GPTCKPT2") in the format
train.cpp wrote itself before issue 13 ("GPTCKPT1": the sizes, then the
values in the same order), so that the old `build/train --eval` scores the
very weights the new evaluator scored.
    python3 old_checkpoint.py NEW.bin OLD.bin
"""
import struct
import sys

src, dst = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
assert data[:8] == b"GPTCKPT2", f"{src} is not a GPTCKPT2 checkpoint"
sizes = data[8:28]
(n,) = struct.unpack_from("<I", data, 28)
at = 32
for _ in range(n):
    (length,) = struct.unpack_from("<I", data, at)
    at += 4 + length + 8
open(dst, "wb").write(b"GPTCKPT1" + sizes + data[at:])
