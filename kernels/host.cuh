// The lane's host runtime, in five files compiled in this order after its interface (host_api.cuh): its command line
// (here), its memory and uploads (host_memory.cuh), its stagger, side streams and CUPTI (host_profile.cuh), its forms'
// runs and --profile's clocks (host_clock.cuh), and the drive loop that prefills, generates, measures and prints the
// output contract (host_drive.cuh; compiler/lane_output.hpp reads it), exiting with kernels/exits.cuh's codes. The
// emitted part of a program declares its constants and forms and calls into these; so does the resident host
// (resident.cuh), which runs many lanes' images over one upload of the weights.

#include <chrono>
#include <cmath>

// Prints how the program is run; returns LK_EXIT_USAGE.
static int lk_usage(const char* prog) {
  fprintf(stderr,
          "usage: %s <checkpoint.gguf> <sidecar> <n_gen> [--logits <file>] <token> ...\n"
          "       %s <checkpoint.gguf> <sidecar> --prompts <file> [--logits <file>]  (a line a prompt: <n_gen> <token> ...)\n"
          "       --profile anywhere times every launch of every step\n"
          "       --stagger <seed> anywhere holds each launch back by a stall drawn from the seed\n"
          "       --device-bytes <n> anywhere keeps the program to n device bytes, the matrices past them in host memory\n"
          "       --workload <P>,<G> times a prompt of P tokens generating G after the prompts (--repeat <n> times, after\n"
          "         --warmup <n> untimed runs; --profile then times every launch of one more run of it)\n"
          "       --stagger-check <seed>[,<seed>...] runs the prompts again under each seed: their logits must not change\n"
          "       --cutoff <workload|decode|prefill>=<ms> stops after the workload's first run (a warm-up's estimate) when\n"
          "         that figure is past ms: a CUTOFF line instead of the timed runs and the profile\n",
          prog, prog);
  return LK_EXIT_USAGE;
}

// Reads a whole number in [lo, hi] or says what is wrong.
static bool lk_number(const char* s, long long lo, long long hi, long long* out, const char* what) {
  char* e = nullptr;
  errno = 0;
  long long v = strtoll(s, &e, 10);
  if (!*s || *e || errno || v < lo || v > hi) {
    fprintf(stderr, "%s must be a whole number in [%lld, %lld], not \"%s\"\n", what, lo, hi, s);
    return false;
  }
  *out = v;
  return true;
}

// Parses the command line into `a`; returns -1 when the program should go on, else its exit code.
int lk_parse_args(int argc, char** argv, lk_args& a, int vocab, int ctx) {
  std::vector<char*> pos;
  const char* logits_path = nullptr;
  const char* prompts_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    long long v = 0;
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) { fprintf(stderr, "%s needs a value\n", flag); return nullptr; }
      return argv[++i];
    };
    if (s == "--profile") a.prof = true;
    else if (s == "--stagger") {
      const char* x = value("--stagger");
      if (!x || !lk_number(x, 0, LLONG_MAX, &v, "--stagger's seed")) return LK_EXIT_USAGE;
      a.stagger = true; a.seed = (unsigned long long)v;
    } else if (s == "--device-bytes") {
      const char* x = value("--device-bytes");
      if (!x || !lk_number(x, 0, LLONG_MAX, &v, "--device-bytes")) return LK_EXIT_USAGE;
      a.device_bytes = (size_t)v;
    } else if (s == "--workload") {
      const char* x = value("--workload");
      if (!x) return LK_EXIT_USAGE;
      const char* comma = strchr(x, ',');
      if (!comma) { fprintf(stderr, "--workload takes <prompt>,<generated>, not \"%s\"\n", x); return LK_EXIT_USAGE; }
      const std::string p(x, (size_t)(comma - x));
      long long g = 0;
      if (!lk_number(p.c_str(), 1, ctx, &v, "--workload's prompt") ||
          !lk_number(comma + 1, 1, ctx, &g, "--workload's generated tokens"))
        return LK_EXIT_USAGE;
      if (v + g > ctx) {
        fprintf(stderr, "--workload %lld,%lld needs %lld positions; the lane holds %d\n", v, g, v + g, ctx);
        return LK_EXIT_USAGE;
      }
      a.workload_prompt = (int)v; a.workload_gen = (int)g;
    } else if (s == "--repeat" || s == "--warmup") {
      const char* x = value(s.c_str());
      if (!x || !lk_number(x, s == "--repeat" ? 1 : 0, 1000000, &v, s.c_str())) return LK_EXIT_USAGE;
      (s == "--repeat" ? a.repeat : a.warmup) = (int)v;
    } else if (s == "--stagger-check") {
      const char* x = value("--stagger-check");
      if (!x) return LK_EXIT_USAGE;
      for (const char* at = x;;) {
        const char* comma = strchr(at, ',');
        std::string one(at, comma ? (size_t)(comma - at) : strlen(at));
        if (!lk_number(one.c_str(), 0, LLONG_MAX, &v, "--stagger-check's seed")) return LK_EXIT_USAGE;
        a.stagger_check.push_back((unsigned long long)v);
        if (!comma) break;
        at = comma + 1;
      }
    } else if (s == "--cutoff") {
      const char* x = value("--cutoff");
      if (!x) return LK_EXIT_USAGE;
      const char* eq = strchr(x, '=');
      const std::string on(x, eq ? (size_t)(eq - x) : strlen(x));
      char* end = nullptr;
      const double ms = eq ? strtod(eq + 1, &end) : 0;
      a.cutoff_on = on == "workload" ? 0 : on == "decode" ? 1 : on == "prefill" ? 2 : -1;
      if (a.cutoff_on < 0 || !eq || !eq[1] || *end || !(ms > 0) || !std::isfinite(ms)) {
        fprintf(stderr, "--cutoff takes <workload|decode|prefill>=<ms> (ms > 0), not \"%s\"\n", x);
        return LK_EXIT_USAGE;
      }
      a.cutoff_ms = ms;
    } else if (s == "--logits") {
      if (!(logits_path = value("--logits"))) return LK_EXIT_USAGE;
    } else if (s == "--prompts") {
      if (!(prompts_path = value("--prompts"))) return LK_EXIT_USAGE;
    } else if (s.size() > 2 && s[0] == '-' && s[1] == '-') {
      fprintf(stderr, "unknown flag %s\n", s.c_str());
      return lk_usage(argv[0]);
    } else pos.push_back(argv[i]);
  }
  if (pos.size() < 2 || (!prompts_path && pos.size() < 4) || (prompts_path && pos.size() != 2)) return lk_usage(argv[0]);
  a.checkpoint = pos[0];
  a.sidecar = pos[1];
  auto add_job = [&](const std::vector<long long>& v, const char* where) {
    long long n_gen = v[0];
    std::vector<int> prompt;
    for (size_t i = 1; i < v.size(); ++i) {
      if (v[i] < 0 || v[i] >= vocab) { fprintf(stderr, "%s: token %lld is outside the vocabulary [0, %d)\n", where, v[i], vocab); return false; }
      prompt.push_back((int)v[i]);
    }
    if (prompt.empty() || n_gen < 1 || (long long)prompt.size() + n_gen > ctx) {
      fprintf(stderr, "%s: a prompt of %zu tokens generating %lld needs %lld positions; the lane holds %d and takes at least one of each\n",
              where, prompt.size(), n_gen, (long long)prompt.size() + n_gen, ctx);
      return false;
    }
    a.jobs.push_back({(int)n_gen, prompt});
    return true;
  };
  if (prompts_path) {
    FILE* pf = fopen(prompts_path, "r");
    if (!pf) { fprintf(stderr, "cannot read the prompts %s: %s\n", prompts_path, strerror(errno)); return LK_EXIT_USAGE; }
    std::vector<char> line(1 << 20);
    int at = 0;
    while (fgets(line.data(), (int)line.size(), pf)) {
      ++at;
      std::vector<long long> v;
      char* p = line.data();
      char* e = nullptr;
      for (long long x = strtoll(p, &e, 10); e != p; x = strtoll(p, &e, 10)) { v.push_back(x); p = e; }
      while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') ++p;
      if (*p) { fprintf(stderr, "%s:%d: not a list of numbers\n", prompts_path, at); fclose(pf); return LK_EXIT_USAGE; }
      if (v.empty()) continue;
      std::string where = std::string(prompts_path) + ":" + std::to_string(at);
      if (v.size() < 2 || !add_job(v, where.c_str())) { if (v.size() < 2) fprintf(stderr, "%s: a prompt needs n_gen and a token\n", where.c_str()); fclose(pf); return LK_EXIT_USAGE; }
    }
    fclose(pf);
    if (a.jobs.empty()) { fprintf(stderr, "%s holds no prompt\n", prompts_path); return LK_EXIT_USAGE; }
  } else {
    std::vector<long long> v;
    for (size_t i = 2; i < pos.size(); ++i) {
      long long x = 0;
      if (!lk_number(pos[i], i == 2 ? 1 : 0, i == 2 ? ctx : vocab - 1, &x, i == 2 ? "n_gen" : "a token")) return LK_EXIT_USAGE;
      v.push_back(x);
    }
    if (!add_job(v, "the prompt")) return LK_EXIT_USAGE;
  }
  if (logits_path && !(a.logits = fopen(logits_path, "wb"))) {
    fprintf(stderr, "cannot write the logits to %s: %s\n", logits_path, strerror(errno));
    return LK_EXIT_USAGE;
  }
  return -1;
}
