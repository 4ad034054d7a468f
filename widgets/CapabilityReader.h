// Reads the panel capability (64 hex digits, one line) from a file descriptor: stdin, or the
// descriptor named by --capability-fd. Never from argv or the environment, which other
// processes can read (DESIGN.md: secrets never in argv, URLs, env, logs, files). On a
// terminal it prompts on stderr with echo off.
//
// Thread: any; blocking; called once by main() before the event loop.
#pragma once

#include "common/Outcome.h"

#include <QByteArray>

namespace gc {

class CapabilityReader {
public:
  static constexpr int kHexDigits = 64;

  // The capability as 64 lowercase hex digits, or PANEL_UNAUTHORIZED with why.
  static Outcome<QByteArray> read(int fd);
  // Validates and normalises one line (already read); wipes nothing.
  static Outcome<QByteArray> parseLine(QByteArrayView line);
};

} // namespace gc
