// Proves the test guest's hostile mode (issue 24 point 5, README.md next to the guest, "Hostile
// mode"): its encoders write what each attack says, decoded here by this file's own decoders
// (RDPGFX, ZGFX, planar RLE), never FreeRDP's; and the attacks really go out on the wire: a
// FreeRDP client connects, and from the guest's hostile_ready on a tap takes every drdynvc and
// fast-path byte away from the library, decodes it and acknowledges frames itself.

#include "GuestProcess.h"
#include "MiniRdpClient.h"
#include "testguest/HostileFuzz.h"
#include "testguest/HostilePdu.h"

#include <QDeadlineTimer>
#include <QJsonObject>
#include <QtTest>

#include <functional>
#include <map>
#include <optional>

namespace hostile = gc::testguest::hostile;
using hostile::Bytes;

namespace {

uint16_t le16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
uint32_t le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

// ---- RDPGFX (MS-RDPEGFX 2.2.1.5): the server's PDUs of one message ----------------------------
struct GfxPdu {
  uint16_t cmd = 0;
  Bytes body;
};
bool splitGfx(const Bytes& m, std::vector<GfxPdu>& out) {
  size_t at = 0;
  while (at < m.size()) {
    if (m.size() - at < 8)
      return false;
    const uint32_t length = le32(&m[at + 4]);
    if (length < 8 || length > m.size() - at)
      return false;
    out.push_back({le16(&m[at]),
                   Bytes(m.begin() + static_cast<long>(at) + 8, m.begin() + static_cast<long>(at + length))});
    at += length;
  }
  return true;
}

// ---- RDP8 bulk decompression (MS-RDPEGFX 2.2.5 and 3.1.9.1), this test's own ------------------
class Rdp8Decoder {
public:
  struct Info {
    bool multipart = false;
    uint32_t declared = 0; // MULTIPART: uncompressedSize
    std::vector<uint32_t> segmentSizes;
    size_t decodedSegments = 0;
  };

  // Decodes at most `maxOut` bytes (the rest of the segments are only measured).
  bool message(const Bytes& m, Bytes& out, size_t maxOut, Info& info) {
    if (m.empty())
      return false;
    if (m[0] == 0xE0) {
      info.segmentSizes.push_back(static_cast<uint32_t>(m.size() - 1));
      info.decodedSegments = 1;
      return segment(m.data() + 1, m.size() - 1, out);
    }
    if (m[0] != 0xE1 || m.size() < 7)
      return false;
    info.multipart = true;
    const size_t count = le16(&m[1]);
    info.declared = le32(&m[3]);
    size_t at = 7;
    for (size_t i = 0; i < count; ++i) {
      if (m.size() - at < 4)
        return false;
      const uint32_t size = le32(&m[at]);
      at += 4;
      if (size < 1 || size > m.size() - at)
        return false;
      info.segmentSizes.push_back(size);
      if (out.size() < maxOut) {
        if (!segment(&m[at], size, out))
          return false;
        ++info.decodedSegments;
      }
      at += size;
    }
    return at == m.size();
  }

private:
  struct Token {
    const char* prefix;
    int valueBits;
    bool match; // else a literal (its value is base + the value bits)
    uint32_t base;
  };
  // The literal and match-distance tokens of MS-RDPEGFX 3.1.9.1.2, as prefix strings.
  static constexpr Token kTokens[] = {
      {"0", 8, false, 0},
      {"10001", 5, true, 0},
      {"10010", 7, true, 32},
      {"10011", 9, true, 160},
      {"10100", 10, true, 672},
      {"10101", 12, true, 1696},
      {"11000", 0, false, 0x00},
      {"11001", 0, false, 0x01},
      {"101100", 14, true, 5792},
      {"101101", 15, true, 22176},
      {"110100", 0, false, 0x02},
      {"110101", 0, false, 0x03},
      {"110110", 0, false, 0xFF},
      {"1011100", 18, true, 54944},
      {"1011101", 20, true, 317088},
      {"1101110", 0, false, 0x04},
      {"1101111", 0, false, 0x05},
      {"1110000", 0, false, 0x06},
      {"1110001", 0, false, 0x07},
      {"1110010", 0, false, 0x08},
      {"1110011", 0, false, 0x09},
      {"1110100", 0, false, 0x0A},
      {"1110101", 0, false, 0x0B},
      {"1110110", 0, false, 0x3A},
      {"1110111", 0, false, 0x3B},
      {"1111000", 0, false, 0x3C},
      {"1111001", 0, false, 0x3D},
      {"1111010", 0, false, 0x3E},
      {"1111011", 0, false, 0x3F},
      {"1111100", 0, false, 0x40},
      {"1111101", 0, false, 0x80},
      {"10111100", 20, true, 1365664},
      {"10111101", 21, true, 2414240},
      {"11111100", 0, false, 0x0C},
      {"11111101", 0, false, 0x38},
      {"11111110", 0, false, 0x39},
      {"11111111", 0, false, 0x66},
      {"101111100", 22, true, 4511392},
      {"101111101", 23, true, 8705696},
      {"101111110", 24, true, 17094304},
  };

  struct Bits {
    const uint8_t* p;
    size_t total; // bits
    size_t at = 0;
    bool take(int n, uint32_t& v) {
      v = 0;
      for (int i = 0; i < n; ++i) {
        if (at >= total)
          return false;
        v = (v << 1) | ((p[at / 8] >> (7 - at % 8)) & 1u);
        ++at;
      }
      return true;
    }
  };

  bool segment(const uint8_t* s, size_t n, Bytes& out) {
    if (n < 1)
      return false;
    const uint8_t header = s[0];
    if ((header & 0x0F) != 0x04)
      return false; // RDP8 only
    const uint8_t* data = s + 1;
    const size_t size = n - 1;
    if ((header & 0x20) == 0) { // not compressed
      out.insert(out.end(), data, data + size);
      m_history.insert(m_history.end(), data, data + size);
      return true;
    }
    if (size < 1 || static_cast<size_t>(data[size - 1]) > 8 * (size - 1))
      return false;
    Bits bits{data, 8 * (size - 1) - data[size - 1]};
    while (bits.at < bits.total) {
      std::string prefix;
      const Token* token = nullptr;
      while (token == nullptr && prefix.size() < 9) {
        uint32_t b = 0;
        if (!bits.take(1, b))
          return false;
        prefix += b ? '1' : '0';
        for (const Token& t : kTokens)
          if (prefix == t.prefix)
            token = &t;
      }
      if (token == nullptr)
        return false;
      uint32_t value = 0;
      if (!bits.take(token->valueBits, value))
        return false;
      if (!token->match) {
        put(out, static_cast<uint8_t>(token->base + value));
        continue;
      }
      const uint32_t distance = token->base + value;
      uint32_t length = 0;
      if (distance == 0) { // raw bytes, from the next byte boundary
        if (!bits.take(15, length))
          return false;
        bits.at = (bits.at + 7) / 8 * 8;
        for (uint32_t i = 0; i < length; ++i) {
          uint32_t b = 0;
          if (!bits.take(8, b))
            return false;
          put(out, static_cast<uint8_t>(b));
        }
        continue;
      }
      uint32_t b = 0;
      if (!bits.take(1, b))
        return false;
      if (b == 0) {
        length = 3;
      } else {
        length = 4;
        int extra = 2;
        for (;;) {
          if (!bits.take(1, b))
            return false;
          if (b == 0)
            break;
          length *= 2;
          ++extra;
        }
        uint32_t add = 0;
        if (!bits.take(extra, add))
          return false;
        length += add;
      }
      if (distance > m_history.size())
        return false;
      for (uint32_t i = 0; i < length; ++i)
        put(out, m_history[m_history.size() - distance]);
    }
    return true;
  }
  void put(Bytes& out, uint8_t v) {
    out.push_back(v);
    m_history.push_back(v);
  }

  Bytes m_history;
};

// ---- planar RLE planes (MS-RDPEGDI 2.2.2.5.1.1), this test's own --------------------------------
// Decodes one plane; the bytes used, or 0 on malformed data.
size_t decodePlane(const uint8_t* p, size_t n, uint32_t w, uint32_t h, std::vector<uint8_t>& plane) {
  plane.assign(static_cast<size_t>(w) * h, 0);
  size_t at = 0;
  for (uint32_t y = 0; y < h; ++y) {
    uint32_t x = 0;
    int last = 0; // absolute value (first row) or delta (others) a run repeats
    while (x < w) {
      if (at >= n)
        return 0;
      const uint8_t c = p[at++];
      uint32_t run = c & 0x0F;
      uint32_t raw = c >> 4;
      if (run == 1 || run == 2) {
        run = raw + (run == 1 ? 16 : 32);
        raw = 0;
      }
      if (x + raw + run > w || at + raw > n)
        return 0;
      auto value = [&](int v) {
        const size_t i = static_cast<size_t>(y) * w + x;
        plane[i] = static_cast<uint8_t>(y == 0 ? v : plane[i - w] + v);
        ++x;
      };
      for (uint32_t i = 0; i < raw; ++i) {
        const uint8_t b = p[at++];
        last = y == 0 ? b : ((b & 1) ? -((b >> 1) + 1) : (b >> 1));
        value(last);
      }
      for (uint32_t i = 0; i < run; ++i)
        value(y == 0 ? last : last);
    }
  }
  return at;
}

// ---- the tap: the client side of drdynvc and RDPGFX acknowledgements, decoding --------------
class HostileTap : public MiniRdpClient::Tap {
public:
  struct Dvc {
    uint8_t cmd;
    uint32_t channel;
    uint32_t declared; // DATA_FIRST
    size_t payload;
  };
  struct FastPath {
    uint8_t code;
    uint8_t fragmentation;
    Bytes data;
  };

  MiniRdpClient* client = nullptr;
  uint16_t drdynvc = 0;
  uint32_t gfxChannel = 0;
  bool tapping = false;
  std::vector<Dvc> dvc;
  std::vector<GfxPdu> gfx;
  std::vector<Rdp8Decoder::Info> messages;
  std::vector<FastPath> fastPaths;
  size_t undecoded = 0; // messages this tap did not decode in full (too large)

  bool channelData(uint16_t channelId, const uint8_t* data, size_t size, uint32_t flags, size_t) override {
    if (!tapping || channelId != drdynvc)
      return true;
    if (flags & 0x01) // CHANNEL_FLAG_FIRST
      m_svc.clear();
    m_svc.insert(m_svc.end(), data, data + size);
    if (flags & 0x02) // CHANNEL_FLAG_LAST
      drdynvcPdu(m_svc);
    return false;
  }

  bool fastPath(const uint8_t* p, size_t n) override {
    if (!tapping)
      return true;
    size_t at = 1;
    if (n < 2)
      return false;
    at += (p[1] & 0x80) ? 2 : 1;
    while (at + 3 <= n) {
      const uint8_t header = p[at];
      const size_t size = le16(&p[at + 1]);
      at += 3;
      if (size > n - at)
        break;
      fastPaths.push_back({static_cast<uint8_t>(header & 0x0F), static_cast<uint8_t>((header >> 4) & 0x03),
                           Bytes(p + at, p + at + size)});
      at += size;
    }
    return false;
  }

  size_t count(uint16_t cmd) const {
    return static_cast<size_t>(
        std::count_if(gfx.begin(), gfx.end(), [cmd](const GfxPdu& g) { return g.cmd == cmd; }));
  }
  const GfxPdu* first(uint16_t cmd) const {
    for (const GfxPdu& g : gfx)
      if (g.cmd == cmd)
        return &g;
    return nullptr;
  }

private:
  static uint32_t var(const uint8_t*& p, int size) {
    const uint32_t v = size == 0 ? p[0] : size == 1 ? le16(p) : le32(p);
    p += size == 0 ? 1 : size == 1 ? 2 : 4;
    return v;
  }

  void drdynvcPdu(const Bytes& m) {
    if (m.empty())
      return;
    const uint8_t cmd = m[0] >> 4;
    const int sp = (m[0] >> 2) & 3;
    const int cb = m[0] & 3;
    const uint8_t* p = m.data() + 1;
    const uint32_t channel = var(p, cb);
    const uint32_t declared = cmd == 0x02 || cmd == 0x06 ? var(p, sp) : 0;
    const size_t payload = m.size() - static_cast<size_t>(p - m.data());
    dvc.push_back({cmd, channel, declared, payload});
    if (channel != gfxChannel)
      return;
    if (cmd == 0x02) { // DATA_FIRST: a message of `declared` bytes begins
      m_declared = declared;
      m_dvc.assign(p, p + payload);
      if (m_dvc.size() < m_declared)
        return;
    } else if (cmd == 0x03) {
      if (m_declared == 0) {
        m_dvc.assign(p, p + payload);
      } else {
        m_dvc.insert(m_dvc.end(), p, p + payload);
        if (m_dvc.size() < m_declared)
          return;
      }
    } else {
      return;
    }
    m_declared = 0;
    gfxMessage(m_dvc);
  }

  void gfxMessage(const Bytes& m) {
    Rdp8Decoder::Info info;
    Bytes out;
    const bool ok = m_rdp8.message(m, out, 4u << 20, info);
    messages.push_back(info);
    if (!ok || info.decodedSegments != info.segmentSizes.size()) {
      ++undecoded;
      return;
    }
    std::vector<GfxPdu> pdus;
    if (!splitGfx(out, pdus)) {
      ++undecoded;
      return;
    }
    for (const GfxPdu& g : pdus) {
      gfx.push_back(g);
      if (g.cmd == hostile::gfx::EndFrame && g.body.size() >= 4)
        acknowledge(le32(g.body.data()));
    }
  }

  // RDPGFX_FRAME_ACKNOWLEDGE_PDU in a DVC DATA PDU, as the client's RDPGFX would send it.
  void acknowledge(uint32_t frameId) {
    hostile::Writer ack;
    ack.u16(hostile::gfx::FrameAcknowledge);
    ack.u16(0);
    ack.u32(20);
    ack.u32(0); // queueDepth
    ack.u32(frameId);
    ack.u32(++m_decoded);
    const Bytes pdu = hostile::dvc::data(gfxChannel, ack.data().data(), ack.size());
    (void)client->sendChannelData(drdynvc, pdu.data(), pdu.size());
  }

  Bytes m_svc;
  Bytes m_dvc;
  uint32_t m_declared = 0;
  uint32_t m_decoded = 0;
  Rdp8Decoder m_rdp8;
};

// A hostile guest and a tapped client, ready for attacks.
struct Wire {
  GuestProcess guest;
  MiniRdpClient client;
  HostileTap tap;

  bool start(const QStringList& extra = {}) {
    if (!guest.start(QStringList{QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--width"),
                                 QStringLiteral("640"), QStringLiteral("--height"), QStringLiteral("480"),
                                 QStringLiteral("--hostile"), QStringLiteral("stdin")} +
                     extra))
      return false;
    client.setChannels(MiniRdpClient::Channels::DrdynvcAndGfx);
    tap.client = &client;
    client.setTap(&tap);
    if (!client.connect(guest.port(), "tester", "throwaway-pw", guest.sha256().toStdString()))
      return false;
    if (!pumpUntil([&] { return !guest.events(QStringLiteral("hostile_ready")).isEmpty(); }))
      return false;
    tap.drdynvc = client.channelId("drdynvc");
    tap.gfxChannel = static_cast<uint32_t>(
        guest.events(QStringLiteral("hostile_ready")).first().value(QStringLiteral("channel")).toInt());
    tap.tapping = true;
    return tap.drdynvc != 0;
  }

  bool pumpUntil(const std::function<bool()>& done, int timeoutMs = 20000) {
    QDeadlineTimer deadline(timeoutMs);
    for (;;) {
      guest.poll();
      if (done())
        return true;
      if (deadline.hasExpired() || !client.pump(20)) {
        guest.poll();
        return done();
      }
    }
  }

  // Fires an attack and waits for the guest's report of it; the report.
  std::optional<QJsonObject> attack(const QByteArray& command, const QString& name) {
    guest.command(command);
    auto report = [&]() -> std::optional<QJsonObject> {
      for (const QJsonObject& e : guest.events(QStringLiteral("attack")))
        if (e.value(QStringLiteral("name")).toString() == name)
          return e;
      return std::nullopt;
    };
    if (!pumpUntil([&] { return report().has_value(); }))
      return std::nullopt;
    client.pump(200); // what the guest wrote last is read before the checks
    return report();
  }
};

} // namespace

class TestGuestHostile : public QObject {
  Q_OBJECT

private slots:
  void encodesRdpgfxPdusAsItSays();
  void wrapsPdusInRdp8Segments();
  void bombDecodesToWhatItDeclares();
  void encodesDrdynvcAndFastPathFraming();
  void planarPlanesDecodeToTheirValues();
  void fuzzerIsReproducibleAndMutatesHalf();
  void surfaceToSurfaceGoesOutAsDescribed();
  void zgfxBombGoesOutDeclaringOneGibibyte();
  void dataFirstGoesOutDeclaringFourGibibytes();
  void coreAttacksGoOutAsFastPath();
  void fuzzerSendsTheSamePdusForTheSameSeed();
  void frozenGuestStopsReading();
  void refusesAttacksOutsideHostileMode();
};

void TestGuestHostile::encodesRdpgfxPdusAsItSays() {
  const Bytes create = hostile::gfx::createSurface(2, 65535, 16);
  QCOMPARE(create.size(), size_t(15));
  QCOMPARE(le16(&create[0]), uint16_t(0x0009));
  QCOMPARE(le32(&create[4]), uint32_t(15));
  QCOMPARE(le16(&create[8]), uint16_t(2));
  QCOMPARE(le16(&create[10]), uint16_t(65535));
  QCOMPARE(le16(&create[12]), uint16_t(16));
  QCOMPARE(create[14], uint8_t(0x20));

  const Bytes copy = hostile::gfx::surfaceToSurface(2, 2, {0, 0, 4000, 16}, {{65000, 0}});
  QCOMPARE(le16(&copy[0]), uint16_t(0x0005));
  QCOMPARE(le32(&copy[4]), uint32_t(copy.size()));
  QCOMPARE(le16(&copy[8 + 8]), uint16_t(4000)); // rectSrc.right
  QCOMPARE(le16(&copy[8 + 12]), uint16_t(1));   // destPtsCount
  QCOMPARE(le16(&copy[8 + 14]), uint16_t(65000));

  const Bytes reset = hostile::gfx::resetGraphics(65535, 65535, {{0, 0, 65534, 65534, 1}});
  QCOMPARE(reset.size(), size_t(340)); // MS-RDPEGFX 2.2.2.14: always 340 bytes
  QCOMPARE(le32(&reset[8]), uint32_t(65535));
  QCOMPARE(le32(&reset[16]), uint32_t(1));

  const Bytes reply = hostile::gfx::cacheImportReply(std::vector<uint16_t>(5462, 7));
  QCOMPARE(le16(&reply[8]), uint16_t(5462));
  QCOMPARE(reply.size(), size_t(8 + 2 + 5462 * 2));
}

void TestGuestHostile::wrapsPdusInRdp8Segments() {
  Bytes small(100, 0x5A);
  const Bytes single = hostile::zgfx::wrap(small);
  QCOMPARE(single[0], uint8_t(0xE0));
  QCOMPARE(single[1], uint8_t(0x04));
  Rdp8Decoder::Info info;
  Bytes out;
  QVERIFY(Rdp8Decoder().message(single, out, 1u << 20, info));
  QCOMPARE(out, small);

  Bytes big(200000);
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<uint8_t>(i * 7);
  const Bytes multi = hostile::zgfx::wrap(big);
  info = {};
  out.clear();
  QVERIFY(Rdp8Decoder().message(multi, out, 1u << 20, info));
  QVERIFY(info.multipart);
  QCOMPARE(info.declared, uint32_t(big.size()));
  QCOMPARE(info.segmentSizes.size(), size_t(4)); // 65535 + 65535 + 65535 + 3395
  QCOMPARE(out, big);
}

void TestGuestHostile::bombDecodesToWhatItDeclares() {
  // Three segments decode to 3 x 65536 zeros, as declared.
  Rdp8Decoder::Info info;
  Bytes out;
  QVERIFY(Rdp8Decoder().message(hostile::zgfx::bomb(3), out, 1u << 20, info));
  QCOMPARE(info.declared, uint32_t(3 * 65536));
  QCOMPARE(out.size(), size_t(3 * 65536));
  QVERIFY(std::all_of(out.begin(), out.end(), [](uint8_t b) { return b == 0; }));
  // The attack's bomb: 16384 such segments of 8 bytes, 196615 bytes declaring 1 GiB.
  const Bytes bomb = hostile::zgfx::bomb(16384);
  QCOMPARE(bomb.size(), size_t(196615));
  info = {};
  out.clear();
  QVERIFY(Rdp8Decoder().message(bomb, out, 65536, info));
  QCOMPARE(info.declared, uint32_t(1) << 30);
  QCOMPARE(info.segmentSizes.size(), size_t(16384));
  QVERIFY(std::all_of(info.segmentSizes.begin(), info.segmentSizes.end(), [](uint32_t s) { return s == 8; }));
}

void TestGuestHostile::encodesDrdynvcAndFastPathFraming() {
  const uint8_t payload[3] = {1, 2, 3};
  const Bytes first = hostile::dvc::dataFirst(7, 0xFFFFFFFFu, payload, 3);
  QCOMPARE(first[0], uint8_t(0x2A)); // DATA_FIRST, Sp 2, cbChId 2
  QCOMPARE(le32(&first[1]), uint32_t(7));
  QCOMPARE(le32(&first[5]), uint32_t(0xFFFFFFFF));
  QCOMPARE(first.size(), size_t(12));
  QCOMPARE(hostile::dvc::data(7, payload, 3)[0], uint8_t(0x32));
  QCOMPARE(hostile::dvc::dataFirst(7, 9, payload, 3, hostile::dvc::DataFirstCompressed)[0], uint8_t(0x6A));
  QCOMPARE(hostile::dvc::data(7, payload, 3, hostile::dvc::DataCompressed)[0], uint8_t(0x72));

  const Bytes pdu =
      hostile::fastpath::pdu({{hostile::fastpath::Pointer, hostile::fastpath::First, Bytes(10, 0)}});
  QCOMPARE(pdu[0], uint8_t(0x00));
  QCOMPARE(static_cast<size_t>(((pdu[1] & 0x7F) << 8) | pdu[2]), pdu.size());
  QCOMPARE(pdu[3], uint8_t(0x2B)); // code 0xB, fragmentation FIRST (2)
  QCOMPARE(le16(&pdu[4]), uint16_t(10));
  QVERIFY(hostile::fastpath::pdu({{hostile::fastpath::Bitmap, 0, Bytes(40000, 0)}}).empty());
}

void TestGuestHostile::planarPlanesDecodeToTheirValues() {
  const uint32_t w = 301, h = 7; // odd: the chroma planes round up
  const Bytes planar = hostile::codec::planarYCoCgRle(w, h, 0x90, 0x30, 0x50);
  QCOMPARE(planar[0], uint8_t(0x3B)); // CLL 3 | CS | RLE | NA
  size_t at = 1;
  const uint32_t sw = (w + 1) / 2, sh = (h + 1) / 2;
  const std::pair<uint32_t, uint32_t> sizes[] = {{w, h}, {sw, sh}, {sw, sh}};
  const uint8_t values[] = {0x90, 0x30, 0x50};
  for (int i = 0; i < 3; ++i) {
    std::vector<uint8_t> plane;
    const size_t used =
        decodePlane(planar.data() + at, planar.size() - at, sizes[i].first, sizes[i].second, plane);
    QVERIFY2(used > 0, qPrintable(QStringLiteral("plane %1 malformed").arg(i)));
    QVERIFY(std::all_of(plane.begin(), plane.end(), [&](uint8_t v) { return v == values[i]; }));
    at += used;
  }
  QCOMPARE(at, planar.size()); // nothing left over
}

void TestGuestHostile::fuzzerIsReproducibleAndMutatesHalf() {
  gc::testguest::HostileFuzz a(7, 1, 1024, 768), b(7, 1, 1024, 768), c(8, 1, 1024, 768);
  bool differs = false;
  size_t wellFormed = 0;
  for (int i = 0; i < 400; ++i) {
    const Bytes pa = a.next();
    QCOMPARE(pa, b.next());
    differs = differs || pa != c.next();
    std::vector<GfxPdu> pdus;
    wellFormed += splitGfx(pa, pdus) ? 1 : 0;
  }
  QVERIFY(differs);
  QVERIFY2(a.mutated() > 150 && a.mutated() < 250, qPrintable(QString::number(a.mutated())));
  QVERIFY(wellFormed >= 200 && wellFormed < 400); // the unmutated parse, some mutated do not
  for (size_t i = 0; i < gc::testguest::HostileFuzz::kTemplates; ++i)
    QVERIFY2(a.perTemplate()[i] > 0, gc::testguest::HostileFuzz::templateName(i));
}

void TestGuestHostile::surfaceToSurfaceGoesOutAsDescribed() {
  Wire w;
  QVERIFY(w.start());
  const auto report =
      w.attack("{\"cmd\":\"attack\",\"name\":\"gfx-surface-to-surface\"}", "gfx-surface-to-surface");
  QVERIFY(report);
  QCOMPARE(report->value(QStringLiteral("sent")).toInt(), 4);
  QCOMPARE(report->value(QStringLiteral("complete")).toBool(), true);
  const GfxPdu* create = w.tap.first(hostile::gfx::CreateSurface);
  QVERIFY(create);
  QCOMPARE(le16(&create->body[2]), uint16_t(65535));
  QCOMPARE(le16(&create->body[4]), uint16_t(16));
  const GfxPdu* copy = w.tap.first(hostile::gfx::SurfaceToSurface);
  QVERIFY(copy);
  QCOMPARE(le16(&copy->body[8]), uint16_t(4000));   // rectSrc.right
  QCOMPARE(le16(&copy->body[14]), uint16_t(65000)); // destPts[0].x
  // Then a probe: a frame with a fill of the colour the guest reports.
  QVERIFY(w.pumpUntil([&] { return !w.guest.events(QStringLiteral("probe")).isEmpty(); }));
  QVERIFY(w.tap.count(hostile::gfx::StartFrame) >= 1);
}

void TestGuestHostile::zgfxBombGoesOutDeclaringOneGibibyte() {
  Wire w;
  QVERIFY(w.start());
  QVERIFY(w.attack("{\"cmd\":\"attack\",\"name\":\"gfx-zgfx-bomb\"}", "gfx-zgfx-bomb"));
  const auto bomb =
      std::find_if(w.tap.messages.begin(), w.tap.messages.end(),
                   [](const Rdp8Decoder::Info& i) { return i.declared == (uint32_t(1) << 30); });
  QVERIFY(bomb != w.tap.messages.end());
  QCOMPARE(bomb->segmentSizes.size(), size_t(16384));
  QCOMPARE(w.tap.undecoded, size_t(1)); // decoded only as far as 4 MiB, the rest measured
}

void TestGuestHostile::dataFirstGoesOutDeclaringFourGibibytes() {
  Wire w;
  QVERIFY(w.start());
  QVERIFY(w.attack("{\"cmd\":\"attack\",\"name\":\"dvc-data-first-4g\"}", "dvc-data-first-4g"));
  size_t firsts = 0, datas = 0, bytes = 0;
  for (const HostileTap::Dvc& d : w.tap.dvc) {
    if (d.channel != w.tap.gfxChannel || d.payload != hostile::dvc::kChunk)
      continue;
    if (d.cmd == 0x02 && d.declared == 0xFFFFFFFFu)
      ++firsts;
    else if (d.cmd == 0x03)
      ++datas;
    else
      continue;
    bytes += d.payload;
  }
  QCOMPARE(firsts, size_t(1));
  QCOMPARE(datas, size_t(64));
  QVERIFY(bytes > 100000);
}

void TestGuestHostile::coreAttacksGoOutAsFastPath() {
  Wire w;
  QVERIFY(w.start());
  QVERIFY(w.attack("{\"cmd\":\"attack\",\"name\":\"core-pointer-mask\"}", "core-pointer-mask"));
  QCOMPARE(w.tap.fastPaths.size(), size_t(1));
  const HostileTap::FastPath& pointer = w.tap.fastPaths[0];
  QCOMPARE(pointer.code, uint8_t(0xB));
  QCOMPARE(le16(&pointer.data[8]), uint16_t(32));   // width
  QCOMPARE(le16(&pointer.data[12]), uint16_t(7));   // lengthAndMask (128 needed)
  QCOMPARE(le16(&pointer.data[14]), uint16_t(100)); // lengthXorMask (4096 needed)

  QVERIFY(w.attack("{\"cmd\":\"attack\",\"name\":\"core-bitmap-outside\"}", "core-bitmap-outside"));
  QCOMPARE(w.tap.fastPaths.size(), size_t(2));
  QCOMPARE(w.tap.fastPaths[1].code, uint8_t(0x1));
  QCOMPARE(le16(&w.tap.fastPaths[1].data[4]), uint16_t(65000)); // destLeft

  const auto oversize =
      w.attack("{\"cmd\":\"attack\",\"name\":\"core-fastpath-oversize\"}", "core-fastpath-oversize");
  QVERIFY(oversize);
  size_t fragmented = 0;
  bool sawFirst = false, sawLast = false;
  for (size_t i = 2; i < w.tap.fastPaths.size(); ++i) {
    fragmented += w.tap.fastPaths[i].data.size();
    sawFirst = sawFirst || w.tap.fastPaths[i].fragmentation == hostile::fastpath::First;
    sawLast = sawLast || w.tap.fastPaths[i].fragmentation == hostile::fastpath::Last;
  }
  QVERIFY(sawFirst && sawLast);
  QCOMPARE(fragmented, size_t(oversize->value(QStringLiteral("fragmented_bytes")).toDouble()));
  QVERIFY(fragmented > size_t(oversize->value(QStringLiteral("multifrag_max")).toDouble()));
}

void TestGuestHostile::fuzzerSendsTheSamePdusForTheSameSeed() {
  std::vector<GfxPdu> runs[2];
  for (auto& pdus : runs) {
    Wire w;
    QVERIFY(w.start());
    const size_t before = w.tap.gfx.size();
    const auto report = w.attack("{\"cmd\":\"attack\",\"name\":\"fuzz\",\"seed\":42,\"count\":60}", "fuzz");
    QVERIFY(report);
    QCOMPARE(report->value(QStringLiteral("sent")).toInt(), 60);
    // This tap never drops the channel and acknowledges every frame: all batches acknowledged.
    QCOMPARE(report->value(QStringLiteral("batches_acked")).toInt(), 15);
    // The fuzzer's PDUs end with its last batch's frame (the probe after it has a timestamp).
    auto end = w.tap.gfx.begin() + static_cast<long>(before);
    for (auto it = end; it != w.tap.gfx.end(); ++it)
      if (it->cmd == hostile::gfx::EndFrame && it->body.size() >= 4 &&
          le32(it->body.data()) == 0x40000000u + 60)
        end = it + 1;
    pdus.assign(w.tap.gfx.begin() + static_cast<long>(before), end);
  }
  QVERIFY(runs[0].size() >= 15);
  QCOMPARE(runs[0].size(), runs[1].size());
  for (size_t i = 0; i < runs[0].size(); ++i) {
    QCOMPARE(runs[0][i].cmd, runs[1][i].cmd);
    QCOMPARE(runs[0][i].body, runs[1][i].body);
  }
}

void TestGuestHostile::frozenGuestStopsReading() {
  Wire w;
  QVERIFY(w.start());
  w.guest.command("{\"cmd\":\"attack\",\"name\":\"frozen\",\"after\":2}");
  QVERIFY(w.pumpUntil([&] { return !w.guest.events(QStringLiteral("attack_start")).isEmpty(); }));
  QVERIFY(w.client.sendKey(0x4000, 0x1e));
  QVERIFY(w.client.sendKey(0x8000, 0x1e));
  QVERIFY(w.pumpUntil([&] { return !w.guest.events(QStringLiteral("attack")).isEmpty(); }));
  const QJsonObject froze = w.guest.events(QStringLiteral("attack")).first();
  QCOMPARE(froze.value(QStringLiteral("after_inputs")).toInt(), 2);
  const qsizetype inputs = w.guest.events(QStringLiteral("input")).size();
  for (int i = 0; i < 10; ++i)
    QVERIFY(w.client.sendKey(i % 2 ? 0x8000 : 0x4000, 0x1f));
  // A guest that still read would report them within milliseconds; a bound, not a sync: the
  // guest has nothing to say, and stays alive (it answers the stats command).
  w.client.pump(1500);
  w.guest.command("{\"cmd\":\"stats\"}");
  QVERIFY(w.pumpUntil([&] { return !w.guest.events(QStringLiteral("stats")).isEmpty(); }));
  QCOMPARE(w.guest.events(QStringLiteral("input")).size(), inputs);
}

void TestGuestHostile::refusesAttacksOutsideHostileMode() {
  GuestProcess guest;
  QVERIFY(guest.start({QStringLiteral("--port"), QStringLiteral("0")}));
  guest.command("{\"cmd\":\"attack\",\"name\":\"gfx-zgfx-bomb\"}");
  QVERIFY(guest.waitForEvent(QStringLiteral("error")));
  QVERIFY(guest.events(QStringLiteral("error"))
              .first()
              .value(QStringLiteral("message"))
              .toString()
              .contains(QStringLiteral("hostile")));
  GuestProcess unknown;
  QVERIFY(!unknown.start({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--hostile"),
                          QStringLiteral("no-such-attack")}));
}

QTEST_GUILESS_MAIN(TestGuestHostile)
#include "tst_testguesthostile.moc"
