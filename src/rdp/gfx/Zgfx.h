// Zgfx: the RDP 8.0 bulk decompressor of the graphics channel (MS-RDPEGFX 2.2.5: an
// RDP_SEGMENTED_DATA, single or multipart, of RDP8_BULK_ENCODED_DATA segments). The guest's
// bytes are hostile: every declared size (a multipart message's uncompressedSize and
// segmentCount, each segment's output) is checked against the bounds before anything is
// reserved, and every match is checked against the history before it is copied.
//
// The 2.5 MB history (allocated untouched: only what the guest fills becomes resident) lives
// as long as the channel and is zeroed when the channel closes
// (reset()) and on destruction; so is the output of the last message (it held guest pixels).
//
// Pure: no FreeRDP. Thread: one owner (the RDP worker); no locking.
#pragma once

#include "rdp/front/Violation.h"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace gc::gfx {

class Zgfx {
public:
  static constexpr std::size_t kHistorySize = 2500000;    // MS-RDPEGFX 3.1.9.1.2
  static constexpr std::size_t kMaxSegmentOutput = 65535; // one segment's output at most
  static constexpr uint8_t kSingle = 0xE0;
  static constexpr uint8_t kMultipart = 0xE1;
  static constexpr uint8_t kCompressed = 0x20; // PACKET_COMPRESSED
  static constexpr uint8_t kTypeMask = 0x0F;   // compression type, RDP 8.0 = 0x04
  static constexpr uint8_t kTypeRdp8 = 0x04;

  // `maxMessageBytes`: the largest decompressed message accepted (Limits::maxGfxMessageBytes).
  explicit Zgfx(uint32_t maxMessageBytes);
  ~Zgfx();
  Zgfx(const Zgfx&) = delete;
  Zgfx& operator=(const Zgfx&) = delete;

  // The decompressed message, valid until the next call or reset(); or the violation (the
  // history is then in an undefined state: the channel is closed).
  front::Checked<std::span<const uint8_t>> decompress(std::span<const uint8_t> in);

  // Zeroes the history and the output and starts afresh (the channel closed).
  void reset();

private:
  front::Checked<front::Ok> segment(std::span<const uint8_t> bulk);
  void remember(const uint8_t* bytes, std::size_t count);
  void zeroOutput();

  uint32_t m_maxMessage;
  struct Free {
    void operator()(uint8_t* p) const;
  };
  // calloc'd at the first message: pages the guest never filled stay unresident, and only
  // what was filled is zeroed again.
  std::unique_ptr<uint8_t, Free> m_history;
  std::size_t m_historyIndex = 0; // where the next byte goes
  std::size_t m_historyFill = 0;  // how much of the history holds bytes (<= kHistorySize)
  std::vector<uint8_t> m_out;     // the message being decompressed
  std::size_t m_outLimit = 0;     // what the message may still grow to
};

} // namespace gc::gfx
