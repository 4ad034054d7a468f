// ClearContext (ClearCodec with its NSCodec and RLEX subcodecs, residual, bands and the three
// storages) against FreeRDP 3.10.3's clear_decompress (Differential.h), over a session of
// messages on one context each: the storages carry from message to message. Input: messages,
// each width - 1, height - 1 (modulo 80), a 16-bit little-endian length and that many bytes,
// decoded into the top-left of an 80 x 80 surface (FreeRDP bounded by the surface, as its GDI
// calls it). The session ends at the first message either side refuses.
#include "Differential.h"
#include "NscClasses.h"
#include "rdp/codec/ClearContext.h"
#include "rdp/codec/NscDecoder.h"

#include <cstdint>

using gc::codec::ClearContext;
using namespace gc::fuzz;

namespace {

constexpr uint32_t kSide = 80;

uint32_t le32(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}

// The three layer byte counts of a stream's composite payload and what follows them; false when
// the stream has no payload header.
bool payload(std::span<const uint8_t> s, uint64_t& layers, uint64_t& rest) {
  const size_t header = 2 + ((s.size() >= 1 && (s[0] & 0x01)) ? 2 : 0);
  if (s.size() < header + 12)
    return false;
  layers = uint64_t(le32(&s[header])) + le32(&s[header + 4]) + le32(&s[header + 8]);
  rest = s.size() - header - 12;
  return true;
}

// Whether the stream's residual layer has a run of length zero once the bitmap is covered (the
// only residual FreeRDP refuses that the console's decoder takes).
bool residualZeroRunAtTheEnd(std::span<const uint8_t> s, uint64_t pixels) {
  if (s.size() < 2 || (s[0] & 0x02))
    return false;
  const size_t header = 2 + ((s[0] & 0x01) ? 2 : 0);
  if (s.size() < header + 12)
    return false;
  const size_t residual = le32(&s[header]);
  size_t pos = header + 12;
  const size_t end = pos + residual;
  if (end > s.size())
    return false;
  uint64_t done = 0;
  while (pos + 4 <= end) {
    uint64_t run = s[pos + 3];
    pos += 4;
    if (run == 0xFF && pos + 2 <= end) {
      run = uint64_t(s[pos]) | (uint64_t(s[pos + 1]) << 8);
      pos += 2;
      if (run == 0xFFFF && pos + 4 <= end) {
        run = le32(&s[pos]);
        pos += 4;
      }
    }
    if (run == 0 && done == pixels)
      return true;
    done += run;
  }
  return false;
}

class ClearDifferential : public Differential {
public:
  ClearDifferential() : Differential("clear", 3) {}

protected:
  const char* freerdpLenient(std::string_view pdu, std::string_view rule, const Message& m) const override {
    if (pdu == gc::codec::NscDecoder::kPdu)
      return nscFreeRdpLenient(rule);
    uint64_t layers = 0, rest = 0;
    if (rule == "layer sizes do not match the stream" && payload(m.data, layers, rest) && layers < rest)
      return "FreeRDP too lenient: bytes after the composite payload's three layers (MS-RDPEGFX 2.2.4.1.1: "
             "the byte counts are the payload)";
    // clear_decompress_bands_data bounds a band by the surface it draws on (the GDI passes the
    // surface's size), not by the command's bitmap.
    if (rule == "band outside the bitmap")
      return "FreeRDP too lenient: a band outside the bitmap, which FreeRDP draws on the surface around it "
             "(MS-RDPEGFX 2.2.4.1.1.2.1: a band's coordinates are in the bitmap)";
    // clear_decompress_glyph_data refuses a hit of more pixels than stored, so this is one of fewer.
    if (rule == "glyph hit of another pixel count than the glyph stored")
      return "FreeRDP too lenient: a glyph hit of fewer pixels than the glyph stored, of which FreeRDP shows "
             "the "
             "first (MS-RDPEGFX 2.2.4.1, 4.1.1.5: a hit is the stored glyph)";
    // An empty NSCodec or RLEX rectangle: FreeRDP reads its palette or header past its data.
    if (rule == "empty subcodec rectangle")
      return "FreeRDP too lenient: an empty subcodec rectangle with bytes, or of NSCodec or RLEX, which "
             "cannot "
             "be empty (MS-RDPEGFX 2.2.4.1.1.3.1: bitmapDataByteCount MUST NOT exceed 3 x width x height)";
    // clear_decompress reads a composite payload after a glyph hit when 12 bytes follow, and
    // ignores fewer.
    if (rule == "bytes after a glyph hit")
      return "FreeRDP too lenient: bytes after a glyph hit (MS-RDPEGFX 2.2.4.1: with "
             "CLEARCODEC_FLAG_GLYPH_HIT "
             "the compositePayload MUST NOT be present)";
    // Both sides accepted every earlier message of the session, so their expected numbers agree
    // except in one place: FreeRDP keeps 0 for "none seen yet", and after 255 its expected number
    // is 0 again, so it takes whatever non-zero number comes next as a fresh start.
    if (rule == "sequence number out of order" && m.index > 0 && m.data.size() >= 2 && m.data[1] != 0)
      return "FreeRDP too lenient: any sequence number after 255, which FreeRDP takes as a fresh start "
             "(MS-RDPEGFX 2.2.4.1: seqNumber is one more than the last, 255 wrapping to 0)";
    if (rule == "glyph larger than 1024 pixels")
      return "FreeRDP too lenient: a glyph index on a bitmap of more than 1024 pixels, which FreeRDP stores "
             "up "
             "to 1024 x 1024 (MS-RDPEGFX 2.2.4.1: CLEARCODEC_FLAG_GLYPH_INDEX MUST NOT be used then)";
    return nullptr;
  }
  const char* freerdpStrict(const Message& m, int32_t) const override {
    if (residualZeroRunAtTheEnd(m.data, uint64_t(m.d.w) * m.d.h))
      return "ours too lenient: a residual run of length zero after the bitmap's last pixel, which FreeRDP "
             "refuses and the console skips (MS-RDPEGFX 2.2.4.1.1.1.1: runLengthFactor1 MUST be greater than "
             "zero)";
    return nullptr;
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ClearDifferential diff;
  static ClearContext ours; // reset() per input: the storages' zeroing is exercised too
  ours.reset();
  oracle::Begin b;
  b.codec = oracle::Codec::Clear;
  b.side = kSide;
  b.fillSeed = uint32_t(size);
  diff.begin(b, {data, size});
  size_t pos = 0;
  for (size_t index = 0; pos + 4 <= size; ++index) {
    Message m;
    m.index = index;
    m.d.w = uint16_t(1 + data[pos] % kSide);
    m.d.h = uint16_t(1 + data[pos + 1] % kSide);
    const size_t len = size_t(data[pos + 2]) | (size_t(data[pos + 3]) << 8);
    pos += 4;
    if (len > size - pos)
      break;
    m.data = std::span<const uint8_t>(data + pos, len);
    pos += len;
    if (!diff.step(m, ours.decode(m.data, diff.oursAt(m.d))))
      break;
  }
  return 0;
}
