#!/usr/bin/env python3
"""Writes the GGUF fuzz seed corpus: small valid files and one file for each kind of malformation the reader names."""
import os
import struct
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def u32(v): return struct.pack("<I", v)
def u64(v): return struct.pack("<Q", v)
def s(text): b = text.encode(); return u64(len(b)) + b
def header(tensors, kvs, version=3): return b"GGUF" + u32(version) + u64(tensors) + u64(kvs)
def kv_u32(k, v): return s(k) + u32(4) + u32(v)
def tensor(name, dims, type_, offset): return s(name) + u32(len(dims)) + b"".join(u64(d) for d in dims) + u32(type_) + u64(offset)
def pad(b, a=32): return b + b"\0" * ((a - len(b) % a) % a)


def valid(types):
    """A file with one 32-element row tensor per ggml type in `types`, each given a byte pattern."""
    sizes = {0: 128, 1: 64, 30: 64, 2: 18, 3: 20, 6: 22, 7: 24, 8: 34, 39: 17, 10: 84, 11: 110, 12: 144, 13: 176, 14: 210}
    elems = {10: 256, 11: 256, 12: 256, 13: 256, 14: 256}
    meta = kv_u32("general.alignment", 32) + s("general.architecture") + u32(8) + s("llama")
    meta += s("a.nested") + u32(9) + u32(9) + u64(2) + u32(4) + u64(2) + u32(1) + u32(2) + u32(8) + u64(1) + s("x")
    meta += s("a.f32") + u32(6) + struct.pack("<f", 1e-5) + s("a.bool") + u32(7) + b"\x01"
    infos, offset = b"", 0
    for i, t in enumerate(types):
        infos += tensor(f"t{i}", [elems.get(t, 32)], t, offset)
        offset += sizes[t] + (32 - sizes[t] % 32) % 32
    data = b""
    for i, t in enumerate(types):
        data = pad(data + bytes((j * 37 + i) & 0xFF for j in range(sizes[t])))
    return pad(header(len(types), 5) + meta + infos) + data


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = {
        "valid_scalar": valid([0, 1, 30]),
        "valid_legacy": valid([2, 3, 6, 7, 8, 39]),
        "valid_kquants": valid([10, 11, 12, 13, 14]),
        "valid_empty": header(0, 0),
        "valid_v2": header(0, 1, 2) + kv_u32("k", 1),
        "bad_magic": b"GGML" + u32(3) + u64(0) + u64(0),
        "version_1": header(0, 0, 1),
        "version_big_endian": header(0, 0, 0x03000000),
        "truncated_header": b"GGUF" + u32(3) + u64(0),
        "truncated_data": valid([0, 8])[:-40],
        "key_too_long": header(0, 1) + u64(1 << 40) + b"key" + b"\0" * 40,
        "string_too_long": header(0, 1) + s("k") + u32(8) + u64(1000) + b"abc",
        "array_too_long": header(0, 1) + s("k") + u32(9) + u32(4) + u64(10**12) + u32(1),
        "array_nested_deep": header(0, 1) + s("k") + u32(9) + (u32(9) + u64(1)) * 40 + u32(0) + u64(0),
        "value_type_unknown": header(0, 1) + s("k") + u32(13) + u32(0),
        "bool_two": header(0, 1) + s("k") + u32(7) + b"\x02",
        "duplicate_key": header(0, 2) + kv_u32("k", 1) + kv_u32("k", 2),
        "alignment_48": header(0, 1) + kv_u32("general.alignment", 48),
        "alignment_u64": header(0, 1) + s("general.alignment") + u32(10) + u64(32),
        "too_many_kvs": header(0, 1 << 60),
        "too_many_tensors": header(1 << 50, 0),
        "tensor_type_unknown": pad(header(1, 0) + tensor("w", [32], 4, 0)) + b"\0" * 64,
        "tensor_dims_overflow": pad(header(1, 0) + tensor("w", [1 << 32, 1 << 32], 0, 0)),
        "tensor_dim_negative": pad(header(1, 0) + tensor("w", [(1 << 64) - 1], 0, 0)),
        "tensor_five_dims": pad(header(1, 0) + tensor("w", [1] * 5, 0, 0)),
        "tensor_partial_block": pad(header(1, 0) + tensor("w", [33], 8, 0)) + b"\0" * 64,
        "tensor_unaligned": pad(header(1, 0) + tensor("w", [4], 0, 16)) + b"\0" * 64,
        "tensor_outside": pad(header(1, 0) + tensor("w", [32], 0, 64)) + b"\0" * 128,
        "tensor_far_outside": pad(header(1, 0) + tensor("w", [32], 0, 1 << 62)) + b"\0" * 128,
        "tensor_overlap": pad(header(2, 0) + tensor("a", [64], 0, 0) + tensor("b", [8], 0, 224)) + b"\0" * 256,
        "tensor_duplicate": pad(header(2, 0) + tensor("a", [8], 0, 0) + tensor("a", [8], 0, 32)) + b"\0" * 64,
        "tensor_name_too_long": header(1, 0) + u64(1 << 40) + b"\0" * 40,
    }
    for name, data in seeds.items():
        with open(os.path.join(OUT, name + ".gguf"), "wb") as f:
            f.write(data)
    print(f"wrote {len(seeds)} seeds to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
