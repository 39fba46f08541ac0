// The lane's host runtime (after host_clock.cuh): the drive loop that runs a lane's prompts and workloads, measures
// them and prints the output contract.

// One run of a prompt: the tokens it generated and its times.
struct lk_outcome {
  std::vector<int> tokens;
  float prefill_ms = 0, decode_ms = 0;
};

// A lane's forms on one stream, run and measured: each form's step captured as a graph (the `graphs` knob), the
// --profile accounting of a profiled run, and the runs of prompts.
struct lk_session {
  std::vector<lk_form>& forms;
  const lk_state& s;
  const bool graphs;
  cudaStream_t st = nullptr;
  bool captured = false;            // the forms' steps are captured as graphs
  lk_clock* clock = nullptr;        // during a profiled run: its clock (host_clock.cuh), owned
  cudaEvent_t e0, e1, e2;

  lk_session(std::vector<lk_form>& f, const lk_state& state, bool g) : forms(f), s(state), graphs(g) {
    CK(cudaStreamCreate(&st));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventCreate(&e2));
  }
  ~lk_session() {
    set_clock(nullptr);
    for (auto& f : forms) {
      if (f.exec) cudaGraphExecDestroy(f.exec);
      f.exec = nullptr;
      for (auto& e : f.events) cudaEventDestroy(e);
      f.events.clear();
      for (auto& [a, b] : f.plain) cudaEventDestroy(a), cudaEventDestroy(b);
      f.plain.clear();
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaEventDestroy(e2);
    cudaStreamDestroy(st);
  }

  lk_form& form(int rows) {
    for (auto& f : forms) if (f.rows == rows) return f;
    fprintf(stderr, "the lane has no form of %d rows\n", rows);
    exit(LK_EXIT_CUDA);
  }

  // Captures (again) every form's step as a graph when `on`, under the stagger switch as it is now; else drops them.
  void capture(bool on) {
    for (auto& f : forms) {
      if (f.exec) CK(cudaGraphExecDestroy(f.exec));
      f.exec = nullptr;
      if (!on) continue;
      cudaGraph_t g;
      CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
      f.step(st, nullptr);
      CK(cudaStreamEndCapture(st, &g));
      CK(cudaGraphInstantiate(&f.exec, g, 0));
      CK(cudaGraphDestroy(g));
    }
  }

  // Makes the next runs a profiled run (`on`) or plain ones, `decode_steps` the decode steps the profiled run takes.
  // Under --profile the kernels' own stamps time the launches (CUPTI), graphs and all; without CUPTI the steps run
  // uncaptured under events. A graph lane loads CUPTI up front; an uncaptured one only once its plain steps are done,
  // so that they run as unprofiled steps do.
  void profile(bool on, int decode_steps) {
    set_clock(nullptr);  // a CUPTI clock detaches
    const bool stamps = on && (!graphs || lk_cupti_load());
    const bool want = graphs && (!on || stamps);
    if (want != captured || !want) capture(want);
    captured = want;
    if (!on) return;
    for (auto& f : forms) {
      f.ms.assign(f.kinds.size(), 0.0);
      f.runs = 0;
      for (auto& [a, b] : f.plain) cudaEventDestroy(a), cudaEventDestroy(b);
      f.plain.clear();
    }
    if (!stamps) set_clock(new lk_event_clock(forms));
    else if (captured) set_clock(new lk_graph_stamps());
    else set_clock(new lk_stream_stamps(forms, decode_steps));
    printf("PROFILE_TIMING: %s\n", clock->name());
  }
  bool profiling() const { return clock != nullptr; }
  void set_clock(lk_clock* c) {
    delete clock;
    clock = c;
  }

  // Runs one step of form `f`: timed by the clock during a profiled run.
  void run(lk_form& f) {
    if (clock) clock->step(f, st);
    else lk_run_step(f, st, nullptr);
  }

  // Prefills `prompt` in the largest chunks that fit and generates `n_gen` tokens; appends every generated position's
  // logits to `logits` (as f32) when given.
  lk_outcome generate(const std::vector<int>& prompt, int n_gen, std::vector<float>* logits) {
    std::vector<unsigned char> raw;
    auto dump = [&](const lk_form& f) {
      if (!logits) return;
      raw.resize((size_t)s.vocab * s.act_bytes);
      CK(cudaMemcpyAsync(raw.data(), f.logits, raw.size(), cudaMemcpyDeviceToHost, st));
      CK(cudaStreamSynchronize(st));
      for (int i = 0; i < s.vocab; ++i)
        logits->push_back(s.act_bytes == 8 ? (float)((const double*)raw.data())[i] : ((const float*)raw.data())[i]);
    };
    CK(cudaMemsetAsync(s.pos, 0, 4, st));
    CK(cudaMemsetAsync(s.count, 0, 4, st));
    CK(cudaMemcpyAsync(s.prompt, prompt.data(), prompt.size() * 4, cudaMemcpyHostToDevice, st));
    CK(cudaEventRecord(e0, st));
    int steps = 0;
    const lk_form* last = nullptr;
    for (int at = 0; at < (int)prompt.size();) {
      int rows = 1;
      for (auto& f : forms) if (f.rows > rows && f.rows <= (int)prompt.size() - at) rows = f.rows;
      lk_form& f = form(rows);
      CK(cudaMemcpyAsync(f.tok, s.prompt + at, rows * 4, cudaMemcpyDeviceToDevice, st));
      run(f);
      last = &f;
      at += rows;
      ++steps;
    }
    CK(cudaEventRecord(e1, st));
    dump(*last);
    lk_form& decode = form(1);
    for (int g = 1; g < n_gen; ++g) {
#if LK_TIMELINE
      if (g == n_gen / 2) lk_tl_arm(1);
#endif
      run(decode);
#if LK_TIMELINE
      if (g == n_gen / 2) lk_tl_arm(0);
#endif
      dump(decode);
      ++steps;
    }
    CK(cudaEventRecord(e2, st));
    CK(cudaStreamSynchronize(st));
    CK(cudaGetLastError());
#if LK_TIMELINE
    lk_tl_dump();  // (past the decode's timing: its copy of the records is not the steps')
#endif
    lk_outcome o;
    CK(cudaEventElapsedTime(&o.prefill_ms, e0, e1));
    CK(cudaEventElapsedTime(&o.decode_ms, e1, e2));
    std::vector<int> gen(steps);
    CK(cudaMemcpy(gen.data(), s.gen, steps * 4, cudaMemcpyDeviceToHost));
    o.tokens.assign(gen.begin() + (steps - n_gen), gen.end());
    return o;
  }

  // The profiled run's lines: each form's launches, and under CUPTI without a graph the host's gaps (its plain steps
  // less its launches' times); then how many times each form ran.
  void print_profile() {
    auto lines = [&](const lk_form& f, const char* tag, const char* rows) {
      double total = 0;
      for (size_t k = 0; k < f.ms.size(); ++k) {
        const double us = 1000.0 * f.ms[k] / f.runs;
        printf("%s: %s%s %s %.3f\n", tag, rows, f.kinds[k], f.outputs[k], us);
        total += us;
      }
      if (!f.plain.empty()) {
        double plain_ms = 0;
        for (auto& [e0, e1] : f.plain) {
          float ms = 0.f;
          CK(cudaEventElapsedTime(&ms, e0, e1));
          plain_ms += ms;
        }
        const double gaps = 1000.0 * plain_ms / f.plain.size() - total;
        printf("%s: %slaunch_gaps host %.3f\n", tag, rows, gaps);
        total += gaps;
      }
      return total;
    };
    const lk_form& d = form(1);
    if (d.runs) printf("PROFILE_TOTAL_US: %.3f\n", lines(d, "PROFILE", ""));
    for (auto& f : forms) {
      if (f.rows == 1 || !f.runs) continue;
      char rows[16];
      snprintf(rows, sizeof rows, "%d ", f.rows);
      const double chunk = lines(f, "PROFILE_CHUNK", rows);
      printf("PROFILE_CHUNK_TOTAL_US: %d %.3f\n", f.rows, chunk);
    }
  }

  // How many steps of each form the profiled run took.
  void print_runs() {
    for (auto& f : forms)
      if (f.runs || !f.plain.empty()) printf("PROFILE_RUNS: %d %d\n", f.rows, f.runs + (int)f.plain.size());
  }
};

// The workload's prompt: `n` tokens of the vocabulary, the same for every lane of the model.
static std::vector<int> lk_workload_tokens(int n, int vocab) {
  std::vector<int> t(n);
  unsigned long long h = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < n; ++i) {
    h ^= h >> 31; h *= 0xBF58476D1CE4E5B9ULL; h ^= h >> 29; h += 0x94D049BB133111EBULL;
    t[i] = (int)(h % (unsigned long long)vocab);
  }
  return t;
}

// Runs the prompts and prints each one's lines; appends their logits when `logits` is given.
static void lk_run_prompts(lk_session& x, const lk_args& a, std::vector<float>* logits) {
  for (auto& job : a.jobs) {
    const lk_outcome o = x.generate(job.second, job.first, logits);
    printf("TOKENS:");
    for (int t : o.tokens) printf(" %d", t);
    printf("\nPREFILL_MS: %.3f\n", o.prefill_ms);
    const int n_gen = job.first;
    if (n_gen > 1)
      printf("DECODE_MS_PER_TOKEN: %.4f\nDECODE_TOK_PER_S: %.2f\n", o.decode_ms / (n_gen - 1),
             1000.0 * (n_gen - 1) / o.decode_ms);
    fflush(stdout);
  }
}

int lk_drive(lk_args& a, std::vector<lk_form>& forms, const lk_state& s, bool graphs) {
  // Each phase's wall time, for the record of where a measurement's time goes.
  auto t = std::chrono::steady_clock::now();
  auto phase = [&](const char* name) {
    const auto now = std::chrono::steady_clock::now();
    printf("PHASE_MS: %s %.1f\n", name, std::chrono::duration<double, std::milli>(now - t).count());
    t = now;
  };
  lk_session x(forms, s, graphs);
  const bool workload = a.workload_prompt > 0;
  int prompt_decode = 0;
  for (auto& job : a.jobs) prompt_decode += std::max(job.first - 1, 0);
  x.profile(a.prof && !workload, prompt_decode);
  const bool keep = a.logits || !a.stagger_check.empty();
  std::vector<float> logits;
  lk_run_prompts(x, a, keep ? &logits : nullptr);
  if (x.profiling()) {
    x.print_profile();
    x.print_runs();
  }
  phase("prompts");
  if (workload) {
    x.profile(false, 0);
    const std::vector<int> tokens = lk_workload_tokens(a.workload_prompt, s.vocab);
    // A warm-up run prefills the whole prompt (every chunk form the workload takes runs once) and decodes one step:
    // the decode step's graph is the same at every position.
    // --cutoff: a run's figures (a warm-up's decode step standing for all of them) against the limit; past it, the
    // timed runs and the profile are left out (a screen need not time to the end what is already too slow).
    bool cut = false;
    auto past_cutoff = [&](const lk_outcome& o, int gen) {
      if (a.cutoff_on < 0) return false;
      const double step = gen > 1 ? o.decode_ms / (gen - 1) : 0.0;
      const double total = o.prefill_ms + step * (a.workload_gen - 1);
      const double figure = a.cutoff_on == 0 ? total : a.cutoff_on == 1 ? step : o.prefill_ms;
      if (!(figure > a.cutoff_ms)) return false;
      printf("CUTOFF: %d %d %.4f %.5f %.4f %.4f\n", a.workload_prompt, a.workload_gen, o.prefill_ms, step, total,
             a.cutoff_ms);
      fflush(stdout);
      return true;
    };
    for (int i = 0; i < a.warmup && !cut; ++i) {
      const int gen = std::min(a.workload_gen, 2);
      const lk_outcome o = x.generate(tokens, gen, nullptr);
      cut = i == a.warmup - 1 && past_cutoff(o, gen);
    }
    for (int i = 0; i < a.repeat && !cut; ++i) {
      const lk_outcome o = x.generate(tokens, a.workload_gen, nullptr);
      printf("WORKLOAD: %d %d %d %.4f %.5f %.4f\n", i + 1, a.workload_prompt, a.workload_gen, o.prefill_ms,
             a.workload_gen > 1 ? o.decode_ms / (a.workload_gen - 1) : 0.0, o.prefill_ms + o.decode_ms);
      fflush(stdout);
      cut = i == 0 && a.warmup == 0 && past_cutoff(o, a.workload_gen);
    }
    phase("workload");
    if (a.prof && !cut) {
      // The profiled run: the whole prefill and at most 16 decode steps (each launch's mean is as good after 16);
      // PROFILE_RUNS says how many steps of each form one run of the workload takes.
      const int gen = std::min(a.workload_gen, 17);
      x.profile(true, gen - 1);
      x.generate(tokens, gen, nullptr);
      x.print_profile();
      std::vector<std::pair<int, int>> steps;  // (rows, steps) of one run of the workload, its chunks' in order
      auto add = [&](int rows, int n) {
        for (auto& e : steps) if (e.first == rows) { e.second += n; return; }
        steps.push_back({rows, n});
      };
      for (int at = 0; at < a.workload_prompt;) {
        int rows = 1;
        for (auto& f : forms) if (f.rows > rows && f.rows <= a.workload_prompt - at) rows = f.rows;
        add(rows, 1);
        at += rows;
      }
      add(1, a.workload_gen - 1);
      for (auto& [rows, n] : steps) if (n) printf("PROFILE_RUNS: %d %d\n", rows, n);
      phase("profile");
    }
  }
  if (keep) printf("LOGITS_HASH: %016llx\n", (unsigned long long)lk_xxh64((const uint8_t*)logits.data(), logits.size() * 4));
  if (!a.stagger_check.empty()) {
    x.profile(false, 0);
    const bool stagger = lk_stagger;
    const unsigned long long seed = lk_seed;
    for (unsigned long long check : a.stagger_check) {
      lk_stagger = true;
      lk_seed = check;
      x.capture(graphs);
      std::vector<float> again;
      for (auto& job : a.jobs) x.generate(job.second, job.first, &again);
      const bool same = again.size() == logits.size() && memcmp(again.data(), logits.data(), logits.size() * 4) == 0;
      printf("STAGGER_CHECK: %llu %s\n", check, same ? "same" : "differs");
      fflush(stdout);
    }
    lk_stagger = stagger;
    lk_seed = seed;
    x.capture(graphs);
    phase("stagger");
  }
  if (a.logits) {
    fwrite(logits.data(), 4, logits.size(), a.logits);
    fclose(a.logits);
    a.logits = nullptr;
  }
  x.set_clock(nullptr);
  fflush(stdout);
  return 0;
}
