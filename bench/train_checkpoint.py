#!/usr/bin/env python3
"""Trains a preset's model for a minute on local text and writes it as a GGUF checkpoint lane-tune reads.

Random-weight checkpoints put their logits' top two within a hair of each other at almost every position, so the
arg-max agreement of a lossy numerics (int8) there measures the ties, not the numerics. A trained model has real
margins. With no network, this trains one here: `lane-tune synth` writes the preset's checkpoint (its metadata, tensor
layout and formats), transformers' model of the architecture (check_transformers.py's mapping, there checked against
lane-tune's reference) is trained from its own initialization on the bytes of local text (a token a byte), and the
trained tensors are written back into the checkpoint in its formats (Q8_0 rows quantized per 32-block; llama's q/k
rows permuted as llama.cpp's converter does). It prints the training loss as it goes, then checks the file: every
tensor read back against the trained one.

usage: train_checkpoint.py LANE_TUNE PRESET OUT.gguf [--seconds 60] [--text GLOB]... [--batch 32] [--seq 256]
                           [--lr 6e-4] [--type q8_0|f16|bf16|f32]
The block formats: train with --type f16, then `lane-tune quantize OUT.gguf --type q4_k_m -o OUT-q4_k_m.gguf`.
Writes OUT.gguf and OUT.gguf.text (the text's bytes, for prompts drawn from the same distribution).
"""
import argparse
import glob
import mmap
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_transformers as ct  # noqa: E402


def permute(w, n_head):
    """llama.cpp's converter order of q/k rows (the inverse of check_transformers.unpermute)."""
    rows = w.shape[0]
    return w.reshape(n_head, 2, rows // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def encode(info, a, np):
    """Tensor data in the GGUF's format for `info` (f32, f16, bf16 or q8_0), from a float32 array in ggml order."""
    a = np.ascontiguousarray(a, dtype=np.float32).reshape(-1)
    if info.type == 0:
        return a.astype("<f4").tobytes()
    if info.type == 1:
        return a.astype("<f2").tobytes()
    if info.type == 30:
        return (a.view(np.uint32) >> 16).astype("<u2").tobytes()  # (truncated: bf16 stays within its rounding)
    if info.type == 8:
        blocks = a.reshape(-1, 32)
        amax = np.abs(blocks).max(axis=1)
        d = (amax / 127.0).astype(np.float16)
        inv = np.where(d.astype(np.float32) > 0, 1.0 / np.maximum(d.astype(np.float32), 1e-30), 0.0)
        q = np.clip(np.rint(blocks * inv[:, None]), -127, 127).astype(np.int8)
        out = np.empty((blocks.shape[0], 34), dtype=np.uint8)
        out[:, :2] = d.view(np.uint8).reshape(-1, 2)
        out[:, 2:] = q.view(np.uint8)
        return out.tobytes()
    raise SystemExit(f"{info.name}: ggml type {info.type} is not one this script writes")


def trained_weights(model, g, s, np):
    """The trained model's tensors under check_transformers' names (tensor_map's, in its layout), float32. A tensor
    transformers holds under the same name is taken as it is; the others (a mixture's router, fused or transposed
    experts) go through hf_layout's own mapping run on element numbers instead of weights, and each trained element
    goes back to the number it came from."""
    sd = {k: v.detach().float().cpu().numpy() for k, v in model.state_dict().items()}
    ours = ct.hf_weights(g, s)  # (the shapes)
    out = {name: sd[name].reshape(a.shape) for name, a in ours.items() if name in sd}
    number, total = {}, 0
    # (int32 numbers where they fit: gpt-oss-20b's experts alone are 1.6 G elements in two layers)
    kind = np.int32 if sum(a.size for name, a in ours.items() if name not in out) < 2**31 else np.int64
    for name, a in ours.items():
        if name not in out:
            number[name] = np.arange(total, total + a.size, dtype=kind).reshape(a.shape)
            total += a.size
    if not number:
        return out
    laid, _ = ct.hf_layout(number, s, {k: v.shape for k, v in sd.items() if k not in ours},
                           getattr(model, "lt_down_as_input_rows", False))
    flat = np.full(total, np.nan, dtype=np.float32)
    for k, v in laid.items():
        flat[np.asarray(v).reshape(-1)] = sd[k].reshape(-1)
    if np.isnan(flat).any():
        raise SystemExit("some checkpoint tensor has no trained counterpart in transformers' model")
    out.update({name: flat[n] for name, n in number.items()})
    return out


def text_bytes(patterns, limit):
    """Up to `limit` bytes of the files matching the globs, in a fixed order."""
    chunks, n = [], 0
    for pat in patterns:
        for path in sorted(glob.glob(pat, recursive=True)):
            try:
                with open(path, "rb") as f:
                    b = f.read()
            except OSError:
                continue
            chunks.append(b)
            n += len(b)
            if n >= limit:
                return b"".join(chunks)[:limit]
    return b"".join(chunks)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lane_tune")
    ap.add_argument("preset")
    ap.add_argument("out")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--text", action="append", default=[])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--lr", type=float, default=6e-4)
    ap.add_argument("--layers", type=int, default=0, help="the preset's first N layers only (synth --layers)")
    ap.add_argument("--type", default="q8_0", choices=["q8_0", "f16", "bf16", "f32"],
                    help="the file's matrices (then `lane-tune quantize` writes it in any other type)")
    a = ap.parse_args()
    import numpy as np
    import torch
    import transformers

    subprocess.run([a.lane_tune, "synth", "--preset", a.preset, "--type", a.type, "--seed", "1", "-o", a.out]
                   + (["--layers", str(a.layers)] if a.layers else []), check=True, stdout=subprocess.DEVNULL)
    data = text_bytes(a.text or ["/usr/lib/python3*/**/*.py"], 64 << 20)
    if len(data) < 1 << 20:
        raise SystemExit(f"only {len(data)} bytes of text found")
    with open(a.out + ".text", "wb") as f:
        f.write(data[: 1 << 20])
    tokens = torch.from_numpy(np.frombuffer(data, dtype=np.uint8).astype(np.int64)).cuda()

    t_start = time.time()
    stage = lambda what: print(f"STAGE: {what} at {time.time() - t_start:.0f}s", flush=True)  # noqa: E731
    g = ct.GGUF(a.out)
    s = ct.hf_shape(g)
    model, _ = ct.build_hf(g, torch, transformers, "float32", "cuda")
    stage("model built")
    model.config._attn_implementation = "sdpa"
    torch.manual_seed(1)
    with torch.no_grad():  # transformers' own initialization (the synthesized weights are not a trainable start)
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.fill_(1.0)
            elif p.dim() >= 2:  # (a mixture's experts are 3-D)
                p.normal_(0.0, 0.02)
            else:
                p.zero_()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.0, fused=True)
    gen = torch.Generator(device="cuda").manual_seed(2)
    t0, step, loss_avg = time.time(), 0, None
    while time.time() - t0 < a.seconds:
        lr = a.lr * min(1.0, (step + 1) / 50)
        for group in opt.param_groups:
            group["lr"] = lr
        at = torch.randint(0, tokens.numel() - a.seq - 1, (a.batch,), device="cuda", generator=gen)
        x = torch.stack([tokens[i : i + a.seq + 1] for i in at.tolist()])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(input_ids=x[:, :-1]).logits
        loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, s["vocab"]), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        v = float(loss)
        loss_avg = v if loss_avg is None else 0.9 * loss_avg + 0.1 * v
        if step % 25 == 0:
            print(f"TRAIN: {a.preset} step {step} {time.time() - t0:.0f}s loss {loss_avg:.3f} (nats a byte)",
                  flush=True)
    print(f"TRAINED: {a.preset} steps={step} tokens={step * a.batch * a.seq} loss={loss_avg:.3f}", flush=True)

    # The trained tensors into the checkpoint's data, in place, then read back.
    sd = trained_weights(model, g, s, np)
    stage("trained tensors mapped back")
    g.buf.close()
    worst = 0.0
    with open(a.out, "r+b") as f:
        mm = mmap.mmap(f.fileno(), 0)
        for hf, name, heads in ct.tensor_map(s):
            info = g.tensors[name]
            w = sd[hf]
            if heads is not None:
                w = permute(w, heads)
            raw = encode(info, w, np)
            at = g.data_start + info.offset
            mm[at : at + len(raw)] = raw
        mm.flush()
        mm.close()
    stage("written")
    back = ct.GGUF(a.out)
    for hf, name, heads in ct.tensor_map(s):
        got = back.array(name)
        if heads is not None:
            got = ct.unpermute(got, heads)
        want = sd[hf].reshape(got.shape)
        worst = max(worst, float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)))
    print(f"WROTE: {a.out} tensors={len(ct.tensor_map(s))} worst read-back error (of the tensor's max)={worst:.2e}")
    if worst > 1e-2:
        raise SystemExit("the checkpoint does not hold the trained weights")


if __name__ == "__main__":
    main()
