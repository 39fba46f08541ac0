// The CPU reference forward pass: f64 sums, activations and caches, weights dequantized a row at a time as they are
// read, every core used.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "compiler/gguf.hpp"
#include "compiler/model.hpp"

namespace lt::reference {

// What a generation produced: the greedy tokens and every generated position's logits (vocab floats a row; the
// first row is the prompt's last position).
struct Generation {
  std::vector<int32_t> tokens;
  std::vector<float> logits;
};

// A reference model: the recognized checkpoint and its key/value caches.
class Reference {
 public:
  // `threads` 0: every core.
  Reference(const gguf::File& file, const model::Model& model, unsigned threads = 0);
  ~Reference();

  // Clears the caches (position 0).
  void reset();
  // Runs `tokens` at the next positions as one chunk; returns the logits of every row (rows x vocab).
  std::vector<float> forward(std::span<const int32_t> tokens);
  // Prefills `prompt` from position 0, then generates greedily: n_gen tokens, n_gen logits rows (row 0: the prompt's
  // last position; token i+1 is row i's arg-max, lowest index on ties, and is fed to give row i+1).
  Generation generate(std::span<const int32_t> prompt, int n_gen);
  // One prompt to generate from, as generate() takes it.
  struct Request {
    std::span<const int32_t> prompt;
    int n_gen = 0;
  };
  // Each request's generation, equal to generate()'s bit for bit, run together: a step runs every sequence still
  // generating as one chunk, so each weight row is read once a step for all of them (the worker's 4 check prompts: 8
  // passes over the weights, not 32). Consecutive requests go together while their caches hold at most
  // `max_positions` in all (a long prompts file in groups, its memory bounded). position() is then the first
  // request's.
  std::vector<Generation> generate(std::span<const Request> requests, size_t max_positions = 4096);
  int position() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lt::reference
