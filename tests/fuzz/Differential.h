// Differential: one codec's run against FreeRDP 3.10.3 (through OracleClient). Each fuzz input
// is a session of messages on one surface; every message goes to the project's decoder and to
// FreeRDP's, and the two verdicts and surfaces are compared:
// - both accept: the surfaces must be equal (the bytes compared()); a difference is a finding
//   unless the target explains it (pixelsExplained);
// - ours refuses, FreeRDP accepts: a finding unless the target names the rule FreeRDP lets
//   through (freerdpLenient: FreeRDP too lenient). A refusal of a valid stream — ours too
//   strict — is a bug, so it is never explained here: it aborts;
// - ours accepts, FreeRDP refuses: a finding unless the target explains it (freerdpStrict);
// - FreeRDP crashes, hangs or writes outside its surface: FreeRDP's fault, counted;
// and the session ends where ours refused (the console would close it there) or the two parted.
// A finding prints what happened and aborts, so libFuzzer keeps the input. At exit the tally
// (inputs, messages, both accepted and equal, every class) goes to stderr and, when
// $GC_DIFF_REPORT names a file, to it as JSON. With GC_DIFF_EXPLORE=1 findings are counted as
// UNEXPLAINED classes instead (an example input of each kept in $GC_DIFF_EXAMPLES when set):
// for surveying a codec, never for CI.
//
// Thread: the fuzzing thread only.
#pragma once

#include "GuardedPixels.h"
#include "OracleClient.h"
#include "OracleWire.h"
#include "rdp/front/Violation.h"

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gc::fuzz {

struct Message {
  oracle::Decode d;
  std::span<const uint8_t> data;
  size_t index = 0; // in its session
};

class Differential {
public:
  Differential(const char* codec, size_t comparedBytes);
  virtual ~Differential();
  Differential(const Differential&) = delete;
  Differential& operator=(const Differential&) = delete;

  // A new session: the surface both sides start from is oracle::fill(begin.fillSeed).
  void begin(const oracle::Begin& begin, std::span<const uint8_t> input);
  // The project's side of the session's surface; a message is decoded into its rectangle.
  GuardedPixels& ours() { return *m_ours; }
  codec::Pixels oursAt(const oracle::Decode& d) { return ours().pixels().sub(d.x, d.y, d.w, d.h); }
  // After the project's decoder ran on `m` (with `result`): FreeRDP's turn and the comparison.
  // Returns whether the session goes on.
  bool step(const Message& m, const front::Checked<front::Ok>& result);

protected:
  // A class is a static string, counted as it is: its kind ("FreeRDP too lenient: ", "FreeRDP
  // too strict: ", "ours too lenient: " (a stream the specification forbids that the console
  // takes harmlessly), "outside the console's contract: ", "pixels differ, explained: "), what
  // happened, and the specification section that decides it. nullptr: not explained.
  virtual const char* freerdpLenient(std::string_view pdu, std::string_view rule, const Message& m) const;
  virtual const char* freerdpStrict(const Message& m, int32_t rc) const;
  virtual const char* pixelsExplained(const Message& m, uint32_t x, uint32_t y, const uint8_t* ours,
                                      const uint8_t* theirs) const;
  virtual size_t compared(const Message&) const { return m_bytes; }

private:
  void count(const std::string& cls);
  [[noreturn]] void finding(const std::string& what);
  void explore(const std::string& cls);
  void report() const;

  std::string m_codec;
  size_t m_bytes;
  bool m_explore = false;
  std::unique_ptr<GuardedPixels> m_ours;
  std::vector<uint8_t> m_theirs;
  std::vector<uint8_t> m_input;
  oracle::Begin m_begin;
  uint64_t m_inputs = 0;
  uint64_t m_messages = 0;
  uint64_t m_equal = 0;
  uint64_t m_bothRefused = 0;
  std::map<std::string, uint64_t> m_classes;
};

} // namespace gc::fuzz
