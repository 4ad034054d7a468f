// The NSCodec streams FreeRDP 3.10.3 accepts and the console's NscDecoder refuses, named by the
// rule that refused them: for each, FreeRDP accepting the stream can only mean the one leniency
// named (fuzz_nsc, and fuzz_clear for ClearCodec's subcodec 1). nullptr: not one of them.
//
// Thread: a pure function; any thread.
#pragma once

#include <string_view>

namespace gc::fuzz {

inline const char* nscFreeRdpLenient(std::string_view rule) {
  // nsc_stream_initialize refuses plane byte counts past the stream, so FreeRDP accepting
  // means bytes after the planes.
  if (rule == "plane sizes do not match the stream")
    return "FreeRDP too lenient: bytes after the four planes (MS-RDPNSC 2.2.2: the plane byte counts are the "
           "stream)";
  if (rule == "plane longer than its raw size")
    return "FreeRDP too lenient: a plane longer than its raw size, of which FreeRDP reads the raw size "
           "(MS-RDPNSC 2.2.2, 3.1.8.1: a plane is run-length encoded, or sent raw when that would not shrink "
           "it)";
  if (rule == "RLE plane longer than its values")
    return "FreeRDP too lenient: a run-length encoded plane with bytes after its last value (MS-RDPNSC "
           "2.2.2: "
           "the byte count is the bytes the plane uses)";
  // nsc_rle_decode is given what is left of all four planes, not the plane's own bytes.
  if (rule == "RLE plane ends before its size")
    return "FreeRDP too lenient: a run-length encoded plane that needs more bytes than its byte count, which "
           "FreeRDP reads from the planes after it (MS-RDPNSC 2.2.2: the byte count is the bytes the plane "
           "uses)";
  return nullptr;
}

} // namespace gc::fuzz
