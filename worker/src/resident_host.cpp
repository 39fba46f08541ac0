// The resident host process: started with pipes, its READY awaited, images run one at a time, killed when late.
#include "worker/resident_host.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "compiler/error.hpp"

namespace lt::worker {

namespace {

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

ResidentHost::ResidentHost(std::filesystem::path program, std::filesystem::path checkpoint,
                           std::filesystem::path manifest)
    : program_(std::move(program)), checkpoint_(std::move(checkpoint)), manifest_(std::move(manifest)) {}

ResidentHost::~ResidentHost() {
  stop();
}

void ResidentHost::kill_now() {
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  for (int* fd : {&in_, &out_, &err_})
    if (*fd >= 0) close(*fd), *fd = -1;
  pid_ = -1;
  pending_out_.clear();
}

void ResidentHost::stop() {
  if (pid_ <= 0) return;
  const std::string quit = "QUIT\n";
  (void)!write(in_, quit.data(), quit.size());
  close(in_);
  in_ = -1;
  // A grace period for the host to free the device, then the kill.
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  while (since(start) < 5) {
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) {
      for (int* fd : {&out_, &err_})
        if (*fd >= 0) close(*fd), *fd = -1;
      kill(-pid_, SIGKILL);  // anything it left in its group
      pid_ = -1;
      return;
    }
    usleep(20000);
  }
  kill_now();
}

double ResidentHost::start(double timeout_s) {
  if (pid_ > 0) return 0;
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
    throw lt::Error("cannot create a pipe for the resident host");
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) throw lt::Error(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    const std::string prog = program_.string(), ck = checkpoint_.string(), man = manifest_.string();
    execl(prog.c_str(), prog.c_str(), ck.c_str(), man.c_str(), static_cast<char*>(nullptr));
    std::fprintf(stderr, "cannot run %s: %s\n", prog.c_str(), std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  pid_ = pid;
  in_ = in[1];
  out_ = out[0];
  err_ = err[0];
  signal(SIGPIPE, SIG_IGN);  // a host that dies mid-command must not take the worker with it
  // READY <device bytes> <upload ms>
  const ResidentRun r = run("", "", {}, timeout_s, nullptr);
  if (r.died || r.timed_out || r.out.rfind("READY ", 0) != 0) {
    kill_now();
    throw lt::Error("the resident host did not come up" + std::string(r.timed_out ? " in time" : "") + ": " +
                    r.err.substr(0, 2000) + r.out.substr(0, 500));
  }
  weight_bytes_ = std::strtoull(r.out.c_str() + 6, nullptr, 10);
  return since(t0);
}

ResidentRun ResidentHost::run(const std::filesystem::path& image, const std::filesystem::path& sidecar,
                              const std::vector<std::string>& flags, double timeout_s,
                              const std::atomic<bool>* cancel) {
  ResidentRun r;
  if (pid_ <= 0) {
    r.died = true;
    r.err = "the resident host is not running";
    return r;
  }
  const auto t0 = std::chrono::steady_clock::now();
  // An empty image: only wait for the first line (READY).
  const bool ready = image.empty();
  if (!ready) {
    std::string cmd = "RUN\t" + image.string() + "\t" + sidecar.string();
    for (const std::string& f : flags) cmd += "\t" + f;
    cmd += "\n";
    if (write(in_, cmd.data(), cmd.size()) != ssize_t(cmd.size())) {
      r.died = true;
      r.err = "the resident host no longer reads its commands";
      kill_now();
      return r;
    }
  }
  pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
  char buf[65536];
  for (;;) {
    // A whole line ending the run: READY ... (start) or END <status>.
    for (size_t nl; (nl = pending_out_.find('\n')) != std::string::npos;) {
      const std::string line = pending_out_.substr(0, nl);
      pending_out_.erase(0, nl + 1);
      if (ready && line.rfind("READY ", 0) == 0) {
        r.out = line;
        r.status = 0;
        r.seconds = since(t0);
        return r;
      }
      if (!ready && line.rfind("END ", 0) == 0) {
        r.status = std::atoi(line.c_str() + 4);
        r.seconds = since(t0);
        // What the host wrote to its error stream so far belongs to this run.
        for (;;) {
          pollfd e = {err_, POLLIN, 0};
          if (poll(&e, 1, 0) <= 0 || !(e.revents & POLLIN)) break;
          const ssize_t n = read(err_, buf, sizeof buf);
          if (n <= 0) break;
          r.err.append(buf, size_t(n));
        }
        return r;
      }
      r.out += line + "\n";
    }
    if (timeout_s > 0 && since(t0) > timeout_s) {
      r.timed_out = true;
      kill_now();
      return r;
    }
    if (cancel && *cancel) {
      r.cancelled = true;
      kill_now();
      return r;
    }
    if (poll(fds, 2, 100) < 0 && errno != EINTR) break;
    bool eof = false;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0)
        (i == 0 ? pending_out_ : r.err).append(buf, size_t(n));
      else if (i == 0)
        eof = true;
      else
        fds[1].fd = -1;  // (its error stream closed: wait on the output alone)
    }
    if (eof) break;
  }
  // The host ended: what it said on its way out.
  for (const auto t1 = std::chrono::steady_clock::now(); err_ >= 0 && since(t1) < 1;) {
    pollfd e = {err_, POLLIN, 0};
    if (poll(&e, 1, 100) <= 0) continue;
    const ssize_t n = read(err_, buf, sizeof buf);
    if (n <= 0) break;
    r.err.append(buf, size_t(n));
  }
  r.out += pending_out_;
  r.died = true;
  r.seconds = since(t0);
  kill_now();
  return r;
}

}  // namespace lt::worker
