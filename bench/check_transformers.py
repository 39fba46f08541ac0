#!/usr/bin/env python3
"""Checks lane-tune's CPU reference against Hugging Face transformers on the same GGUF checkpoints.

For each checkpoint: parse the GGUF here (header, metadata, tensor infos; F32/F16/BF16/Q8_0 data with numpy), load
the dequantized weights into LlamaForCausalLM / Qwen2ForCausalLM / Qwen3ForCausalLM / Qwen2MoeForCausalLM /
Qwen3MoeForCausalLM / GptOssForCausalLM / Gemma2ForCausalLM (config from the GGUF metadata; gemma2's norms as
transformers holds them, the GGUF's less 1 (llama.cpp's converter adds it); llama's q/k rows un-permuted from llama.cpp's
converter order back to transformers'; llama.cpp's 3-D expert tensors [expert][row][column] laid out as the installed
transformers holds its experts: one Linear per expert, or fused gate_up (qwen: gate rows then up rows; gpt-oss: gate
and up interleaved, x @ W) and down tensors, checked by running layer 0's mixture against numpy), run `lane-tune
reference` on a few prompts, feed transformers the prompt plus the reference's generated tokens, and compare the
logits of every generated position: relative L2 error, worst row, max abs error, arg-max agreement.

gpt-oss: transformers is given YaRN with truncate=True (llama.cpp floors and ceils the correction range, which
transformers does only then; the published gpt-oss config says false), and max_position_embeddings = factor x the
original context (transformers derives YaRN's factor from that ratio). A prompt longer than the sliding window is
added so that the window masks.

usage:
  check_transformers.py LANE_TUNE GGUF [GGUF...] [--n-gen 8] [--prompt "1 2 3"]... [--dtype float64|float32]
                        [--device cuda|cpu] [--tol 1e-5] [--threads N] [--backend transformers|numpy]
  check_transformers.py --parse-only GGUF [GGUF]   (no torch needed: prints the parse, decodes every tensor's first
                        row in pure Python and, with numpy, with numpy too; with two files, compares their rows)

Prints a `CHECK:` line per prompt and a `RESULT:` line per checkpoint; exits 1 when any checkpoint fails.
"""
import argparse
import math
import mmap
import os
import struct
import subprocess
import sys
import tempfile

# ggml types this script reads: type id -> (name, elements a block, bytes a block).
GGML_TYPES = {0: ("f32", 1, 4), 1: ("f16", 1, 2), 8: ("q8_0", 32, 34), 30: ("bf16", 1, 2)}

# GGUF metadata scalar types: id -> struct format.
SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


class TensorInfo:
    """One tensor's description: name, dims in ggml order (dims[0] is the row length), type id, data offset."""

    def __init__(self, name, dims, type_id, offset):
        self.name, self.dims, self.type, self.offset = name, dims, type_id, offset

    def elements(self):
        return math.prod(self.dims)

    def row_bytes(self):
        if self.type not in GGML_TYPES:
            raise ValueError(f"tensor {self.name} has ggml type {self.type}, which this script cannot read "
                             f"(synthesize with --type f32, f16, bf16 or q8_0)")
        _, block_elems, block_bytes = GGML_TYPES[self.type]
        return self.dims[0] // block_elems * block_bytes


class GGUF:
    """A GGUF file read the way llama.cpp reads it: header, metadata, tensor infos, and the data section's start."""

    def __init__(self, path):
        self.path = path
        self._file = open(path, "rb")
        self.buf = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
        self.pos = 0
        if self.buf[:4] != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file")
        self.pos = 4
        self.version = self._scalar(4)
        if self.version not in (2, 3):
            raise ValueError(f"{path}: unsupported GGUF version {self.version}")
        n_tensors, n_kv = self._scalar(10), self._scalar(10)
        self.meta = {}
        for _ in range(n_kv):
            key = self._string()
            self.meta[key] = self._value(self._scalar(4))
        self.tensors = {}
        for _ in range(n_tensors):
            name = self._string()
            n_dims = self._scalar(4)
            dims = [self._scalar(10) for _ in range(n_dims)]
            self.tensors[name] = TensorInfo(name, dims, self._scalar(4), self._scalar(10))
        align = int(self.meta.get("general.alignment", 32))
        self.data_start = (self.pos + align - 1) // align * align

    def _scalar(self, type_id):
        fmt = SCALARS[type_id]
        (v,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += struct.calcsize(fmt)
        return v

    def _string(self):
        n = self._scalar(10)
        s = bytes(self.buf[self.pos:self.pos + n]).decode("utf-8", errors="replace")
        self.pos += n
        return s

    def _value(self, type_id):
        if type_id in SCALARS:
            return self._scalar(type_id)
        if type_id == 8:
            return self._string()
        if type_id == 9:
            item_type, n = self._scalar(4), self._scalar(10)
            return [self._value(item_type) for _ in range(n)]
        raise ValueError(f"{self.path}: unknown metadata type {type_id} at byte {self.pos}")

    def _start(self, info, row=0):
        return self.data_start + info.offset + row * info.row_bytes()

    def row_python(self, name, row):
        """Row `row` of a tensor as floats, decoded with struct alone (the check on the numpy decoder)."""
        info = self.tensors[name]
        n, at = info.dims[0], self._start(info, row)
        if info.type == 0:
            return list(struct.unpack_from(f"<{n}f", self.buf, at))
        if info.type == 1:
            return list(struct.unpack_from(f"<{n}e", self.buf, at))
        if info.type == 30:
            halves = struct.unpack_from(f"<{n}H", self.buf, at)
            return [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in halves]
        if info.type == 8:
            out = []
            for b in range(n // 32):
                (d,) = struct.unpack_from("<e", self.buf, at + 34 * b)
                out.extend(d * q for q in struct.unpack_from("<32b", self.buf, at + 34 * b + 2))
            return out
        info.row_bytes()  # raises naming the type
        return []

    def array(self, name):
        """A tensor dequantized to a float32 numpy array, shaped as transformers holds it (dims reversed)."""
        import numpy as np

        info = self.tensors[name]
        n, at = info.elements(), self._start(info)
        if info.type == 0:
            a = np.frombuffer(self.buf, dtype="<f4", count=n, offset=at).astype(np.float32)
        elif info.type == 1:
            a = np.frombuffer(self.buf, dtype="<f2", count=n, offset=at).astype(np.float32)
        elif info.type == 30:
            h = np.frombuffer(self.buf, dtype="<u2", count=n, offset=at).astype(np.uint32)
            a = (h << 16).view(np.float32)
        elif info.type == 8:
            raw = np.frombuffer(self.buf, dtype=np.uint8, count=n // 32 * 34, offset=at).reshape(-1, 34)
            d = raw[:, :2].copy().view("<f2").astype(np.float32)
            a = (raw[:, 2:].copy().view(np.int8).astype(np.float32) * d).reshape(-1)
        else:
            info.row_bytes()
        return a.reshape(list(reversed(info.dims)))


def parse_only(paths):
    """Prints what the parser read and checks the data decoders: pure Python against numpy, file against file."""
    try:
        import numpy as np
    except ImportError:
        np = None
    files = [GGUF(p) for p in paths]
    for g in files:
        arch = g.meta.get("general.architecture")
        print(f"PARSE: {g.path} version={g.version} tensors={len(g.tensors)} metadata={len(g.meta)} "
              f"architecture={arch} data_start={g.data_start}")
        for k, v in g.meta.items():
            shown = f"[{len(v)} items]" if isinstance(v, list) else repr(v)
            print(f"  {k} = {shown}")
        end = 0
        for info in g.tensors.values():
            name = GGML_TYPES.get(info.type, (str(info.type),))[0]
            print(f"  tensor {info.name} dims={info.dims} type={name} offset={info.offset}")
            row = g.row_python(info.name, 0)
            if len(row) != info.dims[0] or not all(math.isfinite(x) for x in row):
                raise SystemExit(f"PARSE: {info.name}: row 0 did not decode to {info.dims[0]} finite values")
            if np is not None:
                full = g.array(info.name).reshape(-1, info.dims[0])
                if not np.array_equal(full[0], np.array(row, dtype=np.float32)):
                    raise SystemExit(f"PARSE: {info.name}: numpy and struct decoders disagree")
            end = max(end, g.data_start + info.offset + info.row_bytes() * (info.elements() // info.dims[0]))
        if end > len(g.buf):
            raise SystemExit(f"PARSE: {g.path}: tensor data runs past the end of the file")
        print(f"PARSE: {g.path} ok ({'numpy and struct decoders agree' if np else 'struct decoder only: no numpy'})")
    if len(files) == 2:
        a, b = files
        worst = 0.0
        for name, info in a.tensors.items():
            if name not in b.tensors:
                continue
            ra, rb = a.row_python(name, 0), b.row_python(name, 0)
            scale = max(max(abs(x) for x in ra), 1e-30)
            diff = max(abs(x - y) for x, y in zip(ra, rb)) / scale
            worst = max(worst, diff)
            print(f"  row0 {name}: max |a-b| / max |a| = {diff:.3e}")
        print(f"PARSE: worst relative row difference between the two files: {worst:.3e}")


def rope_inv_freq(g, arch, head_dim):
    """Rope's inverse frequencies as llama.cpp applies them: base^(-2i/d), divided by rope_freqs' factors (or the
    llama3 factors the scaling keys give), by a linear scaling factor, or blended by YaRN's ramp (ggml's
    rope_yarn_corr_dims, floored and ceiled)."""
    base = float(g.meta.get(f"{arch}.rope.freq_base", 10000.0))
    f = [base ** (-2.0 * i / head_dim) for i in range(head_dim // 2)]
    kind, params = rope_scaling(g, arch)
    if "rope_freqs.weight" in g.tensors:
        f = [x / c for x, c in zip(f, g.row_python("rope_freqs.weight", 0))]
    elif kind == "llama3":
        ctx, lo, hi, factor = (params["original_max_position_embeddings"], params["low_freq_factor"],
                               params["high_freq_factor"], params["factor"])
        out = []
        for x in f:
            wavelen = 2 * math.pi / x
            if wavelen < ctx / hi:
                out.append(x)
            elif wavelen > ctx / lo:
                out.append(x / factor)
            else:
                smooth = (ctx / wavelen - lo) / (hi - lo)
                out.append(x * ((1 - smooth) / factor + smooth))
        f = out
    if kind == "linear":
        f = [x / params["factor"] for x in f]
    if kind == "yarn":
        factor, ctx = params["factor"], params["original_max_position_embeddings"]

        def corr_dim(rotations):
            return head_dim * math.log(ctx / (rotations * 2 * math.pi)) / (2 * math.log(base))

        low = max(0.0, math.floor(corr_dim(params["beta_fast"])))
        high = min(head_dim - 1.0, math.ceil(corr_dim(params["beta_slow"])))
        out = []
        for i, x in enumerate(f):
            ramp = 1 - min(1.0, max(0.0, (i - low) / max(0.001, high - low)))
            out.append(x / factor * (1 - ramp) + x * ramp)
        f = out
    return f


def rope_attention_factor(g, arch):
    """What rope's cosine and sine are multiplied by: YaRN's 1 + 0.1 ln(factor) (ggml's rope_yarn mscale), else 1."""
    kind, params = rope_scaling(g, arch)
    return 1.0 + 0.1 * math.log(params["factor"]) if kind == "yarn" else 1.0


def rope_scaling(g, arch):
    """The rope scaling kind ('default', 'llama3', 'linear', 'yarn') and its parameters, from the metadata."""
    for prefix in ("lane_tune.rope.scaling.", f"{arch}.rope.scaling."):
        kind = g.meta.get(prefix + "type", "")
        if kind == "llama3":
            return "llama3", {
                "factor": float(g.meta.get(prefix + "factor", 8.0)),
                "low_freq_factor": float(g.meta.get(prefix + "low_freq_factor", 1.0)),
                "high_freq_factor": float(g.meta.get(prefix + "high_freq_factor", 4.0)),
                "original_max_position_embeddings": int(g.meta.get(prefix + "original_context_length", 8192)),
            }
    factor = float(g.meta.get(f"{arch}.rope.scaling.factor", 0.0))
    if g.meta.get(f"{arch}.rope.scaling.type") == "yarn":
        prefix = f"{arch}.rope.scaling."
        return "yarn", {
            "factor": factor,
            "original_max_position_embeddings": int(g.meta.get(prefix + "original_context_length",
                                                              g.meta.get(f"{arch}.context_length", 4096))),
            "beta_fast": float(g.meta.get(prefix + "yarn_beta_fast", 32.0)),
            "beta_slow": float(g.meta.get(prefix + "yarn_beta_slow", 1.0)),
            "truncate": True,
        }
    if g.meta.get(f"{arch}.rope.scaling.type", "linear") == "linear" and factor not in (0.0, 1.0):
        return "linear", {"factor": factor}
    return "default", {}


def unpermute(w, n_head):
    """Undoes llama.cpp's converter permutation of q/k rows (halves interleaved), back to transformers' order."""
    rows = w.shape[0]
    return w.reshape(n_head, rows // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def hf_shape(g):
    """The transformers configuration's figures, read from the GGUF metadata (as llama.cpp reads them)."""
    arch = g.meta["general.architecture"]
    key = lambda k, default=None: g.meta.get(f"{arch}.{k}", default)  # noqa: E731
    d, heads = int(key("embedding_length")), int(key("attention.head_count"))
    kv = key("attention.head_count_kv", heads)
    kv = int(kv[0] if isinstance(kv, list) else kv)
    head_dim = int(key("attention.key_length", d // heads))
    if int(key("attention.value_length", d // heads)) != head_dim:
        raise SystemExit(f"{g.path}: value width differs from key width; transformers' {arch} cannot hold it")
    kind, params = rope_scaling(g, arch)
    s = dict(arch=arch, d=d, heads=heads, kv=kv, head_dim=head_dim, layers=int(key("block_count")),
             ffn=int(key("feed_forward_length", 0)), vocab=int(key("vocab_size", g.tensors["token_embd.weight"].dims[1])),
             context=int(key("context_length", 4096)), eps=float(key("attention.layer_norm_rms_epsilon")),
             base=float(key("rope.freq_base", 10000.0)), tied="output.weight" not in g.tensors,
             bias="blk.0.attn_q.bias" in g.tensors, rope_kind=kind, rope_params=params,
             experts=int(key("expert_count", 0)), sliding_window=0, shared_ffn=0)
    if s["experts"]:
        # As lane-tune's recognition reads a mixture (llama.cpp's defaults where keys are absent).
        s["experts_used"] = int(key("expert_used_count"))
        s["expert_ffn"] = int(key("expert_feed_forward_length", s["ffn"] // s["experts_used"]))
        if "blk.0.ffn_gate_shexp.weight" in g.tensors:
            s["shared_ffn"] = int(key("expert_shared_feed_forward_length", s["ffn"]))
        s["gating"] = "softmax_topk" if arch == "gpt-oss" else "softmax"
        s["norm_weights"] = bool(key("expert_weights_norm", arch == "qwen3moe"))
        if arch == "gpt-oss":
            s["sliding_window"] = int(key("attention.sliding_window"))
    if arch == "gemma2":
        # As llama.cpp's llama_model_gemma2 reads it: caps 50 / 30, a window of 4096 and every second layer global when
        # absent; the 27B (46 layers) scales its attention by d_model / heads.
        n = int(key("attention.sliding_window_pattern", 2))
        s.update(sliding_window=int(key("attention.sliding_window", 4096)),
                 attn_softcap=float(key("attn_logit_softcapping", 50.0)),
                 final_softcap=float(key("final_logit_softcapping", 30.0)),
                 layer_types=["sliding_attention" if n == 0 or i % n < n - 1 else "full_attention"
                              for i in range(s["layers"])],
                 query_pre_attn_scalar=d // heads if s["layers"] == 46 else head_dim)
    return s


def tensor_map(s):
    """(transformers' name, the GGUF tensor, the heads of a llama q/k row permutation or None) for every tensor, a
    mixture's experts under this script's own names (mlp.experts.gate/up: [expert, ffn, hidden]; down: [expert,
    hidden, ffn]; their biases [expert, rows]), which hf_layout() lays out as the installed transformers holds them."""
    arch, layers = s["arch"], s["layers"]
    q_heads, k_heads = (s["heads"], s["kv"]) if arch == "llama" else (None, None)
    m = [("model.embed_tokens.weight", "token_embd.weight", None), ("model.norm.weight", "output_norm.weight", None)]
    if not s["tied"]:
        m.append(("lm_head.weight", "output.weight", None))
    for i in range(layers):
        b, p = f"blk.{i}.", f"model.layers.{i}."
        m += [(p + "input_layernorm.weight", b + "attn_norm.weight", None),
              (p + "self_attn.q_proj.weight", b + "attn_q.weight", q_heads),
              (p + "self_attn.k_proj.weight", b + "attn_k.weight", k_heads),
              (p + "self_attn.v_proj.weight", b + "attn_v.weight", None),
              (p + "self_attn.o_proj.weight", b + "attn_output.weight", None)]
        if s["bias"]:
            m += [(p + "self_attn.q_proj.bias", b + "attn_q.bias", q_heads),
                  (p + "self_attn.k_proj.bias", b + "attn_k.bias", k_heads),
                  (p + "self_attn.v_proj.bias", b + "attn_v.bias", None)]
        if arch in ("qwen3", "qwen3moe"):
            m += [(p + "self_attn.q_norm.weight", b + "attn_q_norm.weight", None),
                  (p + "self_attn.k_norm.weight", b + "attn_k_norm.weight", None)]
        if arch == "gemma2":  # (transformers' names for the sandwich's norms)
            m += [(p + "post_attention_layernorm.weight", b + "post_attention_norm.weight", None),
                  (p + "pre_feedforward_layernorm.weight", b + "ffn_norm.weight", None),
                  (p + "post_feedforward_layernorm.weight", b + "post_ffw_norm.weight", None)]
        elif arch == "gpt-oss":
            m += [(p + "self_attn.o_proj.bias", b + "attn_output.bias", None),
                  (p + "self_attn.sinks", b + "attn_sinks.weight", None),
                  (p + "post_attention_layernorm.weight", b + "post_attention_norm.weight", None)]
        else:
            m.append((p + "post_attention_layernorm.weight", b + "ffn_norm.weight", None))
        if not s["experts"]:
            m += [(p + "mlp.gate_proj.weight", b + "ffn_gate.weight", None),
                  (p + "mlp.up_proj.weight", b + "ffn_up.weight", None),
                  (p + "mlp.down_proj.weight", b + "ffn_down.weight", None)]
            continue
        m += [(p + "mlp.router.weight", b + "ffn_gate_inp.weight", None),
              (p + "mlp.experts.gate", b + "ffn_gate_exps.weight", None),
              (p + "mlp.experts.up", b + "ffn_up_exps.weight", None),
              (p + "mlp.experts.down", b + "ffn_down_exps.weight", None)]
        if arch == "gpt-oss":
            m += [(p + "mlp.router.bias", b + "ffn_gate_inp.bias", None),
                  (p + "mlp.experts.gate_bias", b + "ffn_gate_exps.bias", None),
                  (p + "mlp.experts.up_bias", b + "ffn_up_exps.bias", None),
                  (p + "mlp.experts.down_bias", b + "ffn_down_exps.bias", None)]
        if s["shared_ffn"]:
            m += [(p + "mlp.shared_expert_gate.weight", b + "ffn_gate_inp_shexp.weight", None),
                  (p + "mlp.shared_expert.gate_proj.weight", b + "ffn_gate_shexp.weight", None),
                  (p + "mlp.shared_expert.up_proj.weight", b + "ffn_up_shexp.weight", None),
                  (p + "mlp.shared_expert.down_proj.weight", b + "ffn_down_shexp.weight", None)]
    return m


def hf_weights(g, s):
    """The checkpoint's tensors dequantized (float32) under transformers' names and in its layout."""
    out = {}
    for hf, name, heads in tensor_map(s):
        a = g.array(name)
        out[hf] = unpermute(a, heads) if heads is not None else a
        if s["arch"] == "gemma2" and hf.endswith("norm.weight"):
            out[hf] = a - 1.0  # (transformers' Gemma RMSNorm multiplies by 1 + weight)
        if hf.endswith("shared_expert_gate.weight"):
            out[hf] = a.reshape(1, -1)  # transformers' Linear(hidden, 1)
    return out


def hf_layout(w, s, shapes, down_as_input_rows):
    """The weights `w` (this script's names) under the installed transformers' parameter names and shapes `shapes`
    (name -> shape): per-expert Linears (mlp.experts.N.gate_proj.weight ...) or fused tensors (mlp.experts.gate_up_proj
    [+ _bias], mlp.experts.down_proj [+ _bias]); fused gate_up is qwen's gate rows then up rows, gpt-oss's gate and
    up interleaved; each fused matrix transposed where transformers multiplies x @ W. `down_as_input_rows`: lay a
    square fused down_proj out as [expert, ffn, hidden] (x @ W); its shape cannot tell when ffn == hidden.
    Returns (weights, names nothing in the checkpoint fills)."""
    import numpy as np

    gpt_oss = s["arch"] == "gpt-oss"
    out, missing = {}, []

    def fit(a, shape, prefer_transposed=False):
        """`a` ([expert, rows, cols]) as `shape`: itself or its last two axes swapped."""
        t = np.swapaxes(a, -1, -2)
        if prefer_transposed and t.shape == tuple(shape):
            return t
        if a.shape == tuple(shape):
            return a
        if t.shape == tuple(shape):
            return t
        raise SystemExit(f"transformers' expert tensor of shape {tuple(shape)} does not fit {a.shape}")

    for name, shape in shapes.items():
        if name in w:
            out[name] = w[name]
            continue
        head, _, tail = name.rpartition("mlp.")
        p = head + "mlp."
        if tail == "gate.weight" and p + "router.weight" in w:  # qwen's router
            out[name] = w[p + "router.weight"]
        elif tail.startswith("experts.") and tail.endswith("_proj.weight") and tail.count(".") == 3:
            e, proj = int(tail.split(".")[1]), tail.split(".")[2].replace("_proj", "")
            out[name] = w[p + "experts." + proj][e]
        elif tail == "experts.gate_up_proj":
            gate, up = w[p + "experts.gate"], w[p + "experts.up"]
            if gpt_oss:
                both = np.empty((gate.shape[0], 2 * gate.shape[1], gate.shape[2]), dtype=gate.dtype)
                both[:, 0::2], both[:, 1::2] = gate, up
            else:
                both = np.concatenate([gate, up], axis=1)
            out[name] = fit(both, shape, prefer_transposed=gpt_oss)
        elif tail == "experts.gate_up_proj_bias":
            gate, up = w[p + "experts.gate_bias"], w[p + "experts.up_bias"]
            both = np.empty((gate.shape[0], 2 * gate.shape[1]), dtype=gate.dtype)
            both[:, 0::2], both[:, 1::2] = gate, up
            out[name] = both if gpt_oss else np.concatenate([gate, up], axis=1)
        elif tail in ("experts.gate_proj", "experts.up_proj"):
            out[name] = fit(w[p + "experts." + tail.split(".")[1].replace("_proj", "")], shape)
        elif tail == "experts.down_proj":
            out[name] = fit(w[p + "experts.down"], shape, prefer_transposed=down_as_input_rows)
        elif tail == "experts.down_proj_bias":
            out[name] = w[p + "experts.down_bias"]
        else:
            missing.append(name)
    return out, missing


def build_hf(g, torch, transformers, dtype, device):
    """A transformers model holding the checkpoint's dequantized weights; returns (model, vocab)."""
    import numpy as np

    s = hf_shape(g)
    arch, tied = s["arch"], s["tied"]
    classes = {"llama": ("LlamaConfig", "LlamaForCausalLM"), "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"),
               "qwen3": ("Qwen3Config", "Qwen3ForCausalLM"), "qwen2moe": ("Qwen2MoeConfig", "Qwen2MoeForCausalLM"),
               "qwen3moe": ("Qwen3MoeConfig", "Qwen3MoeForCausalLM"), "gpt-oss": ("GptOssConfig", "GptOssForCausalLM"),
               "gemma2": ("Gemma2Config", "Gemma2ForCausalLM")}
    if arch not in classes:
        raise SystemExit(f"{g.path}: architecture {arch} has no transformers counterpart here")
    config_cls, model_cls = (getattr(transformers, n) for n in classes[arch])

    common = dict(vocab_size=s["vocab"], hidden_size=s["d"], intermediate_size=s["ffn"],
                  num_hidden_layers=s["layers"], num_attention_heads=s["heads"], num_key_value_heads=s["kv"],
                  head_dim=s["head_dim"], max_position_embeddings=s["context"], rms_norm_eps=s["eps"],
                  tie_word_embeddings=tied, hidden_act="silu", attn_implementation="eager")
    if arch not in ("qwen2", "qwen2moe"):
        common["attention_bias"] = s["bias"]
    if arch == "gemma2":
        del common["hidden_act"]
        common.update(hidden_activation="gelu_pytorch_tanh", sliding_window=s["sliding_window"],
                      attn_logit_softcapping=s["attn_softcap"], final_logit_softcapping=s["final_softcap"],
                      query_pre_attn_scalar=s["query_pre_attn_scalar"], layer_types=s["layer_types"])
    if arch == "llama":
        common["mlp_bias"] = False
    if arch in ("qwen2", "qwen2moe", "qwen3moe"):
        common["use_sliding_window"] = False
    if s["experts"]:
        common.update(num_experts_per_tok=s["experts_used"], output_router_logits=False, router_aux_loss_coef=0.0)
    if arch in ("qwen2moe", "qwen3moe"):
        common.update(num_experts=s["experts"], moe_intermediate_size=s["expert_ffn"], norm_topk_prob=s["norm_weights"],
                      decoder_sparse_step=1, mlp_only_layers=[])
        common["intermediate_size"] = s["ffn"] or s["expert_ffn"]
    if arch == "qwen2moe":
        common["shared_expert_intermediate_size"] = s["shared_ffn"]
    if arch == "gpt-oss":
        common.update(num_local_experts=s["experts"], intermediate_size=s["expert_ffn"], sliding_window=s["sliding_window"],
                      layer_types=["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(s["layers"])],
                      swiglu_limit=7.0)
    kind, params = s["rope_kind"], s["rope_params"]
    if kind == "yarn":
        # transformers takes YaRN's factor as max_position_embeddings / original_max_position_embeddings.
        common["max_position_embeddings"] = int(round(params["factor"] * params["original_max_position_embeddings"]))
    if int(transformers.__version__.split(".")[0]) >= 5:
        config = config_cls(**common, rope_parameters={"rope_type": kind, "rope_theta": s["base"], **params})
    else:
        scaling = {"rope_type": kind, **params} if kind != "default" else None
        config = config_cls(**common, rope_theta=s["base"], rope_scaling=scaling)
    config._attn_implementation = "eager"

    torch_dtype = {"float64": torch.float64, "float32": torch.float32}[dtype]
    np_dtype = np.float64 if dtype == "float64" else np.float32
    torch.manual_seed(0)
    model = model_cls(config).to(torch_dtype).eval()
    # transformers 5's mixtures default to torch's grouped GEMM, which takes no float64: the eager loop over experts does
    if hasattr(model, "set_experts_implementation"):
        model.set_experts_implementation("eager")
    weights = hf_weights(g, s)
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    square_down = s["experts"] and s["expert_ffn"] == s["d"]

    def load(down_as_input_rows):
        laid, unfilled = hf_layout(weights, s, shapes, down_as_input_rows)
        sd = {k: torch.from_numpy(np.ascontiguousarray(v, dtype=np_dtype)) for k, v in laid.items()}
        missing, unexpected = model.load_state_dict(sd, strict=False)
        if unexpected:
            raise SystemExit(f"{g.path}: transformers' {arch} has no place for {unexpected}")
        return sorted(set(missing) | set(unfilled))

    model.lt_down_as_input_rows = arch == "gpt-oss"  # (train_checkpoint.py maps trained weights back by it)
    missing = load(model.lt_down_as_input_rows)
    if s["experts"]:
        # Layer 0's mixture through transformers against numpy on the same activations: the expert layout's check.
        diff = probe_mixture(model, s, weights, torch, np_dtype)
        if diff > 1e-4 and square_down:
            model.lt_down_as_input_rows = arch != "gpt-oss"
            missing = load(model.lt_down_as_input_rows)
            diff = probe_mixture(model, s, weights, torch, np_dtype)
        print(f"LAYOUT: {os.path.basename(g.path)} layer 0 mixture, transformers against numpy: max rel diff {diff:.2e}")
        if diff > 1e-4:
            raise SystemExit(f"{g.path}: transformers' {arch} experts do not compute what the checkpoint's do "
                             f"(layer 0 mixture differs by {diff:.2e}): the expert layout mapping is wrong")
    with torch.no_grad():
        for name in missing:
            if name.endswith("o_proj.bias"):  # llama's attention_bias adds one; llama.cpp's llama has none
                model.get_parameter(name).zero_()
            elif not (tied and name == "lm_head.weight"):
                raise SystemExit(f"{g.path}: nothing in the checkpoint for transformers' {name}")
        if tied:
            try:
                model.tie_weights()
            except (AttributeError, TypeError):
                pass
            if not torch.equal(model.lm_head.weight, model.model.embed_tokens.weight):
                model.lm_head.weight.copy_(model.model.embed_tokens.weight)
    model = model.to(device).eval()

    # Rope: compare transformers' inverse frequencies and attention factor with llama.cpp's reading; use llama.cpp's
    # when they differ (every rotary module: the model's, or one per attention layer).
    expected = torch.tensor(rope_inv_freq(g, arch, s["head_dim"]), dtype=torch.float64)
    factor = rope_attention_factor(g, arch)
    rotaries = [m for _, m in model.named_modules() if torch.is_tensor(getattr(m, "inv_freq", None))]
    if not rotaries:
        raise SystemExit(f"{g.path}: found no rotary embedding in transformers' {arch}")
    diff = factor_diff = 0.0
    for rotary in rotaries:
        got = rotary.inv_freq.detach().double().cpu()
        d = float(((got - expected).abs() / expected).max())
        diff = max(diff, d)
        if d > 1e-5:
            with torch.no_grad():
                rotary.inv_freq.copy_(expected.to(rotary.inv_freq.dtype))
                if hasattr(rotary, "original_inv_freq") and torch.is_tensor(rotary.original_inv_freq):
                    rotary.original_inv_freq = rotary.inv_freq.clone()
        scaling = float(getattr(rotary, "attention_scaling", 1.0))
        factor_diff = max(factor_diff, abs(scaling - factor))
        if abs(scaling - factor) > 1e-7 and hasattr(rotary, "attention_scaling"):
            rotary.attention_scaling = factor
    note = " (transformers' differ: llama.cpp's used)" if diff > 1e-5 or factor_diff > 1e-7 else ""
    print(f"ROPE: {os.path.basename(g.path)} scaling={kind} inv_freq max rel diff={diff:.2e} "
          f"attention factor {factor:.6f} (diff {factor_diff:.1e}){note}")
    return model, s["vocab"]


def numpy_mixture(s, w, p, h):
    """A mixture layer (prefix `p`) over rows h [T, hidden] with numpy, as llama.cpp's build_moe_ffn defines it: the
    router's top k (largest first; a stable sort keeps the lower expert first among equals), softmax before (qwen) or
    after (gpt-oss) the selection, the weights normalized where the model does, each selected expert's SwiGLU (gpt-oss:
    clamped, alpha 1.702, limit 7) weighted and summed, and qwen2moe's shared expert under its sigmoid gate."""
    import numpy as np

    def softmax(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    gpt_oss = s["arch"] == "gpt-oss"
    logits = h @ w[p + "mlp.router.weight"].T.astype(np.float64) + w.get(p + "mlp.router.bias", 0.0)
    score = logits if gpt_oss else softmax(logits)
    chosen = np.argsort(-score, axis=-1, kind="stable")[:, :s["experts_used"]]
    weight = np.take_along_axis(score, chosen, -1)
    if gpt_oss:
        weight = softmax(weight)
    if s["norm_weights"]:
        weight = weight / np.maximum(weight.sum(-1, keepdims=True), 6.103515625e-5)
    out = np.zeros_like(h)
    for t in range(h.shape[0]):
        for j, e in enumerate(chosen[t]):
            gate = w[p + "mlp.experts.gate"][e] @ h[t] + (w[p + "mlp.experts.gate_bias"][e] if gpt_oss else 0.0)
            up = w[p + "mlp.experts.up"][e] @ h[t] + (w[p + "mlp.experts.up_bias"][e] if gpt_oss else 0.0)
            if gpt_oss:
                gate, up = np.minimum(gate, 7.0), np.clip(up, -7.0, 7.0)
                act = gate / (1 + np.exp(-1.702 * gate)) * (up + 1)
            else:
                act = gate / (1 + np.exp(-gate)) * up
            down = w[p + "mlp.experts.down"][e] @ act + (w[p + "mlp.experts.down_bias"][e] if gpt_oss else 0.0)
            out[t] += weight[t, j] * down
    if p + "mlp.shared_expert_gate.weight" in w:
        gate = h @ w[p + "mlp.shared_expert.gate_proj.weight"].T.astype(np.float64)
        up = h @ w[p + "mlp.shared_expert.up_proj.weight"].T.astype(np.float64)
        down = (gate / (1 + np.exp(-gate)) * up) @ w[p + "mlp.shared_expert.down_proj.weight"].T.astype(np.float64)
        out += down / (1 + np.exp(-(h @ w[p + "mlp.shared_expert_gate.weight"].T.astype(np.float64))))
    return out


def probe_mixture(model, s, w, torch, np_dtype):
    """The largest relative difference between transformers' layer-0 mixture and numpy_mixture on random rows."""
    import numpy as np

    rng = np.random.default_rng(0)
    h = rng.standard_normal((5, s["d"]))
    mlp = model.model.layers[0].mlp
    param = next(mlp.parameters())
    with torch.no_grad():
        got = mlp(torch.tensor(h[None], dtype=param.dtype, device=param.device))
    got = (got[0] if isinstance(got, tuple) else got).reshape(5, s["d"]).double().cpu().numpy()
    want = numpy_mixture(s, w, "model.layers.0.", h.astype(np_dtype).astype(np.float64))
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


def run_reference(lane_tune, path, prompt, n_gen, vocab, threads):
    """`lane-tune reference`'s tokens and logits (n_gen x vocab, float64)."""
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "logits.bin")
        cmd = [lane_tune, "reference", path, "--n-gen", str(n_gen), "--logits", out]
        if threads:
            cmd += ["--threads", str(threads)]
        r = subprocess.run(cmd + [str(t) for t in prompt], capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"lane-tune reference failed ({r.returncode}): {r.stderr.strip()}")
        lines = [l for l in r.stdout.splitlines() if l.startswith("TOKENS:")]
        if len(lines) != 1:
            raise SystemExit(f"lane-tune reference printed no single TOKENS: line: {r.stdout!r}")
        tokens = [int(x) for x in lines[0].split()[1:]]
        logits = np.fromfile(out, dtype="<f4").astype(np.float64)
    if len(tokens) != n_gen or logits.size != n_gen * vocab:
        raise SystemExit(f"lane-tune reference gave {len(tokens)} tokens and {logits.size} logits, "
                         f"expected {n_gen} and {n_gen * vocab}")
    return tokens, logits.reshape(n_gen, vocab)


def numpy_forward(s, w, ids):
    """Every position's logits, computed with numpy the way transformers computes them (rotate_half rope with
    transformers' llama3 frequencies, repeated key/value heads): the --backend numpy stand-in, for machines without
    torch; it checks this script's reading and mapping of the checkpoint, not an outside implementation."""
    import numpy as np

    if s["arch"] == "gemma2":
        raise SystemExit("--backend numpy models the llama/qwen forward only, not gemma2's: use transformers")
    T, hd = len(ids), s["head_dim"]
    inv = 1.0 / (s["base"] ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    scale = 1.0
    if s["rope_kind"] == "yarn":
        # transformers' _compute_yarn_parameters with truncate=True: the correction range floored and ceiled.
        p = s["rope_params"]
        factor, old = p["factor"], p["original_max_position_embeddings"]

        def corr_dim(rotations):
            return hd * math.log(old / (rotations * 2 * math.pi)) / (2 * math.log(s["base"]))

        low = max(math.floor(corr_dim(p["beta_fast"])), 0)
        high = min(math.ceil(corr_dim(p["beta_slow"])), hd - 1)
        extrapolation = 1 - np.clip((np.arange(hd // 2) - low) / max(high - low, 0.001), 0, 1)
        inv = inv / factor * (1 - extrapolation) + inv * extrapolation
        scale = 0.1 * math.log(factor) + 1.0
    if s["rope_kind"] == "llama3":
        p = s["rope_params"]
        factor, lo, hi = p["factor"], p["low_freq_factor"], p["high_freq_factor"]
        old = p["original_max_position_embeddings"]
        wavelen = 2 * math.pi / inv
        scaled = np.where(wavelen > old / lo, inv / factor, inv)
        smooth = (old / wavelen - lo) / (hi - lo)
        medium = ~(wavelen < old / hi) & ~(wavelen > old / lo)
        inv = np.where(medium, (1 - smooth) * scaled / factor + smooth * scaled, scaled)
    elif s["rope_kind"] == "linear":
        inv = inv / s["rope_params"]["factor"]
    angles = np.arange(T)[:, None] * inv[None]
    cos = np.cos(np.concatenate([angles, angles], -1))[:, None] * scale
    sin = np.sin(np.concatenate([angles, angles], -1))[:, None] * scale

    def rms(x, g):
        return g * (x / np.sqrt((x * x).mean(-1, keepdims=True) + s["eps"]))

    def rope(x):
        return x * cos + np.concatenate([-x[..., hd // 2:], x[..., :hd // 2]], -1) * sin

    x = w["model.embed_tokens.weight"][ids].astype(np.float64)
    for i in range(s["layers"]):
        p = f"model.layers.{i}."

        def lin(n, h):
            return h @ w[p + n + ".weight"].T.astype(np.float64) + w.get(p + n + ".bias", 0.0)

        h = rms(x, w[p + "input_layernorm.weight"])
        q = lin("self_attn.q_proj", h).reshape(T, s["heads"], hd)
        k = lin("self_attn.k_proj", h).reshape(T, s["kv"], hd)
        v = lin("self_attn.v_proj", h).reshape(T, s["kv"], hd)
        if p + "self_attn.q_norm.weight" in w:
            q, k = rms(q, w[p + "self_attn.q_norm.weight"]), rms(k, w[p + "self_attn.k_norm.weight"])
        group = s["heads"] // s["kv"]
        q, k, v = rope(q), np.repeat(rope(k), group, 1), np.repeat(v, group, 1)
        mask = np.triu(np.full((T, T), -np.inf), 1)
        if s["sliding_window"] and i % 2 == 0:  # gpt-oss's sliding layers: query t sees keys t - window + 1 ... t
            mask += np.tril(np.full((T, T), -np.inf), -s["sliding_window"])
        scores = np.einsum("thd,uhd->htu", q, k) / math.sqrt(hd) + mask[None]
        if p + "self_attn.sinks" in w:  # a sink logit per head joins the softmax, its share dropped
            sinks = np.broadcast_to(w[p + "self_attn.sinks"].astype(np.float64)[:, None, None], (s["heads"], T, 1))
            scores = np.concatenate([scores, sinks], -1)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores = (scores / scores.sum(-1, keepdims=True))[..., :T]
        x = x + lin("self_attn.o_proj", np.einsum("htu,uhd->thd", scores, v).reshape(T, -1))
        h = rms(x, w[p + "post_attention_layernorm.weight"])
        if s["experts"]:
            x = x + numpy_mixture(s, w, p, h)
            continue
        gate = lin("mlp.gate_proj", h)
        x = x + lin("mlp.down_proj", gate / (1 + np.exp(-gate)) * lin("mlp.up_proj", h))
    out = w["lm_head.weight"] if "lm_head.weight" in w else w["model.embed_tokens.weight"]
    return rms(x, w["model.norm.weight"]) @ out.T.astype(np.float64)


def check(args):
    """Runs every checkpoint through the reference and the other implementation; returns the exit status."""
    import numpy as np

    if args.backend == "transformers":
        import torch
        import transformers

        device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
        torch.backends.cuda.matmul.allow_tf32 = False  # float32 runs stay float32 (no TF32 tensor-core rounding)
        torch.backends.cudnn.allow_tf32 = False
        print(f"VERSIONS: torch={torch.__version__} transformers={transformers.__version__} numpy={np.__version__} "
              f"device={device} dtype={args.dtype}")
    else:
        print(f"VERSIONS: numpy={np.__version__} backend=numpy (this script's own forward, not transformers)")
    failed = False
    for path in args.gguf:
        g = GGUF(path)
        arch = g.meta.get("general.architecture")
        if args.backend == "transformers":
            model, vocab = build_hf(g, torch, transformers, args.dtype, device)

            def logits(seq):
                with torch.no_grad():
                    out = model(input_ids=torch.tensor([seq], device=device), use_cache=False)
                return out.logits[0].double().cpu().numpy()
        else:
            shape = hf_shape(g)
            weights, vocab = hf_weights(g, shape), shape["vocab"]

            def logits(seq):
                return numpy_forward(shape, weights, seq)
        window = hf_shape(g)["sliding_window"]
        lengths = (7, 19) + ((window + 20,) if window else ())  # past a sliding window, so that it masks
        prompts = [[int(x) % vocab for x in p.split()] for p in args.prompt] or \
                  [[(17 * i + 3) % vocab for i in range(n)] for n in lengths]
        num = den = 0.0
        agree = rows = 0
        worst = max_abs = 0.0
        for prompt in prompts:
            tokens, ref = run_reference(args.lane_tune, path, prompt, args.n_gen, vocab, args.threads)
            other = logits(prompt + tokens[:-1])[len(prompt) - 1:]
            err = ref - other
            row_rel = np.linalg.norm(err, axis=1) / np.linalg.norm(other, axis=1)
            hits = int((other.argmax(axis=1) == np.array(tokens)).sum())
            print(f"CHECK: {os.path.basename(path)} prompt_len={len(prompt)} n_gen={args.n_gen} "
                  f"rel_l2={np.linalg.norm(err) / np.linalg.norm(other):.3e} worst_row={row_rel.max():.3e} "
                  f"max_abs={np.abs(err).max():.3e} argmax={hits}/{args.n_gen} tokens={' '.join(map(str, tokens))}")
            num += float((err ** 2).sum())
            den += float((other ** 2).sum())
            worst, max_abs = max(worst, float(row_rel.max())), max(max_abs, float(np.abs(err).max()))
            agree, rows = agree + hits, rows + args.n_gen
        rel = math.sqrt(num / den)
        ok = rel < args.tol and agree == rows
        failed |= not ok
        print(f"RESULT: {os.path.basename(path)} arch={arch} backend={args.backend} rel_l2={rel:.3e} "
              f"worst_row={worst:.3e} max_abs={max_abs:.3e} argmax={agree}/{rows} tol={args.tol:g} "
              f"{'PASS' if ok else 'FAIL'}")
        if args.backend == "transformers":
            del model
            if device == "cuda":
                torch.cuda.empty_cache()
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parse-only", action="store_true", help="check the GGUF parser only (no torch, no lane-tune)")
    ap.add_argument("paths", nargs="+", help="LANE_TUNE GGUF... (or GGUF [GGUF] with --parse-only)")
    ap.add_argument("--n-gen", type=int, default=8)
    ap.add_argument("--prompt", action="append", default=[], help="token ids, space separated (repeatable)")
    ap.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    ap.add_argument("--device", choices=("cuda", "cpu"))
    ap.add_argument("--tol", type=float, default=1e-5, help="relative L2 error a checkpoint must stay under")
    ap.add_argument("--threads", type=int, default=0, help="lane-tune reference's threads (0: every core)")
    ap.add_argument("--backend", choices=("transformers", "numpy"), default="transformers",
                    help="numpy: this script's own forward pass, for a machine without torch (checks the plumbing)")
    args = ap.parse_args()
    if args.parse_only:
        parse_only(args.paths)
        return 0
    if len(args.paths) < 2:
        ap.error("need the lane-tune binary and at least one GGUF")
    args.lane_tune, args.gguf = args.paths[0], args.paths[1:]
    if args.n_gen < 1:
        ap.error("--n-gen must be at least 1")
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
