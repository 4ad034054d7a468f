// OracleClient: a differential fuzz target's handle on freerdp_oracle (FreeRdpOracle.cpp), the
// child process that runs FreeRDP 3.10.3's decoders. Started at the first session and again
// after every fault: a child that dies (a crash; or a sanitizer report, when $GC_FREERDP_ORACLE
// names an instrumented build, its log then in the fault directory), hangs past the timeout or
// writes outside its surface is FreeRDP's fault, counted as such with the input that caused it
// saved; the target goes on.
//
// The child is found beside the target's executable (or at $GC_FREERDP_ORACLE); faults go to
// $GC_ORACLE_FAULT_DIR (default ./freerdp-faults).
//
// Thread: the fuzzing thread only.
#pragma once

#include "OracleWire.h"

#include <cstdint>
#include <span>
#include <string>
#include <sys/types.h>
#include <vector>

namespace gc::fuzz {

class OracleClient {
public:
  enum class Outcome {
    Accepted,
    Refused,
    WroteOutside, // the canary before its surface changed
    Crashed,      // died: a signal or a sanitizer report
    Hung,         // no answer within the timeout; killed
  };
  struct Result {
    Outcome outcome = Outcome::Refused;
    int32_t rc = 0;
  };

  static OracleClient& instance();

  // A new session on FreeRDP's side; `input` is the fuzz input it comes from (saved if FreeRDP
  // faults on it).
  void begin(const oracle::Begin& begin, std::span<const uint8_t> input);
  // One message; on Accepted or Refused `surface` holds FreeRDP's surface after it (side x side
  // pixels, rows packed). After a fault the session is over.
  Result decode(const oracle::Decode& d, std::span<const uint8_t> data, std::vector<uint8_t>& surface);

  uint64_t faults() const { return m_faults; }

private:
  OracleClient() = default;
  bool spawn();
  void stop();
  Outcome fault(Outcome why);
  bool send(const std::vector<uint8_t>& frame);
  bool receive(std::vector<uint8_t>& frame);

  pid_t m_pid = -1;
  int m_fd = -1;
  bool m_inSession = false;
  oracle::Begin m_begin;
  std::vector<uint8_t> m_input;
  std::vector<uint8_t> m_frame; // reused: a frame per message
  uint64_t m_faults = 0;
  std::string m_faultDir;
};

} // namespace gc::fuzz
