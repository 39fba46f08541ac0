// llcheck: llama.cpp (its CPU backend) as a second implementation beside lane-tune's, for bench/llama_cpu_check.sh.
// Built against llama.cpp's own source (bench/llama_cpu/build.sh), never part of lane-tune's build:
//   llcheck quantize IN OUT FTYPE            llama.cpp's quantize tool's work (llama_model_quantize), FTYPE its number
//                                            (0: every matrix dequantized to f32 by ggml; a quantized IN requantized)
//   llcheck eval MODEL OUT PROMPT_LEN TOK... the tokens in one batch; the logits (f32 rows) of positions PROMPT_LEN - 1
//                                            to the last written to OUT: a forced run of `lane-tune reference`'s tokens
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "llama.h"

namespace {

void quiet(ggml_log_level level, const char* text, void*) {
  if (level >= GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

int quantize(const char* in, const char* out, int ftype) {
  llama_model_quantize_params p = llama_model_quantize_default_params();
  p.ftype = static_cast<llama_ftype>(ftype);
  p.nthread = 0;
  p.allow_requantize = true;
  if (llama_model_quantize(in, out, &p) != 0) {
    std::fprintf(stderr, "llcheck: quantizing %s failed\n", in);
    return 1;
  }
  return 0;
}

int eval(const char* path, const char* out_path, int prompt_len, std::vector<llama_token> tokens) {
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(path, mp);
  if (!model) {
    std::fprintf(stderr, "llcheck: cannot load %s\n", path);
    return 1;
  }
  const int n = static_cast<int>(tokens.size());
  if (prompt_len < 1 || prompt_len > n) {
    std::fprintf(stderr, "llcheck: PROMPT_LEN must be 1..%d\n", n);
    return 2;
  }
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = static_cast<uint32_t>(n + 16);
  cp.n_batch = cp.n_ubatch = static_cast<uint32_t>(n);
  cp.n_threads = cp.n_threads_batch = 2;
  cp.no_perf = true;
  // f32 caches and the unfused attention: the CPU's flash attention rounds to f16 (1e-3 of noise on f32 weights)
  cp.type_k = cp.type_v = GGML_TYPE_F32;
  cp.flash_attn_type = getenv("LLCHECK_FLASH") ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) {
    std::fprintf(stderr, "llcheck: no context\n");
    return 1;
  }
  llama_batch b = llama_batch_init(n, 0, 1);
  for (int i = 0; i < n; ++i) {
    b.token[i] = tokens[i];
    b.pos[i] = i;
    b.n_seq_id[i] = 1;
    b.seq_id[i][0] = 0;
    b.logits[i] = i >= prompt_len - 1;
  }
  b.n_tokens = n;
  if (llama_decode(ctx, b) != 0) {
    std::fprintf(stderr, "llcheck: decode failed\n");
    return 1;
  }
  const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  FILE* f = std::fopen(out_path, "wb");
  if (!f) return 1;
  for (int i = prompt_len - 1; i < n; ++i) {
    const float* row = llama_get_logits_ith(ctx, i);
    if (!row || std::fwrite(row, sizeof(float), vocab, f) != static_cast<size_t>(vocab)) return 1;
  }
  std::fclose(f);
  llama_batch_free(b);
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  llama_log_set(quiet, nullptr);
  llama_backend_init();
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "quantize" && argc == 5) return quantize(argv[2], argv[3], std::atoi(argv[4]));
  if (cmd == "eval" && argc > 5) {
    std::vector<llama_token> tokens;
    for (int i = 5; i < argc; ++i) tokens.push_back(std::atoi(argv[i]));
    return eval(argv[2], argv[3], std::atoi(argv[4]), tokens);
  }
  std::fprintf(stderr, "usage: llcheck quantize IN OUT FTYPE | llcheck eval MODEL OUT PROMPT_LEN TOKEN...\n");
  return 2;
}
