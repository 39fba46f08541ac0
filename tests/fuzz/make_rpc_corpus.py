#!/usr/bin/env python3
"""Writes the RPC fuzz seed corpus (corpus_rpc/): for each RPC, requests that pass and requests each check refuses.

An input is one byte naming the RPC (rpc_fuzz.cpp's Rpc order), then the request in protobuf's wire format, encoded
here by hand from proto/tuning.proto's field numbers (no protobuf module needed)."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_rpc")

# rpc_fuzz.cpp's Rpc enum.
(UPLOAD, SUBMIT, WATCH, LIST, STATUS, RESULTS, BEST, CANCEL, REGISTER, LEASE, HEARTBEAT, REPORT, FETCH, WORKERS, HISTORY,
 COMPARE) = range(16)

# The content digest (XXH3-128) of the fuzz target's checkpoint, "GGUF and some bytes": `lane-tune digest` of it.
DIGEST = "44959fc784054d274ade2dc51524e8f1"


def varint(n):
    n &= (1 << 64) - 1  # negative int64s as their two's complement
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def uint(field, n): return varint(field << 3) + varint(n)
def f64(field, x): return varint(field << 3 | 1) + struct.pack("<d", x)
def blob(field, b): return varint(field << 3 | 2) + varint(len(b)) + b
def text(field, s): return blob(field, s.encode())


def version(major=1): return blob(1, uint(1, major) + uint(2, 0))


V = version()


def result(**o):
    """A Result: valid and verified unless told otherwise."""
    r = text(1, '{"id": 1}') + uint(2, 0) + uint(3, 1)
    r += f64(4, o.get("median_ms", 1.5)) + f64(8, 12.0) + f64(12, 0.0) + f64(13, 1.0)
    r += text(10, o.get("profile", "{}")) + text(20, '{"gpu": "H100"}') + text(26, "{}")
    r += uint(16, o.get("valid", 1)) + uint(25, 1)
    if "reason" in o:
        r += text(17, o["reason"]) + text(18, "race")
    return r


SEEDS = {
    "upload_first": (UPLOAD, V + uint(2, 0) + blob(3, b"GGUF\x03\x00\x00\x00") + uint(4, 8)),
    "upload_not_gguf": (UPLOAD, V + uint(2, 0) + blob(3, b"PK\x03\x04")),
    "upload_out_of_order": (UPLOAD, V + uint(2, 5) + blob(3, b"GGUF")),
    "submit_digest_grid": (SUBMIT, V + text(2, DIGEST) + text(4, "h100") + text(5, "grid")),
    "submit_model_decode": (SUBMIT, V + text(2, DIGEST) + text(4, "h100") + text(4, "a100") + text(5, "model") +
                            uint(6, 3) + uint(8, 7) + text(9, "decode") + blob(10, uint(1, 16) + uint(2, 4))),
    "submit_halving_budget": (SUBMIT, V + text(2, DIGEST) + text(4, "h200") + text(5, "halving") + uint(6, 5) +
                              f64(7, 30.0)),
    "submit_unknown_gpu": (SUBMIT, V + text(2, DIGEST) + text(4, "z999")),
    "submit_gpu_twice": (SUBMIT, V + text(2, DIGEST) + text(4, "h100") + text(4, "h100")),
    "submit_nan_time": (SUBMIT, V + text(2, DIGEST) + text(4, "h100") + f64(7, float("nan"))),
    "submit_bad_digest": (SUBMIT, V + text(2, "../../etc/passwd") + text(4, "h100")),
    "submit_path_outside": (SUBMIT, V + text(3, "/etc/passwd") + text(4, "h100")),
    "submit_path_relative": (SUBMIT, V + text(3, "model.gguf") + text(4, "h100")),
    "submit_empty_workload": (SUBMIT, V + text(2, DIGEST) + text(4, "h100") + blob(10, uint(1, 0))),
    "submit_old_version": (SUBMIT, version(2) + text(2, DIGEST) + text(4, "h100")),
    "submit_no_version": (SUBMIT, text(2, DIGEST) + text(4, "h100")),
    "watch_job": (WATCH, V + uint(2, 1)),
    "watch_missing": (WATCH, V + uint(2, 1 << 40)),
    "list": (LIST, V),
    "status_job": (STATUS, V + uint(2, 1)),
    "status_negative": (STATUS, V + uint(2, -3)),
    "results_page": (RESULTS, V + uint(2, 1) + text(3, "h100") + uint(4, 2) + uint(5, 0)),
    "results_past_end": (RESULTS, V + uint(2, 1) + uint(5, 4000000000)),
    "results_unknown_gpu": (RESULTS, V + uint(2, 1) + text(3, "z999")),
    "best": (BEST, V + uint(2, 1) + text(3, "h100")),
    "cancel_missing": (CANCEL, V + uint(2, 77)),
    "cancel_second": (CANCEL, V + uint(2, 2)),
    "register": (REGISTER, V + text(2, "w2") + text(3, "h100") + text(4, '{"sms": 132}') + text(5, "{}") +
                 text(6, "env")),
    "register_bad_json": (REGISTER, V + text(2, "w3") + text(3, "h100") + text(4, "{not json")),
    "register_unknown_gpu": (REGISTER, V + text(2, "w4") + text(3, "z999")),
    "register_no_name": (REGISTER, V + text(3, "h100")),
    "lease": (LEASE, V + uint(2, 1) + uint(3, 2)),
    "lease_zero": (LEASE, V + uint(2, 1) + uint(3, 0)),
    "lease_too_many": (LEASE, V + uint(2, 1) + uint(3, 100)),
    "lease_unknown_worker": (LEASE, V + uint(2, -5) + uint(3, 1)),
    "lease_wrong_key": (LEASE, V + uint(2, 1) + uint(3, 1) + text(4, "0" * 32)),
    "report_wrong_key": (REPORT, V + uint(2, 1) + uint(3, 2) + uint(4, 2) + blob(5, result()) + text(6, "f" * 32)),
    "heartbeat_wrong_key": (HEARTBEAT, V + uint(2, 1) + uint(3, 1) + text(4, "x")),
    "heartbeat": (HEARTBEAT, V + uint(2, 1) + uint(3, 1) + uint(3, 2) + uint(3, 999)),
    "heartbeat_unknown_worker": (HEARTBEAT, V + uint(2, 42) + uint(3, 1)),
    "report": (REPORT, V + uint(2, 1) + uint(3, 1) + uint(4, 1) + blob(5, result())),
    "report_duplicate": (REPORT, V + uint(2, 1) + uint(3, 1) + uint(4, 1) + blob(5, result(median_ms=0.0001))),
    "report_wrong_lease": (REPORT, V + uint(2, 1) + uint(3, 2) + uint(4, 7) + blob(5, result())),
    "report_not_leased": (REPORT, V + uint(2, 1) + uint(3, 9) + uint(4, 0) + blob(5, result())),
    "report_nan": (REPORT, V + uint(2, 1) + uint(3, 2) + uint(4, 2) + blob(5, result(median_ms=float("nan")))),
    "report_bad_profile": (REPORT, V + uint(2, 1) + uint(3, 2) + uint(4, 2) + blob(5, result(profile="[1,"))),
    "report_invalid": (REPORT, V + uint(2, 1) + uint(3, 2) + uint(4, 2) + blob(5, result(valid=0, reason="race"))),
    "report_no_result": (REPORT, V + uint(2, 1) + uint(3, 2) + uint(4, 2)),
    "fetch": (FETCH, V + text(2, DIGEST)),
    "fetch_path": (FETCH, V + text(2, "../../etc/passwd")),
    "truncated": (SUBMIT, (V + text(2, DIGEST))[:-3]),
    "workers": (WORKERS, V),
    "workers_gone_h100": (WORKERS, V + text(2, "h100") + uint(3, 1)),
    "workers_unknown_gpu": (WORKERS, V + text(2, "H100")),
    "history": (HISTORY, V),
    "history_digest_prefix": (HISTORY, V + text(2, DIGEST[:8]) + text(3, "h100")),
    "history_pattern": (HISTORY, V + text(2, "4%_")),
    "history_long_digest": (HISTORY, V + text(2, DIGEST + "00")),
    "history_unknown_gpu": (HISTORY, V + text(3, "z999")),
    "compare_no_earlier": (COMPARE, V + uint(2, 1)),
    "compare_itself": (COMPARE, V + uint(2, 1) + uint(3, 1)),
    "compare_missing": (COMPARE, V + uint(2, 1) + uint(3, 1 << 40) + text(4, "h100")),
    "compare_negative": (COMPARE, V + uint(2, -1)),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (rpc, body) in SEEDS.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(bytes([rpc]) + body)
    print(f"wrote {len(SEEDS)} inputs to {OUT}")


if __name__ == "__main__":
    main()
