// ExclusiveFile: writes a new file that nobody else can have prepared or can read: created
// with O_EXCL|O_NOFOLLOW (an existing file or a planted symlink fails, never gets
// overwritten), mode 0600, written in full and fsync'ed.
//
// Thread: reentrant; use from any thread.
#pragma once

#include "common/Outcome.h"

#include <QByteArray>
#include <QString>

namespace gc::tools {

class ExclusiveFile {
public:
  // Creates `path` with `bytes` as its content. On any failure nothing is left at `path`
  // that this call created. Failure code: INTERNAL with the path and errno text.
  static Status write(const QString& path, const QByteArray& bytes);
};

} // namespace gc::tools
