// StateDir: the per-user state directory the grant ledger and the run locks live in, opened
// as a chain of directory descriptors so that a rename or a symlink swapped in between a
// check and a use changes nothing (the ledger's rules, shared by RunLock).
//
// Thread: free functions; any thread.
#pragma once

#include "common/Outcome.h"

#include <QByteArray>
#include <QString>

#include <utility>

namespace gc::statedir {

// Closes the descriptor (and with it any flock) on every return path.
class Fd {
public:
  explicit Fd(int fd = -1) : m_fd(fd) {}
  ~Fd() { reset(-1); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return m_fd; }
  int release() { return std::exchange(m_fd, -1); }
  void reset(int fd);

private:
  int m_fd;
};

// Whether a directory we are about to trust is safe from other users: ours or root's, and
// nobody else may rename or remove what it holds (a sticky directory lets others create
// entries but not rename ours). GRANT_LEDGER names `path` when not.
Status checkDirectory(int fd, const QByteArray& path);

// Opens `dir` from an anchor down (the user's home from passwd for a directory below it — the
// path to a home is the administrator's — else "/"), every component opened O_NOFOLLOW and
// checked with checkDirectory on the descriptor that is then used. `create`: missing
// directories are made 0700; otherwise a missing one yields -1 with no failure.
Outcome<int> open(const QString& dir, bool create);

// `name` inside the directory `parentFd` (itself opened by open()): created 0700 if missing,
// opened O_NOFOLLOW, and private — a directory of ours that nobody else can write.
Outcome<int> openPrivateChild(int parentFd, const QByteArray& name, const QByteArray& pathForMessages);

} // namespace gc::statedir
