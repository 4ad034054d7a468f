#include "OracleClient.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace gc::fuzz {

namespace {

// A decode of at most 128 x 128 pixels takes FreeRDP microseconds; three seconds is a stall no
// load explains (its alpha handler spins for minutes on a run of 2^32 pixels).
constexpr int kTimeoutMs = 3000;

std::string besideSelf(const char* name) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return name;
  self[n] = 0;
  std::string path(self);
  const size_t slash = path.rfind('/');
  return (slash == std::string::npos ? std::string(".") : path.substr(0, slash)) + "/" + name;
}

uint64_t fnv1a(std::span<const uint8_t> b) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t c : b)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

} // namespace

OracleClient& OracleClient::instance() {
  static OracleClient client;
  return client;
}

bool OracleClient::spawn() {
  if (m_faultDir.empty()) {
    const char* dir = std::getenv("GC_ORACLE_FAULT_DIR");
    m_faultDir = dir && *dir ? dir : "freerdp-faults";
    mkdir(m_faultDir.c_str(), 0700);
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return false;
  // The child's end becomes its fd 3 (dup2 clears close-on-exec there).
  constexpr int kChildFd = 3;
  if (fds[1] == kChildFd) {
    const int moved = fcntl(fds[1], F_DUPFD_CLOEXEC, kChildFd + 1);
    close(fds[1]);
    fds[1] = moved;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], kChildFd);

  // FreeRDP's sanitizer reports are its faults, not the target's: they go to the fault
  // directory, and its leaks (nothing is torn down) are not looked for.
  const std::string asan = "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1:"
                           "max_allocation_size_mb=512:log_path=" +
                           m_faultDir + "/freerdp-asan";
  const std::string ubsan =
      "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=" + m_faultDir + "/freerdp-ubsan";
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "ASAN_OPTIONS=", 13) != 0 && std::strncmp(*e, "UBSAN_OPTIONS=", 14) != 0)
      env.emplace_back(*e);
  env.push_back(asan);
  env.push_back(ubsan);
  std::vector<char*> envp;
  for (std::string& e : env)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  const char* override = std::getenv("GC_FREERDP_ORACLE");
  std::string path = override && *override ? override : besideSelf("freerdp_oracle");
  std::string fdArg = std::to_string(kChildFd);
  char* argv[] = {path.data(), fdArg.data(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    std::fprintf(stderr, "OracleClient: cannot start %s: %s\n", path.c_str(), std::strerror(rc));
    std::abort(); // no oracle, no differential: the run would prove nothing
  }
  m_pid = pid;
  m_fd = fds[0];
  return true;
}

void OracleClient::stop() {
  if (m_fd >= 0)
    close(m_fd);
  m_fd = -1;
  if (m_pid > 0) {
    kill(m_pid, SIGKILL);
    int status = 0;
    while (waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  m_pid = -1;
  m_inSession = false;
}

OracleClient::Outcome OracleClient::fault(Outcome why) {
  stop();
  ++m_faults;
  const std::string path = m_faultDir + "/fault-" + std::to_string(fnv1a(m_input)) + ".input";
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(m_input.data(), 1, m_input.size(), f);
    std::fclose(f);
  }
  return why;
}

bool OracleClient::send(const std::vector<uint8_t>& frame) {
  const uint32_t n = uint32_t(frame.size());
  const uint8_t head[4] = {uint8_t(n), uint8_t(n >> 8), uint8_t(n >> 16), uint8_t(n >> 24)};
  auto all = [&](const uint8_t* p, size_t len) {
    while (len > 0) {
      const ssize_t r = ::send(m_fd, p, len, MSG_NOSIGNAL);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return false;
      p += r;
      len -= size_t(r);
    }
    return true;
  };
  return all(head, 4) && all(frame.data(), frame.size());
}

bool OracleClient::receive(std::vector<uint8_t>& frame) {
  auto all = [&](uint8_t* p, size_t len) {
    while (len > 0) {
      pollfd pfd{m_fd, POLLIN, 0};
      const int ready = poll(&pfd, 1, kTimeoutMs);
      if (ready < 0 && errno == EINTR)
        continue;
      if (ready == 0) {
        errno = ETIMEDOUT;
        return false;
      }
      const ssize_t r = read(m_fd, p, len);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0) {
        errno = EPIPE;
        return false;
      }
      p += r;
      len -= size_t(r);
    }
    return true;
  };
  uint8_t head[4];
  if (!all(head, 4))
    return false;
  const uint32_t n =
      uint32_t(head[0]) | (uint32_t(head[1]) << 8) | (uint32_t(head[2]) << 16) | (uint32_t(head[3]) << 24);
  if (n > 5 + oracle::kMaxSide * oracle::kMaxSide * 4) {
    errno = EPROTO;
    return false;
  }
  frame.resize(n);
  return all(frame.data(), n);
}

void OracleClient::begin(const oracle::Begin& begin, std::span<const uint8_t> input) {
  m_input.assign(input.begin(), input.end());
  m_begin = begin;
  m_inSession = false;
  if (m_fd < 0 && !spawn())
    return;
  if (!send(oracle::encode(begin))) { // it died after the last session's answer: start another
    stop();
    if (!spawn() || !send(oracle::encode(begin)))
      return;
  }
  m_inSession = true;
}

OracleClient::Result OracleClient::decode(const oracle::Decode& d, std::span<const uint8_t> data,
                                          std::vector<uint8_t>& surface) {
  if (!m_inSession)
    return {fault(Outcome::Crashed), 0};
  std::vector<uint8_t>& reply = m_frame;
  if (!send(oracle::encode(d, data)) || !receive(reply))
    return {fault(errno == ETIMEDOUT ? Outcome::Hung : Outcome::Crashed), 0};
  oracle::Reader r{reply};
  const auto verdict = oracle::Verdict(r.u8());
  const int32_t rc = int32_t(r.u32());
  const size_t bytes = size_t(m_begin.side) * m_begin.side * 4;
  if (!r.ok || r.rest().size() != bytes)
    return {fault(Outcome::Crashed), rc};
  surface.assign(r.rest().begin(), r.rest().end());
  switch (verdict) {
  case oracle::Verdict::Accepted:
    return {Outcome::Accepted, rc};
  case oracle::Verdict::Refused:
    return {Outcome::Refused, rc};
  case oracle::Verdict::WroteOutside:
    return {fault(Outcome::WroteOutside), rc};
  }
  return {fault(Outcome::Crashed), rc};
}

} // namespace gc::fuzz
