// ReaderWire: the one wire format between the console and its RDP reader process
// (guest-console-rdp), over a SOCK_SEQPACKET socketpair: one message per datagram, at most
// kMaxMessage bytes, a 16-bit type, then the message's fields in the order its fields()
// lists them, little-endian. That one list is both the writer and the reader of a message,
// used by both processes; the reader checks every length and count against the bounds below
// and refuses unknown types, short fields and trailing bytes. So what the console receives
// from the reader (which parses the guest's hostile bytes, and may be compromised by them)
// is one of these values, in bounds, or a protocol breach the console closes on
// (RDP_READER_FAILED). Ranges that depend on the session (a rectangle inside the desktop)
// are the receiver's to check.
//
// Descriptors travel beside a message (SCM_RIGHTS): the guest's socket with Probe and Start.
//
// Thread: value types and pure functions; any thread.
#pragma once

#include "common/Outcome.h"
#include "readerwire/ReaderTypes.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QPoint>
#include <QRect>
#include <QSize>

#include <cstddef>
#include <variant>

namespace gc::wire {

inline constexpr quint32 kVersion = 1;
inline constexpr qsizetype kMaxMessage = 64 * 1024;
inline constexpr qsizetype kMaxString = 2048;
inline constexpr qsizetype kMaxBytes = 64;    // pins, digests
inline constexpr qsizetype kMaxSecret = 1024; // one credential field
inline constexpr qsizetype kMaxNames = 64;    // a string list
inline constexpr qsizetype kMaxRects = 1024;  // damage rectangles per lease
inline constexpr qsizetype kMaxMoves = 64;    // moves per lease
inline constexpr qsizetype kMaxNeedles = 8;
// At most this many inputs are on their way from the console ahead of their answers, and the
// reader takes at most this many queued inputs as one run: enough that a queue of them costs
// one round trip to the reader, not one each, and little enough that neither side's socket
// buffer can fill while the other waits to be read.
inline constexpr std::size_t kInputsInFlight = 32;
// Connected::inputCaps bits; any other bit is a breach.
inline constexpr quint32 kInputCapUnicode = 0x1, kInputCapHorizontalWheel = 0x2, kInputCapExtendedMouse = 0x4;

// A move inside the desktop, replayed by whoever shows it (rdp/DesktopSurface.h).
struct SurfaceMove {
  QRect source;
  QPoint target;
  friend bool operator==(const SurfaceMove&, const SurfaceMove&) = default;
};

enum class Type : quint16 {
  // console → reader
  Probe = 1,
  Start,
  Key,
  Pointer,
  ReleaseHeld,
  SyncStart,
  SyncCancel,
  Lease,
  Return,
  Finish,
  Abort,
  SelfTest, // test builds only
  Unicode,
  // console → reader: frame pacing, numbered apart from the others
  Pacing = 40,
  Presented,
  // reader → console
  Ready = 100,
  ProbeDone,
  Connected,
  Failed,
  Lost,
  FrameReady,
  Leased,
  Resized,
  InputDone,
  Released,
  SyncDone,
  Finished,
  Closed,
  SelfTestDone,
};

// ---- console → reader ----------------------------------------------------------------
// Learn the guest's certificate over the socket that comes with it (nothing but X.224 and
// the TLS handshake is sent); answered by ProbeDone.
struct Probe {
  static constexpr Type kType = Type::Probe;
  QString host;
  quint16 port = 0;
  quint32 timeoutMs = 0;
  template <typename F> void fields(F& f) { f(host, port, timeoutMs); }
};
// Open the session over the socket that comes with it; answered by Connected or Failed.
struct Start {
  static constexpr Type kType = Type::Start;
  RdpConfig config; // configDir and socketFd do not travel
  RdpCredentials credentials;
  template <typename F> void fields(F& f) { f(config, credentials); }
};
// The inputs (Key, Pointer, Unicode) carry `chained`: sent behind the input before it (id − 1)
// without waiting for its answer, and written only if that one was. So a run the console
// sends ahead stops at its first failure in the reader too, as it would one at a time.
struct Key {
  static constexpr Type kType = Type::Key;
  quint32 id = 0;
  quint16 scancode = 0;
  bool down = false;
  bool chained = false;
  template <typename F> void fields(F& f) { f(id, scancode, down, chained); }
};
struct Pointer {
  static constexpr Type kType = Type::Pointer;
  quint32 id = 0;
  quint16 x = 0, y = 0;
  quint8 buttons = 0; // bit 0 left, 1 right, 2 middle, 3 back, 4 forward
  qint16 wheel = 0;
  bool horizontal = false; // the wheel is the horizontal one
  bool chained = false;
  template <typename F> void fields(F& f) { f(id, x, y, buttons, wheel, horizontal, chained); }
};
// One UTF-16 code unit of the action's type_text (TS_UNICODE_KEYBOARD_EVENT); answered by
// InputDone like a key.
struct Unicode {
  static constexpr Type kType = Type::Unicode;
  quint32 id = 0;
  quint16 codeUnit = 0;
  bool down = false;
  bool chained = false;
  template <typename F> void fields(F& f) { f(id, codeUnit, down, chained); }
};
struct ReleaseHeld {
  static constexpr Type kType = Type::ReleaseHeld;
  quint32 id = 0;
  template <typename F> void fields(F& f) { f(id); }
};
struct SyncStart {
  static constexpr Type kType = Type::SyncStart;
  SyncTiming timing;
  template <typename F> void fields(F& f) { f(timing); }
};
struct SyncCancel {
  static constexpr Type kType = Type::SyncCancel;
  template <typename F> void fields(F&) {}
};
// The console wants the desktop's pixels: at the next frame boundary the reader stops
// writing the shared desktop and answers Leased with what changed since the last lease.
// `whenReady`: at the first boundary with changes, with no FrameReady before it (a console
// that wants every frame asks for the next one ahead); a later Lease without it makes it due
// at the next boundary.
struct Lease {
  static constexpr Type kType = Type::Lease;
  bool whenReady = false;
  template <typename F> void fields(F& f) { f(whenReady); }
};
// The console is done reading: the reader may write the shared desktop again.
struct Return {
  static constexpr Type kType = Type::Return;
  quint64 serial = 0;
  template <typename F> void fields(F& f) { f(serial); }
};
struct Finish {
  static constexpr Type kType = Type::Finish;
  quint32 boundMs = 0;
  template <typename F> void fields(F& f) { f(boundMs); }
};
// Disconnect properly (within a bound), answer Closed, exit.
struct Abort {
  static constexpr Type kType = Type::Abort;
  template <typename F> void fields(F&) {}
};

// How the reader paces the guest's frames from now on (rdp/FramePacer.h): the console sends
// it at connect, when the panel is authorized, and around the lock and the capture.
struct Pacing {
  static constexpr Type kType = Type::Pacing;
  PacingMode mode = PacingMode::Unpaced;
  template <typename F> void fields(F& f) { f(mode); }
};
// The panel presented every frame up to the lease `upto` (Leased.serial): the frame
// acknowledgements held for it may go to the guest.
struct Presented {
  static constexpr Type kType = Type::Presented;
  quint64 upto = 0;
  template <typename F> void fields(F& f) { f(upto); }
};

// Test builds only (GC_TEST_HOOKS): the reader reports what its sandbox lets it do, or
// misbehaves on purpose so the console's defences can be tested. A release reader refuses it.
struct SelfTest {
  static constexpr Type kType = Type::SelfTest;
  enum Mode : quint8 { ProbeSandbox = 0, SendMalformed, SendUnaskedLease, SendDamageOutside, Crash };
  quint8 mode = ProbeSandbox;
  template <typename F> void fields(F& f) { f(mode); }
};

// ---- reader → console ----------------------------------------------------------------
struct Ready {
  static constexpr Type kType = Type::Ready;
  quint32 version = kVersion;
  quint32 sandbox = 0; // SandboxReport::Applied bits
  template <typename F> void fields(F& f) { f(version, sandbox); }
};
struct ProbeDone {
  static constexpr Type kType = Type::ProbeDone;
  bool ok = false;
  Failure failure;   // when !ok
  QByteArray digest; // SHA-256 of the certificate's DER, 32 bytes, when ok
  template <typename F> void fields(F& f) { f(ok, failure, digest); }
};
struct Connected {
  static constexpr Type kType = Type::Connected;
  QSize desktop;
  QString security; // RdpSession::securityProtocol()
  ConnectTrace trace;
  ScrubReport residue;
  ChannelSnapshot channels;
  quint32 inputCaps = 0; // kInputCap* bits: what the server's Input Capability Set advertised
  template <typename F> void fields(F& f) { f(desktop, security, trace, residue, channels, inputCaps); }
};
struct Failed {
  static constexpr Type kType = Type::Failed;
  Failure failure;
  ConnectTrace trace;
  ScrubReport residue;
  ProtocolViolation violation;
  template <typename F> void fields(F& f) { f(failure, trace, residue, violation); }
};
struct Lost {
  static constexpr Type kType = Type::Lost;
  Failure failure;
  ProtocolViolation violation;
  ChannelSnapshot channels;
  template <typename F> void fields(F& f) { f(failure, violation, channels); }
};
// A complete frame is in the shared desktop (sent once until the next lease).
struct FrameReady {
  static constexpr Type kType = Type::FrameReady;
  template <typename F> void fields(F&) {}
};
struct Leased {
  static constexpr Type kType = Type::Leased;
  quint64 serial = 0;
  QSize size; // the desktop's size now (pixels at stride width * 4 in the shared desktop)
  bool resized = false;
  QList<SurfaceMove> moves;
  QList<QRect> damage;
  template <typename F> void fields(F& f) { f(serial, size, resized, moves, damage); }
};
struct Resized {
  static constexpr Type kType = Type::Resized;
  QSize size;
  template <typename F> void fields(F& f) { f(size); }
};
struct InputDone {
  static constexpr Type kType = Type::InputDone;
  quint32 id = 0;
  quint32 written = 0; // PDUs written, also when a later one failed
  bool ok = false;
  Failure failure;
  template <typename F> void fields(F& f) { f(id, written, ok, failure); }
};
struct Released {
  static constexpr Type kType = Type::Released;
  quint32 id = 0;
  bool ok = false;
  quint32 keys = 0;
  quint32 buttons = 0;
  Failure failure;
  template <typename F> void fields(F& f) { f(id, ok, keys, buttons, failure); }
};
struct SyncDone {
  static constexpr Type kType = Type::SyncDone;
  bool ok = false;
  Failure failure;
  SyncResult result;
  template <typename F> void fields(F& f) { f(ok, failure, result); }
};
struct Finished {
  static constexpr Type kType = Type::Finished;
  bool confirmed = false;
  quint64 elapsedMs = 0;
  quint32 writesDropped = 0;
  template <typename F> void fields(F& f) { f(confirmed, elapsedMs, writesDropped); }
};
struct Closed {
  static constexpr Type kType = Type::Closed;
  bool ultimatumSent = false;
  ChannelSnapshot channels;
  template <typename F> void fields(F& f) { f(ultimatumSent, channels); }
};

// What each sandbox probe returned: "open_file=13" (errno), "socket_inet=13", … 0 = allowed.
struct SelfTestDone {
  static constexpr Type kType = Type::SelfTestDone;
  QStringList results;
  template <typename F> void fields(F& f) { f(results); }
};

using ToReader = std::variant<Probe, Start, Key, Pointer, ReleaseHeld, SyncStart, SyncCancel, Lease, Return,
                              Finish, Abort, SelfTest, Unicode, Pacing, Presented>;
using FromReader = std::variant<Ready, ProbeDone, Connected, Failed, Lost, FrameReady, Leased, Resized,
                                InputDone, Released, SyncDone, Finished, Closed, SelfTestDone>;

// The datagram of one message. A Start carries the credentials: its bytes are in a buffer
// the caller zeroes as soon as it is sent (secureWipe), never grown or copied.
QByteArray encode(const ToReader& message);
QByteArray encode(const FromReader& message);

// One datagram into a message; RDP_READER_FAILED naming the first broken rule otherwise.
// A Start's credentials are decoded into locked memory (SecureBuffer).
Outcome<ToReader> decodeToReader(QByteArrayView datagram);
Outcome<FromReader> decodeFromReader(QByteArrayView datagram);

QString typeName(Type type);

} // namespace gc::wire
