// The resident host: one process a GPU that holds one checkpoint's weights on the device and runs lane images over
// them, one at a time, as the worker asks (compiler/include/compiler/lane_image.hpp describes the image and the
// weights manifest). A tuning job's configurations then cost their own kernels and runs, not an upload of the
// weights and a process each. A release is still one program that uploads its checkpoint itself (lane.cu's main).
//
//   lane-host <checkpoint.gguf> <weights manifest>      prints `READY <device bytes> <upload ms>` once uploaded
//   RUN<TAB><image><TAB><sidecar>[<TAB><lane flag>...]   on its input: the lane's output contract, then `END <status>`
//   QUIT (or the end of its input)                       exits
//
// A CUDA error ends the process (the device's context may be lost with it): the worker starts it again.

#include <chrono>
#include <iostream>
#include <map>
#include <sstream>

// A Q8_0 matrix's 34-byte blocks (an f16 scale, 32 int8) split into int8 rows and scales on the device, as
// lk_upload_q8 splits them on the host: a thread a block.
__global__ void lk_split_q8(const unsigned char* __restrict__ raw, signed char* __restrict__ q, __half* __restrict__ s,
                            size_t blocks) {
  const size_t b = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= blocks) return;
  const unsigned char* src = raw + b * 34;
  s[b] = *reinterpret_cast<const __half*>(src);  // (2-byte aligned: 34 is even)
  for (int i = 0; i < 32; ++i) q[b * 32 + i] = (signed char)src[2 + i];
}

// The weights of the checkpoint on the device, by the manifest's index.
struct lk_resident_weights {
  struct Matrix {
    void *q = nullptr, *s = nullptr;  // an lk_q8's parts; a plain matrix's elements in q
    void *h = nullptr, *d = nullptr;  // with q and s, an lk_blk's planes
  };
  std::vector<Matrix> matrices;
  std::vector<void*> vectors;
  uint64_t digest = 0;  // of the manifest's text
  size_t bytes = 0;
};

// The ggml type number of a block format's name in the weights manifest (shapes.cuh's LK_Q4_0 ...); 0 for the others.
static int lk_block_type(const char* name) {
  static const struct {
    const char* name;
    int type;
  } kNames[] = {{"q4_0", LK_Q4_0}, {"q4_1", LK_Q4_1}, {"q5_0", LK_Q5_0}, {"q5_1", LK_Q5_1},
                {"q4_k", LK_Q4_K}, {"q5_k", LK_Q5_K}, {"q6_k", LK_Q6_K}, {"mxfp4", LK_MXFP4},
                {"iq4_nl", LK_IQ4_NL}, {"iq4_xs", LK_IQ4_XS}, {"q2_k", LK_Q2_K}, {"q3_k", LK_Q3_K}};
  for (const auto& n : kNames)
    if (strcmp(n.name, name) == 0) return n.type;
  return 0;
}

// Reads the whole of a file; false when it cannot.
static bool lk_read_file(const char* path, std::string& out) {
  FILE* f = fopen(path, "rb");
  if (!f) return false;
  char buf[1 << 16];
  size_t n;
  out.clear();
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  fclose(f);
  return true;
}

// Maps and checks the checkpoint, and uploads every matrix and vector of the manifest.
static lk_resident_weights lk_resident_upload(const char* checkpoint, const char* manifest_path) {
  std::string manifest;
  if (!lk_read_file(manifest_path, manifest)) {
    fprintf(stderr, "cannot read the weights manifest %s: %s\n", manifest_path, strerror(errno));
    exit(LK_EXIT_USAGE);
  }
  std::istringstream in(manifest);
  std::string word;
  int version = 0;
  unsigned long long size = 0, data = 0, digest = 0;
  if (!(in >> word >> version) || word != "LANE_WEIGHTS" || version != 1 || !(in >> word >> size >> data >> digest) ||
      word != "checkpoint") {
    fprintf(stderr, "%s is not a weights manifest this host reads (LANE_WEIGHTS 1)\n", manifest_path);
    exit(LK_EXIT_USAGE);
  }
  const uint8_t* file = lk_open_checkpoint(checkpoint, size, data, digest);
  // The mapping registered read-only: copies from it run at the bus's rate (55 GB/s on the H200, against 8.5 GB/s
  // from pageable memory).
  const bool registered = cudaHostRegister((void*)file, size, cudaHostRegisterReadOnly) == cudaSuccess;
  if (!registered) cudaGetLastError();
  lk_resident_weights w;
  w.digest = lk_xxh64((const uint8_t*)manifest.data(), manifest.size());
  unsigned char* staging = nullptr;
  size_t staging_bytes = 0;
  std::string name, type;
  while (in >> word) {
    if (word == "matrix") {
      unsigned long long rows = 0, cols = 0, offset = 0;
      if (!(in >> name >> type >> rows >> cols >> offset)) break;
      const int block = lk_block_type(type.c_str());
      if (!block && type != "q8_0" && type != "f32" && type != "f16" && type != "bf16") {
        fprintf(stderr, "%s: matrix %s is in a format this host does not read (%s)\n", manifest_path, name.c_str(),
                type.c_str());
        exit(LK_EXIT_USAGE);
      }
      const size_t bytes = type == "q8_0" ? rows * cols / 32 * 34
                           : block     ? rows * cols / lk_block_elems(block) * lk_block_bytes(block)
                                       : rows * cols * (type == "f32" ? 4 : 2);
      if (offset > size || bytes > size - offset) {
        fprintf(stderr, "%s: matrix %s lies outside the checkpoint\n", manifest_path, name.c_str());
        exit(LK_EXIT_USAGE);
      }
      lk_resident_weights::Matrix m;
      if (type == "q8_0") {
        const size_t blocks = rows * cols / 32, raw = blocks * 34;
        if (raw > staging_bytes) {
          if (staging) CK(cudaFree(staging));
          CK(cudaMalloc(&staging, raw));
          staging_bytes = raw;
        }
        CK(cudaMalloc(&m.q, rows * cols));
        CK(cudaMalloc(&m.s, blocks * 2));
        CK(cudaMemcpy(staging, file + offset, raw, cudaMemcpyHostToDevice));
        lk_split_q8<<<(unsigned)((blocks + 255) / 256), 256>>>(staging, (signed char*)m.q, (__half*)m.s, blocks);
        CKL();
        w.bytes += rows * cols + blocks * 2;
      } else if (block) {
        const std::vector<lk_plane> planes = lk_planes(block, file + offset, rows * cols);
        void** dst[4] = {&m.q, &m.h, &m.s, &m.d};
        for (int i = 0; i < 4; ++i) {
          if (planes[i].empty()) continue;
          CK(cudaMalloc(dst[i], planes[i].size()));
          CK(cudaMemcpy(*dst[i], planes[i].data(), planes[i].size(), cudaMemcpyHostToDevice));
          w.bytes += planes[i].size();
        }
      } else {
        const size_t elem = type == "f32" ? 4 : 2;
        CK(cudaMalloc(&m.q, rows * cols * elem));
        CK(cudaMemcpy(m.q, file + offset, rows * cols * elem, cudaMemcpyHostToDevice));
        w.bytes += rows * cols * elem;
      }
      w.matrices.push_back(m);
    } else if (word == "vector") {
      unsigned long long n = 0, offset = 0;
      if (!(in >> name >> n >> offset)) break;
      if (offset > size || n * 4 > size - offset) {
        fprintf(stderr, "%s: vector %s lies outside the checkpoint\n", manifest_path, name.c_str());
        exit(LK_EXIT_USAGE);
      }
      void* d = nullptr;
      CK(cudaMalloc(&d, n * 4));
      CK(cudaMemcpy(d, file + offset, n * 4, cudaMemcpyHostToDevice));
      w.vectors.push_back(d);
      w.bytes += n * 4;
    } else {
      fprintf(stderr, "%s: unknown record %s\n", manifest_path, word.c_str());
      exit(LK_EXIT_USAGE);
    }
  }
  if (!in.eof()) {
    fprintf(stderr, "%s: a record does not parse\n", manifest_path);
    exit(LK_EXIT_USAGE);
  }
  CK(cudaDeviceSynchronize());
  lk_planes_done();
  if (staging) CK(cudaFree(staging));
  if (registered) CK(cudaHostUnregister((void*)file));
  munmap((void*)file, size);
  return w;
}

// One kernel call of an image, its parameters laid out in bytes with their pointers resolved.
struct lk_resident_call {
  cudaKernel_t kernel;
  dim3 grid, block;
  size_t smem;
  std::vector<std::vector<unsigned char>> params;
  std::vector<void*> args;  // into params
};

// One launch of an image's form.
struct lk_resident_launch {
  int stream = 0, fork = 0, join = 0;
  std::string kind, output;
  std::vector<lk_resident_call> calls;
};

// A lane image read, its kernels loaded, its memory allocated.
struct lk_resident_lane {
  int act_bytes = 4, vocab = 0, ctx = 0;
  bool graphs = true, side_streams = false, pdl = false;
  uint64_t sidecar_bytes = 0, sidecar_digest = 0;
  unsigned char* memory = nullptr;  // the side arrays, the carried state and the arena
  size_t bytes = 0;
  std::vector<unsigned char*> side, carried;
  std::vector<std::pair<size_t, size_t>> side_at;  // each side array's (sidecar byte offset, count)
  std::vector<std::string> carried_names;
  unsigned char* arena = nullptr;
  std::vector<std::vector<lk_resident_launch>> forms;
  std::vector<int> rows;
  std::vector<int> token;          // a form's token input: a carried index
  std::vector<size_t> logits;      // a form's logits: an arena byte offset
  std::vector<std::string> names;  // kinds and outputs for lk_form, kept alive
  ~lk_resident_lane() {
    if (memory) cudaFree(memory);
  }
  unsigned char* carried_named(const char* n) const {
    for (size_t i = 0; i < carried_names.size(); ++i)
      if (carried_names[i] == n) return carried[i];
    return nullptr;
  }
};

// The kernel libraries loaded so far, by cubin path, their kernels, and each kernel's parameter sizes as the driver
// reports them (what an image's parameters are checked against).
static std::map<std::string, cudaLibrary_t> lk_libraries;
static std::map<std::pair<std::string, std::string>, cudaKernel_t> lk_kernels;
static std::map<cudaKernel_t, std::vector<size_t>> lk_param_sizes;

static const std::vector<size_t>& lk_params_of(cudaKernel_t k) {
  auto it = lk_param_sizes.find(k);
  if (it != lk_param_sizes.end()) return it->second;
  std::vector<size_t> sizes;
  for (size_t i = 0;; ++i) {
    size_t off = 0, size = 0;
    if (cudaFuncGetParamInfo((const void*)k, i, &off, &size) != cudaSuccess) break;
    sizes.push_back(size);
  }
  cudaGetLastError();  // (the query past the last parameter)
  return lk_param_sizes.emplace(k, sizes).first->second;
}

// Why the image at `path` cannot run, or empty; on success `lane` holds it ready to drive.
static std::string lk_resident_read(const char* path, const lk_resident_weights& w, lk_resident_lane& lane) {
  std::string text;
  if (!lk_read_file(path, text)) return std::string("cannot read the image ") + path + ": " + strerror(errno);
  std::istringstream in(text);
  std::string word;
  int version = 0;
  if (!(in >> word >> version) || word != "LANE_IMAGE" || version != 1) return "not a lane image of version 1";
  auto expect = [&](const char* name) {
    std::string w;
    return (bool)(in >> w) && w == name;
  };
  std::string weights;
  int graphs = 0, side_streams = 0, pdl = 0;
  size_t sides = 0, carried = 0, arena = 0, kernels = 0, forms = 0;
  if (!expect("weights") || !(in >> weights) || !expect("act_bytes") || !(in >> lane.act_bytes) ||
      !expect("vocab") || !(in >> lane.vocab) || !expect("ctx") || !(in >> lane.ctx) || !expect("graphs") ||
      !(in >> graphs) || !expect("side_streams") || !(in >> side_streams) || !expect("pdl") || !(in >> pdl) ||
      !expect("sidecar") || !(in >> lane.sidecar_bytes >> std::hex >> lane.sidecar_digest >> std::dec) ||
      !expect("side") || !(in >> sides))
    return "the image's header does not parse";
  if (strtoull(weights.c_str(), nullptr, 16) != w.digest) return "the image is of other weights than this host holds";
  lane.graphs = graphs != 0;
  lane.side_streams = side_streams != 0;
  lane.pdl = pdl != 0;
  for (size_t i = 0; i < sides; ++i) {
    size_t off = 0, count = 0;
    if (!(in >> word >> off >> count) || off + count * lane.act_bytes > lane.sidecar_bytes)
      return "a side array's record does not parse";
    lane.side_at.push_back({off, count});
  }
  if (!expect("carried") || !(in >> carried)) return "the carried state's records do not parse";
  std::vector<size_t> carried_bytes;
  for (size_t i = 0; i < carried; ++i) {
    size_t b = 0;
    if (!(in >> word >> b)) return "a carried buffer's record does not parse";
    lane.carried_names.push_back(word);
    carried_bytes.push_back(b);
  }
  if (!expect("arena") || !(in >> arena) || !expect("kernels") || !(in >> kernels)) return "the arena or kernels";
  // One allocation: the side arrays, the carried state (zeroed), the arena (poisoned: an unwritten read is a NaN).
  auto round = [](size_t n) { return (n + 255) / 256 * 256; };
  size_t total = 0;
  for (auto& [off, count] : lane.side_at) total += round(count * lane.act_bytes);
  for (size_t b : carried_bytes) total += round(b);
  total += round(arena);
  lane.bytes = total;
  if (cudaMalloc(&lane.memory, total) != cudaSuccess) {
    cudaGetLastError();
    lane.memory = nullptr;
    return "cannot allocate the lane's " + std::to_string(total) + " device bytes beside the weights";
  }
  unsigned char* at = lane.memory;
  for (auto& [off, count] : lane.side_at) lane.side.push_back(at), at += round(count * lane.act_bytes);
  for (size_t b : carried_bytes) {
    CK(cudaMemset(at, 0, b));
    lane.carried.push_back(at);
    at += round(b);
  }
  lane.arena = at;
  CK(cudaMemset(lane.arena, 0xff, arena));
  // The kernels, each from its module.
  std::vector<cudaKernel_t> ks;
  std::vector<size_t> smem;
  std::string line;
  std::getline(in, line);
  for (size_t i = 0; i < kernels; ++i) {
    if (!std::getline(in, line)) return "a kernel's record is missing";
    std::istringstream k(line);
    size_t index = 0, bytes = 0;
    std::string symbol, cubin;
    if (!(k >> index >> bytes >> symbol) || index != i) return "a kernel's record does not parse: " + line;
    std::getline(k >> std::ws, cubin);
    auto lib = lk_libraries.find(cubin);
    if (lib == lk_libraries.end()) {
      cudaLibrary_t l;
      if (cudaLibraryLoadFromFile(&l, cubin.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0) != cudaSuccess) {
        const cudaError_t e = cudaGetLastError();
        return "cannot load the kernel module " + cubin + ": " + cudaGetErrorString(e);
      }
      lib = lk_libraries.emplace(cubin, l).first;
    }
    auto kernel = lk_kernels.find({cubin, symbol});
    if (kernel == lk_kernels.end()) {
      cudaKernel_t kk;
      if (cudaLibraryGetKernel(&kk, lib->second, symbol.c_str()) != cudaSuccess) {
        cudaGetLastError();
        return "the kernel module " + cubin + " has no kernel " + symbol;
      }
      kernel = lk_kernels.emplace(std::make_pair(cubin, symbol), kk).first;
    }
    if (bytes) {
      int device = 0;
      CK(cudaGetDevice(&device));
      CK(cudaKernelSetAttributeForDevice(kernel->second, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes,
                                         device));
    }
    ks.push_back(kernel->second);
  }
  // The forms.
  if (!expect("forms") || !(in >> forms)) return "the forms' records do not parse";
  for (size_t fi = 0; fi < forms; ++fi) {
    int rows = 0;
    size_t token = 0, logits = 0, launches = 0;
    if (!expect("form") || !(in >> rows >> token >> logits >> launches) || token >= carried)
      return "a form's record does not parse";
    lane.rows.push_back(rows);
    lane.token.push_back((int)token);
    lane.logits.push_back(logits);
    lane.forms.emplace_back();
    for (size_t li = 0; li < launches; ++li) {
      lk_resident_launch l;
      size_t calls = 0;
      if (!expect("launch") || !(in >> l.stream >> l.fork >> l.join >> calls >> l.kind >> l.output) || l.stream > 2 ||
          l.fork > 2 || l.join > 2)
        return "a launch's record does not parse";
      for (size_t ci = 0; ci < calls; ++ci) {
        lk_resident_call c;
        size_t kernel = 0, params = 0;
        if (!expect("call") || !(in >> kernel >> c.grid.x >> c.grid.y >> c.grid.z >> c.block.x >> c.block.y >>
                                 c.block.z >> c.smem >> params) ||
            kernel >= ks.size())
          return "a call's record does not parse";
        c.kernel = ks[kernel];
        const std::vector<size_t>& sizes = lk_params_of(c.kernel);
        if (sizes.size() != params)
          return "kernel " + std::to_string(kernel) + " takes " + std::to_string(sizes.size()) +
                 " parameters, not the image's " + std::to_string(params);
        for (size_t pi = 0; pi < params; ++pi) {
          size_t bytes = 0, align = 0, items = 0;
          if (!expect("param") || !(in >> bytes >> align >> items) || bytes > 4096)
            return "a parameter's record does not parse";
          if (sizes[pi] != bytes)
            return "parameter " + std::to_string(pi) + " of a call to kernel " + std::to_string(kernel) + " takes " +
                   std::to_string(sizes[pi]) + " bytes, not the image's " + std::to_string(bytes);
          std::vector<unsigned char> blob(bytes, 0);
          for (size_t ii = 0; ii < items; ++ii) {
            std::string kind;
            size_t off = 0;
            if (!(in >> kind >> off) || kind.size() != 1) return "a parameter's item does not parse";
            if (kind == "p") {
              std::string space;
              size_t index = 0, byte = 0;
              if (!(in >> space >> index >> byte) || off + 8 > bytes) return "a pointer's item does not parse";
              unsigned char* base = nullptr;
              if (space == "n") base = nullptr;
              else if (space == "q" && index < w.matrices.size()) base = (unsigned char*)w.matrices[index].q;
              else if (space == "s" && index < w.matrices.size()) base = (unsigned char*)w.matrices[index].s;
              else if (space == "h" && index < w.matrices.size()) base = (unsigned char*)w.matrices[index].h;
              else if (space == "d" && index < w.matrices.size()) base = (unsigned char*)w.matrices[index].d;
              else if (space == "w" && index < w.matrices.size()) base = (unsigned char*)w.matrices[index].q;
              else if (space == "v" && index < w.vectors.size()) base = (unsigned char*)w.vectors[index];
              else if (space == "S" && index < lane.side.size()) base = lane.side[index];
              else if (space == "c" && index < lane.carried.size()) base = lane.carried[index];
              else if (space == "a" && index == 0) base = lane.arena;
              else return "a pointer's place " + space + " " + std::to_string(index) + " is unknown";
              const void* ptr = base ? (const void*)(base + byte) : nullptr;
              memcpy(blob.data() + off, &ptr, 8);
            } else {
              unsigned long long v = 0;
              long long iv = 0;
              if (kind == "i" ? !(in >> iv) : !(in >> v)) return "a number's item does not parse";
              const size_t n = kind == "d" ? 8 : 4;
              if (off + n > bytes) return "an item lies outside its parameter";
              if (kind == "i") {
                const int32_t x = (int32_t)iv;
                memcpy(blob.data() + off, &x, 4);
              } else if (kind == "f") {
                const uint32_t x = (uint32_t)v;
                memcpy(blob.data() + off, &x, 4);
              } else if (kind == "d") {
                memcpy(blob.data() + off, &v, 8);
              } else {
                return "an item of unknown kind " + kind;
              }
            }
          }
          c.params.push_back(std::move(blob));
        }
        for (auto& p : c.params) c.args.push_back(p.data());
        l.calls.push_back(std::move(c));
      }
      lane.forms.back().push_back(std::move(l));
    }
  }
  // The sidecar's arrays are uploaded by the caller (it reads the sidecar file).
  return {};
}

// One kernel call on stream `st` (under programmatic dependent launch, allowed to start while the one before drains).
static void lk_resident_call_on(const lk_resident_call& c, cudaStream_t st, bool pdl) {
  if (!pdl) {
    CK(cudaLaunchKernel((const void*)c.kernel, c.grid, c.block, (void**)c.args.data(), c.smem, st));
    return;
  }
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = c.grid;
  cfg.blockDim = c.block;
  cfg.dynamicSmemBytes = c.smem;
  cfg.stream = st;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelExC(&cfg, (const void*)c.kernel, (void**)c.args.data()));
}

// Runs one image: reads it, uploads its sidecar, drives it under the lane's command line `argv` (argv[1] the image
// where a lane has its checkpoint, argv[2] the sidecar, then the flags), frees it. Returns the lane's exit status.
static int lk_resident_run(const lk_resident_weights& w, int argc, char** argv) {
  const auto t0 = std::chrono::steady_clock::now();
  lk_resident_lane lane;
  if (std::string why = lk_resident_read(argv[1], w, lane); !why.empty()) {
    fprintf(stderr, "%s: %s\n", argv[1], why.c_str());
    return LK_EXIT_USAGE;
  }
  lk_args a;
  if (int e = lk_parse_args(argc, argv, a, lane.vocab, lane.ctx); e >= 0) return e;
  const std::vector<uint8_t> side = lk_read_sidecar(a.sidecar, lane.sidecar_bytes, lane.sidecar_digest);
  for (size_t i = 0; i < lane.side.size(); ++i)
    CK(cudaMemcpy(lane.side[i], side.data() + lane.side_at[i].first, lane.side_at[i].second * lane.act_bytes,
                  cudaMemcpyHostToDevice));
  printf("LANE_CONTRACT: %d\nDEVICE_BYTES: %zu\nHOST_BYTES: 0\nMOVED: 0\n", LK_CONTRACT, w.bytes + lane.bytes);
  printf("PHASE_MS: setup %.1f\n",
         std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  static bool sides = false;
  if (lane.side_streams && !sides) {
    lk_side_init();
    sides = true;
  }
  lk_stagger = a.stagger;
  lk_seed = a.seed;
  std::vector<lk_form> forms;
  for (size_t fi = 0; fi < lane.forms.size(); ++fi) {
    const std::vector<lk_resident_launch>* launches = &lane.forms[fi];
    const int rows = lane.rows[fi];
    const bool pdl = lane.pdl;
    lk_form f{rows,
              [launches, rows, pdl](cudaStream_t st0, const cudaEvent_t* ev) {
                for (size_t i = 0; i < launches->size(); ++i) {
                  const lk_resident_launch& l = (*launches)[i];
                  if (l.fork) lk_fork(st0, l.fork);
                  cudaStream_t st = l.stream ? lk_side[l.stream - 1] : st0;
                  lk_before(st, ev, rows, (int)i);
                  for (const lk_resident_call& c : l.calls) lk_resident_call_on(c, st, pdl);
                  if (l.join) lk_join(st0, l.join);
                }
                lk_after(st0, ev, (int)launches->size());
              },
              (int*)lane.carried[lane.token[fi]],
              lane.arena + lane.logits[fi],
              {},
              {},
              {}};
    for (const lk_resident_launch& l : *launches) {
      f.kinds.push_back(l.kind.c_str());
      f.outputs.push_back(l.output.c_str());
      f.kernels.push_back((int)l.calls.size());
    }
    forms.push_back(std::move(f));
  }
  const lk_state state{(int*)lane.carried_named("pos"),   (int*)lane.carried_named("tok"),
                       (int*)lane.carried_named("gen"),   (int*)lane.carried_named("count"),
                       (int*)lane.carried_named("prompt"), lane.vocab,
                       lane.ctx,                          lane.act_bytes};
  if (!state.pos || !state.tok || !state.gen || !state.count || !state.prompt) {
    fprintf(stderr, "%s: the image lacks the carried state every lane has\n", argv[1]);
    return LK_EXIT_USAGE;
  }
  const int status = lk_drive(a, forms, state, lane.graphs);
  CK(cudaDeviceSynchronize());
  CK(cudaGetLastError());
  return status;
}

int main(int argc, char** argv) {
  setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  if (argc != 3) {
    fprintf(stderr, "usage: %s <checkpoint.gguf> <weights manifest>\n", argv[0]);
    return LK_EXIT_USAGE;
  }
  CK(cudaFree(0));
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  const auto start = std::chrono::steady_clock::now();
  const lk_resident_weights w = lk_resident_upload(argv[1], argv[2]);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  printf("READY %zu %.1f\n", w.bytes, ms);
  fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "QUIT") break;
    std::vector<std::string> words;
    for (size_t at = 0; at <= line.size();) {
      const size_t tab = line.find('\t', at);
      words.push_back(line.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
      if (tab == std::string::npos) break;
      at = tab + 1;
    }
    int status = 2;
    if (words.size() >= 3 && words[0] == "RUN") {
      std::vector<char*> args = {(char*)"lane-host", (char*)words[1].c_str(), (char*)words[2].c_str()};
      for (size_t i = 3; i < words.size(); ++i) args.push_back((char*)words[i].c_str());
      status = lk_resident_run(w, (int)args.size(), args.data());
    } else {
      fprintf(stderr, "unknown command: %s\n", line.c_str());
    }
    fflush(stderr);
    printf("END %d\n", status);
    fflush(stdout);
  }
  return 0;
}
