#include "readerwire/ReaderWire.h"

#include <QtEndian>

#include <concepts>
#include <cstring>
#include <string.h>
#include <type_traits>

namespace gc::wire {

namespace {

// The nested values' fields, in wire order (the messages list theirs in ReaderWire.h).
template <typename F> void nested(F& f, ClientDesktop& d) {
  f(d.width, d.height, d.keyboardLayout, d.keyboardType, d.keyboardSubType, d.keyboardFunctionKey);
}
template <typename F> void nested(F& f, RdpConfig& c) {
  f(c.host, c.port, c.pinSha256, c.unpinned, c.connectTimeoutMs, c.desktop, c.sizeFromServer);
}
template <typename F> void nested(F& f, Credentials& c) {
  f(c.username, c.password, c.domain);
}
template <typename F> void nested(F& f, ConnectTrace& t) {
  f(t.certificateChecked, t.certificateAccepted, t.pdusBeforeCertificate, t.pdusAfterCertificate,
    t.socketConnected);
}
template <typename F> void nested(F& f, ScrubReport& r) {
  f(r.ok, r.needles, r.needlesTooShort, r.regions, r.regionsSkipped, r.bytesScanned, r.copiesWiped,
    r.copiesUnwritable, r.copiesByNeedle, r.elapsedUs);
}
template <typename F> void nested(F& f, ChannelSnapshot& c) {
  f(c.staticRequested, c.staticJoined, c.advertisedCodecs, c.gfxAdvertised, c.gfxOpened, c.gfxCapsVersion,
    c.gfxCodecsUsed, c.gfxFrames, c.gfxCommands, c.dynamicOpened, c.refused, c.refusedOverflow);
}
template <typename F> void nested(F& f, SyncTiming& t) {
  f(t.deadline, t.quiet, t.answerWait, t.mayRestartGraphics);
}
template <typename F> void nested(F& f, SyncResult& r) {
  f(r.refreshSupported, r.answered, r.settled, r.confirmedBy, r.answerMs, r.elapsedMs, r.rungsOffered,
    r.rungsAsked, r.rungsSkipped);
}
template <typename F> void nested(F& f, Failure& failure) {
  f(failure.code, failure.message);
}
template <typename F> void nested(F& f, ProtocolViolation& v) {
  f(v.code, v.pdu, v.rule, v.desktop);
}
template <typename F> void nested(F& f, SurfaceMove& m) {
  f(m.source, m.target);
}

template <typename T> constexpr bool kNested = requires(T& v) {
  nested(std::declval<int&>(), v);
};

class Encoder {
public:
  explicit Encoder(QByteArray& out) : m_out(out) {}
  template <typename... T> void operator()(T&... values) { (one(values), ...); }

private:
  template <typename T> void integer(T v) {
    char bytes[sizeof(T)];
    qToLittleEndian(v, bytes);
    m_out.append(bytes, sizeof(T));
  }
  void one(bool& v) { integer<quint8>(v ? 1 : 0); }
  template <std::integral T>
  requires(!std::same_as<T, bool>) void one(T& v) { integer(v); }
  void one(std::chrono::milliseconds& v) {
    integer<quint32>(quint32(std::clamp<qint64>(v.count(), 0, 0x7fffffff)));
  }
  void one(Refusal& v) {
    QString name = refusalName(v);
    one(name);
  }
  void one(SyncConfirmation& v) { integer<quint8>(quint8(v)); }
  void one(PacingMode& v) { integer<quint8>(quint8(v)); }
  void raw(QByteArrayView bytes) {
    integer<quint32>(quint32(bytes.size()));
    m_out.append(bytes.data(), bytes.size());
  }
  void one(QString& v) { raw(v.toUtf8()); }
  void one(QByteArray& v) { raw(v); }
  void one(SecureBuffer& v) { raw(v.view()); }
  void one(QSize& v) { integer<qint32>(v.width()), integer<qint32>(v.height()); }
  void one(QPoint& v) { integer<qint32>(v.x()), integer<qint32>(v.y()); }
  void one(QRect& v) {
    integer<qint32>(v.x()), integer<qint32>(v.y()), integer<qint32>(v.width()), integer<qint32>(v.height());
  }
  void one(QStringList& v) {
    integer<quint32>(quint32(v.size()));
    for (QString& s : v)
      one(s);
  }
  void one(QMap<QString, int>& v) {
    integer<quint32>(quint32(v.size()));
    for (auto it = v.begin(); it != v.end(); ++it) {
      QString key = it.key();
      one(key);
      integer<qint32>(it.value());
    }
  }
  template <std::size_t N> void one(std::array<int, N>& v) {
    for (int& x : v)
      integer<qint32>(x);
  }
  template <typename T> void one(QList<T>& v) {
    integer<quint32>(quint32(v.size()));
    for (T& x : v)
      one(x);
  }
  template <typename T>
  requires kNested<T>
  void one(T& v) { nested(*this, v); }

  QByteArray& m_out;
};

// Counts the bytes a message takes, so a Start's buffer is reserved once and never grows
// (growth would leave a stale copy of the password in freed heap).
class Sizer {
public:
  template <typename... T> void operator()(T&... values) { (one(values), ...); }
  qsizetype bytes = 0;

private:
  template <typename T>
  requires std::is_arithmetic_v<T>
  void one(T&) { bytes += std::is_same_v<T, bool> ? 1 : qsizetype(sizeof(T)); }
  void one(std::chrono::milliseconds&) { bytes += 4; }
  void one(Refusal& v) { bytes += 4 + refusalName(v).toUtf8().size(); }
  void one(SyncConfirmation&) { bytes += 1; }
  void one(PacingMode&) { bytes += 1; }
  void one(QString& v) { bytes += 4 + v.toUtf8().size(); }
  void one(QByteArray& v) { bytes += 4 + v.size(); }
  void one(SecureBuffer& v) { bytes += 4 + qsizetype(v.size()); }
  void one(QSize&) { bytes += 8; }
  void one(QPoint&) { bytes += 8; }
  void one(QRect&) { bytes += 16; }
  void one(QStringList& v) {
    bytes += 4;
    for (QString& s : v)
      one(s);
  }
  void one(QMap<QString, int>& v) {
    bytes += 4;
    for (auto it = v.begin(); it != v.end(); ++it)
      bytes += 4 + it.key().toUtf8().size() + 4;
  }
  template <std::size_t N> void one(std::array<int, N>&) { bytes += qsizetype(4 * N); }
  template <typename T> void one(QList<T>& v) {
    bytes += 4;
    for (T& x : v)
      one(x);
  }
  template <typename T>
  requires kNested<T>
  void one(T& v) { nested(*this, v); }
};

class Decoder {
public:
  explicit Decoder(QByteArrayView in) : m_in(in) {}
  template <typename... T> void operator()(T&... values) { (one(values), ...); }

  bool ok() const { return m_error.isEmpty(); }
  bool atEnd() const { return m_pos == m_in.size(); }
  const QString& error() const { return m_error; }
  void fail(const QString& why) {
    if (m_error.isEmpty())
      m_error = why;
  }

private:
  template <typename T> bool integer(T& v) {
    if (!ok() || m_in.size() - m_pos < qsizetype(sizeof(T))) {
      fail(QStringLiteral("a field runs past the end"));
      v = T{};
      return false;
    }
    v = qFromLittleEndian<T>(m_in.data() + m_pos);
    m_pos += qsizetype(sizeof(T));
    return true;
  }
  // A length-prefixed run of at most `max` bytes; empty view on failure.
  QByteArrayView run(qsizetype max) {
    quint32 n = 0;
    if (!integer(n))
      return {};
    if (qsizetype(n) > max || qsizetype(n) > m_in.size() - m_pos) {
      fail(QStringLiteral("a length beyond its bound"));
      return {};
    }
    const QByteArrayView bytes = m_in.sliced(m_pos, qsizetype(n));
    m_pos += qsizetype(n);
    return bytes;
  }
  // A count of at most `max` elements, each at least `minBytes` long.
  quint32 count(qsizetype max, qsizetype minBytes) {
    quint32 n = 0;
    if (!integer(n))
      return 0;
    if (qsizetype(n) > max || qsizetype(n) * minBytes > m_in.size() - m_pos) {
      fail(QStringLiteral("a count beyond its bound"));
      return 0;
    }
    return n;
  }

  void one(bool& v) {
    quint8 b = 0;
    if (integer(b) && b > 1)
      fail(QStringLiteral("a boolean that is neither 0 nor 1"));
    v = b == 1;
  }
  template <std::integral T>
  requires(!std::same_as<T, bool>) void one(T& v) { integer(v); }
  void one(std::chrono::milliseconds& v) {
    quint32 ms = 0;
    integer(ms);
    if (ms > 0x7fffffffu)
      fail(QStringLiteral("a duration beyond its bound"));
    v = std::chrono::milliseconds(ms);
  }
  void one(Refusal& v) {
    QString name;
    one(name);
    const std::optional<Refusal> code = refusalFromName(name);
    if (ok() && !code)
      fail(QStringLiteral("an unknown refusal code"));
    v = code.value_or(Refusal::Internal);
  }
  void one(SyncConfirmation& v) {
    quint8 b = 0;
    if (integer(b) && b > quint8(SyncConfirmation::GfxCaps))
      fail(QStringLiteral("an unknown confirmation"));
    v = b <= quint8(SyncConfirmation::GfxCaps) ? SyncConfirmation(b) : SyncConfirmation::SettleOnly;
  }
  void one(PacingMode& v) {
    quint8 b = 0;
    if (integer(b) && b > quint8(PacingMode::Panel))
      fail(QStringLiteral("an unknown pacing mode"));
    v = b <= quint8(PacingMode::Panel) ? PacingMode(b) : PacingMode::Unpaced;
  }
  void one(QString& v) {
    const QByteArrayView bytes = run(kMaxString);
    if (!ok())
      return;
    v = QString::fromUtf8(bytes);
    if (v.toUtf8() != bytes)
      fail(QStringLiteral("a string that is not UTF-8"));
  }
  void one(QByteArray& v) { v = run(kMaxBytes).toByteArray(); }
  void one(SecureBuffer& v) {
    const QByteArrayView bytes = run(kMaxSecret);
    if (!ok())
      return;
    Outcome<SecureBuffer> copy = SecureBuffer::copyOf(bytes);
    if (!copy.ok())
      return fail(QStringLiteral("no locked memory for a credential"));
    v = std::move(copy).value();
  }
  void one(QSize& v) {
    qint32 w = 0, h = 0;
    integer(w), integer(h);
    v = QSize(w, h);
  }
  void one(QPoint& v) {
    qint32 x = 0, y = 0;
    integer(x), integer(y);
    v = QPoint(x, y);
  }
  void one(QRect& v) {
    qint32 x = 0, y = 0, w = 0, h = 0;
    integer(x), integer(y), integer(w), integer(h);
    // In the 16-bit coordinate range of RDP; width and height positive.
    // The rectangle is built only from checked values: QRect(x, y, w, h) computes x + w - 1.
    if (!ok())
      return;
    if (x < 0 || y < 0 || w <= 0 || h <= 0 || x > 0xFFFF || y > 0xFFFF || w > 0xFFFF || h > 0xFFFF)
      return fail(QStringLiteral("a rectangle out of range"));
    v = QRect(x, y, w, h);
  }
  void one(QStringList& v) {
    const quint32 n = count(kMaxNames, 4);
    v.clear();
    for (quint32 i = 0; i < n && ok(); ++i)
      one(v.emplace_back());
  }
  void one(QMap<QString, int>& v) {
    const quint32 n = count(kMaxNames, 8);
    v.clear();
    for (quint32 i = 0; i < n && ok(); ++i) {
      QString key;
      qint32 value = 0;
      one(key), integer(value);
      if (v.contains(key))
        fail(QStringLiteral("a duplicate key"));
      v.insert(key, value);
    }
  }
  template <std::size_t N> void one(std::array<int, N>& v) {
    for (int& x : v) {
      qint32 i = 0;
      integer(i);
      x = i;
    }
  }
  void one(QList<QRect>& v) { list(v, kMaxRects, 16); }
  void one(QList<SurfaceMove>& v) { list(v, kMaxMoves, 24); }
  template <typename T> void list(QList<T>& v, qsizetype max, qsizetype minBytes) {
    const quint32 n = count(max, minBytes);
    v.clear();
    v.reserve(qsizetype(n));
    for (quint32 i = 0; i < n && ok(); ++i)
      one(v.emplace_back());
  }
  template <typename T>
  requires kNested<T>
  void one(T& v) { nested(*this, v); }

  QByteArrayView m_in;
  qsizetype m_pos = 0;
  QString m_error;
};

template <typename Message> QByteArray encodeOne(const Message& message) {
  auto& m = const_cast<Message&>(message); // fields() is shared by both directions; encoding reads only
  Sizer sizer;
  m.fields(sizer);
  QByteArray out;
  out.reserve(2 + sizer.bytes);
  char type[2];
  qToLittleEndian(quint16(Message::kType), type);
  out.append(type, 2);
  Encoder encoder(out);
  m.fields(encoder);
  return out;
}

template <typename Variant, std::size_t I = 0> Outcome<Variant> decodeAs(quint16 type, QByteArrayView body) {
  if constexpr (I == std::variant_size_v<Variant>) {
    return Failure{Refusal::RdpReaderFailed, QStringLiteral("unknown message type %1").arg(type)};
  } else {
    using Message = std::variant_alternative_t<I, Variant>;
    if (quint16(Message::kType) != type)
      return decodeAs<Variant, I + 1>(type, body);
    Message message;
    Decoder decoder(body);
    message.fields(decoder);
    if (decoder.ok() && !decoder.atEnd())
      decoder.fail(QStringLiteral("trailing bytes"));
    if (!decoder.ok())
      return Failure{Refusal::RdpReaderFailed,
                     QStringLiteral("%1: %2").arg(typeName(Message::kType), decoder.error())};
    return Variant(std::move(message));
  }
}

template <typename Variant> Outcome<Variant> decodeDatagram(QByteArrayView datagram) {
  if (datagram.size() < 2 || datagram.size() > kMaxMessage)
    return Failure{Refusal::RdpReaderFailed, QStringLiteral("a message of %1 bytes").arg(datagram.size())};
  const auto type = qFromLittleEndian<quint16>(datagram.data());
  return decodeAs<Variant>(type, datagram.sliced(2));
}

} // namespace

QByteArray encode(const ToReader& message) {
  return std::visit([](const auto& m) { return encodeOne(m); }, message);
}

QByteArray encode(const FromReader& message) {
  return std::visit([](const auto& m) { return encodeOne(m); }, message);
}

Outcome<ToReader> decodeToReader(QByteArrayView datagram) {
  return decodeDatagram<ToReader>(datagram);
}

Outcome<FromReader> decodeFromReader(QByteArrayView datagram) {
  return decodeDatagram<FromReader>(datagram);
}

QString typeName(Type type) {
  switch (type) {
  case Type::Probe:
    return QStringLiteral("probe");
  case Type::Start:
    return QStringLiteral("start");
  case Type::Key:
    return QStringLiteral("key");
  case Type::Pointer:
    return QStringLiteral("pointer");
  case Type::ReleaseHeld:
    return QStringLiteral("release_held");
  case Type::SyncStart:
    return QStringLiteral("sync_start");
  case Type::SyncCancel:
    return QStringLiteral("sync_cancel");
  case Type::Lease:
    return QStringLiteral("lease");
  case Type::Return:
    return QStringLiteral("return");
  case Type::Finish:
    return QStringLiteral("finish");
  case Type::Abort:
    return QStringLiteral("abort");
  case Type::SelfTest:
    return QStringLiteral("self_test");
  case Type::Unicode:
    return QStringLiteral("unicode");
  case Type::Pacing:
    return QStringLiteral("pacing");
  case Type::Presented:
    return QStringLiteral("presented");
  case Type::SelfTestDone:
    return QStringLiteral("self_test_done");
  case Type::Ready:
    return QStringLiteral("ready");
  case Type::ProbeDone:
    return QStringLiteral("probe_done");
  case Type::Connected:
    return QStringLiteral("connected");
  case Type::Failed:
    return QStringLiteral("failed");
  case Type::Lost:
    return QStringLiteral("lost");
  case Type::FrameReady:
    return QStringLiteral("frame_ready");
  case Type::Leased:
    return QStringLiteral("leased");
  case Type::Resized:
    return QStringLiteral("resized");
  case Type::InputDone:
    return QStringLiteral("input_done");
  case Type::Released:
    return QStringLiteral("released");
  case Type::SyncDone:
    return QStringLiteral("sync_done");
  case Type::Finished:
    return QStringLiteral("finished");
  case Type::Closed:
    return QStringLiteral("closed");
  }
  return QStringLiteral("type %1").arg(quint16(type));
}

} // namespace gc::wire
