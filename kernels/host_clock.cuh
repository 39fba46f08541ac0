// The lane's host runtime (after host_profile.cuh): a lane's forms' steps, and --profile's clocks behind one interface
// (how a profiled run's steps run and how each launch's time is read). Three clocks, chosen by lk_session::profile:
// - lk_graph_stamps: CUPTI's kernel stamps over the captured graphs. A step runs exactly as unprofiled; a launch's
//   time is from the end of the launch before it to its own end, so the launches' times add up to the step's.
// - lk_stream_stamps: CUPTI's stamps over uncaptured steps. CUPTI's hooks slow every host-side launch once attached,
//   so the first half of the decode steps (and the chunks before them) run plain, timed by a pair of events, before
//   it attaches; a launch's time is then the part of its kernels' spans after the kernel before ended, and the host's
//   gaps are one line (the plain steps' time less the launches').
// - lk_event_clock: where CUPTI cannot be loaded, the steps run uncaptured with an event before each launch (which
//   pays launch gaps a graph does not).
// (Owned by plain pointers: <memory> would add 7,000 lines to every lane nvcc reads, ~0.7 s of each build.)

// Runs one step of form `f`: its graph where it is captured, else launch by launch (an event before each launch when
// `ev` is given).
inline void lk_run_step(lk_form& f, cudaStream_t st, const cudaEvent_t* ev) {
  if (f.exec) CK(cudaGraphLaunch(f.exec, st));
  else f.step(st, ev);
}

// --profile's clock: runs a profiled step and adds each of its launches' times to the form's sums.
struct lk_clock {
  virtual ~lk_clock() = default;
  virtual const char* name() const = 0;  // the PROFILE_TIMING line's word
  // Runs one step of form `f` on `st` and adds its launches' times to f.ms (counting it in f.runs).
  virtual void step(lk_form& f, cudaStream_t st) = 0;
};

struct lk_event_clock : lk_clock {
  explicit lk_event_clock(std::vector<lk_form>& forms) {
    for (auto& f : forms) {
      if (!f.events.empty()) continue;
      f.events.resize(f.kinds.size() + 1);
      for (auto& e : f.events) CK(cudaEventCreate(&e));
    }
  }
  const char* name() const override { return "events"; }
  void step(lk_form& f, cudaStream_t st) override {
    f.step(st, f.events.data());
    CK(cudaStreamSynchronize(st));
    for (size_t k = 0; k < f.ms.size(); ++k) {
      float ms = 0.f;
      CK(cudaEventElapsedTime(&ms, f.events[k], f.events[k + 1]));
      f.ms[k] += ms;
    }
    ++f.runs;
  }
};

// A step's kernel spans (in start order) added to its launches' times. In a graph (`graph`): from the end of the launch
// before it (its first kernel's start, for the first) to the end of its last kernel; a launch that ran beside a later
// one and ended first gets 0. Without a graph: the parts of its kernels' spans after the kernel before ended.
inline void lk_add_spans(lk_form& f, const std::vector<lk_span>& sp, bool graph) {
  size_t want = 0;
  for (int c : f.kernels) want += (size_t)c;
  if (sp.size() != want) {
    fprintf(stderr, "--profile: %zu kernels recorded for a step of %zu\n", sp.size(), want);
    exit(LK_EXIT_CUDA);
  }
  unsigned long long prev = sp.empty() ? 0 : sp[0].start;
  for (size_t k = 0, at = 0; k < f.ms.size(); ++k) {
    const size_t first = at;
    at += (size_t)f.kernels[k];
    if (graph) {
      const unsigned long long end = std::max(prev, sp[at - 1].end);
      f.ms[k] += 1e-6 * (double)(end - prev);
      prev = end;
      continue;
    }
    for (size_t j = first; j < at; ++j) {
      const unsigned long long from = std::max(sp[j].start, prev);
      if (sp[j].end > from) f.ms[k] += 1e-6 * (double)(sp[j].end - from);
      prev = std::max(prev, sp[j].end);
    }
  }
  ++f.runs;
}

// Made once the graphs are captured (CUPTI loaded): attaches CUPTI until it is destroyed.
struct lk_graph_stamps : lk_clock {
  lk_graph_stamps() { lk_cupti_attach(); }
  ~lk_graph_stamps() override { lk_cupti_detach(); }
  const char* name() const override { return "kernels-graph"; }
  void step(lk_form& f, cudaStream_t st) override {
    lk_run_step(f, st, nullptr);
    CK(cudaStreamSynchronize(st));
    lk_add_spans(f, lk_cupti_take(), true);
  }
};

// Loads and attaches CUPTI only after the profiled run's first `(decode_steps + 1) / 2` decode steps ran plain; falls
// back to events where the library cannot be loaded then.
struct lk_stream_stamps : lk_clock {
  std::vector<lk_form>& forms;
  const int plain_decode;
  bool attached = false;
  lk_event_clock* fallback = nullptr;

  lk_stream_stamps(std::vector<lk_form>& f, int decode_steps) : forms(f), plain_decode((decode_steps + 1) / 2) {}
  ~lk_stream_stamps() override {
    if (attached) lk_cupti_detach();
    delete fallback;
  }
  const char* name() const override { return "kernels-stream"; }
  void step(lk_form& f, cudaStream_t st) override {
    if (fallback) return fallback->step(f, st);
    if (!attached) {
      if (f.rows != 1 || (int)f.plain.size() < plain_decode) {
        // A plain step, timed by a pair of events (read at the end: the host runs ahead as unprofiled).
        f.plain.emplace_back();
        CK(cudaEventCreate(&f.plain.back().first));
        CK(cudaEventCreate(&f.plain.back().second));
        CK(cudaEventRecord(f.plain.back().first, st));
        f.step(st, nullptr);
        CK(cudaEventRecord(f.plain.back().second, st));
        return;
      }
      if (!lk_cupti_load()) {
        fprintf(stderr, "--profile: no CUPTI library: the launches are timed by events\n");
        fallback = new lk_event_clock(forms);
        return fallback->step(f, st);
      }
      lk_cupti_attach();
      attached = true;
    }
    f.step(st, nullptr);
    CK(cudaStreamSynchronize(st));
    lk_add_spans(f, lk_cupti_take(), false);
  }
};
