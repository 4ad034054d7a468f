#include "rdp/RdpSession.h"

#include "common/StateTable.h"
#include "privacy/SecureZero.h"
#include "rdp/CertificatePin.h"
#include "rdp/DisconnectUltimatum.h"
#include "rdp/FrontGuard.h"
#include "rdp/GraphicsPipeline.h"
#include "rdp/RdpContext.h"
#include "rdp/SessionSetup.h"
#include "rdp/WLogRouter.h"
#include "rdp/front/Limits.h"
#include "rdp/gfx/GfxChannel.h"

#include <QFile>
#include <QMetaObject>
#include <QThread>
#include <QTimer>
#include <QVarLengthArray>

#include <freerdp/client.h>
#include <freerdp/error.h>
#include <freerdp/freerdp.h>
#include <freerdp/input.h>
#include <freerdp/scancode.h>
#include <freerdp/settings.h>
#include <winpr/synch.h>

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <span>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gc {

namespace {

// The corner the lock's corner rungs ask for and watch: the desktop's bottom-right 16×16.
QRect lockCorner(const QRect& desktop) {
  return QRect(desktop.right() - 15, desktop.bottom() - 15, 16, 16).intersected(desktop);
}

// What the server's Input Capability Set advertised (MS-RDPBCGR 2.2.7.1.6), as wire::kInputCap*
// bits, read from the set's own bytes: FreeRDP 3 keeps the client's FreeRDP_UnicodeInput TRUE
// whatever the server said (rdp_apply_input_capability_set reads the flag back from the
// client's settings instead of the received ones) and then sends Unicode events the server
// never asked for. The horizontal wheel and the extended buttons FreeRDP does apply; both
// must agree, since FreeRDP drops those events when its own flag is off.
quint32 serverInputCaps(rdpSettings* settings) {
  constexpr size_t kCapsetInput = 0x000D;
  constexpr quint16 kMouseX = 0x0004, kUnicode = 0x0010, kHorizontalWheel = 0x0100;
  if (freerdp_settings_get_uint32(settings, FreeRDP_ReceivedCapabilitiesSize) <= kCapsetInput)
    return 0;
  const auto* received =
      static_cast<const BYTE*>(freerdp_settings_get_pointer(settings, FreeRDP_ReceivedCapabilities));
  const auto* sizes =
      static_cast<const UINT32*>(freerdp_settings_get_pointer(settings, FreeRDP_ReceivedCapabilityDataSizes));
  const auto* data =
      static_cast<const BYTE* const*>(freerdp_settings_get_pointer(settings, FreeRDP_ReceivedCapabilityData));
  if (!received || !sizes || !data || !received[kCapsetInput] || sizes[kCapsetInput] < 2 ||
      !data[kCapsetInput])
    return 0;
  const quint16 flags = quint16(data[kCapsetInput][0] | (data[kCapsetInput][1] << 8));
  quint32 caps = 0;
  if (flags & kUnicode)
    caps |= 0x1u;
  if ((flags & kHorizontalWheel) && freerdp_settings_get_bool(settings, FreeRDP_HasHorizontalWheel))
    caps |= 0x2u;
  if ((flags & kMouseX) && freerdp_settings_get_bool(settings, FreeRDP_HasExtendedMouseEvent))
    caps |= 0x4u;
  return caps;
}

// Overwrites FreeRDP's copy of a secret setting in place, then drops it. The copies FreeRDP
// 3.10 makes where no pointer of ours reaches (the settings backup, NLA's UTF-16 identities,
// CredSSP buffers, some freed without zeroing: https://github.com/FreeRDP/FreeRDP/issues/12531)
// are overwritten by value afterwards (scrubCredentialResidue).
void wipeSecretSetting(rdpSettings* settings, FreeRDP_Settings_Keys_String key) {
  if (char* value = freerdp_settings_get_string_writable(settings, key))
    secureZero(value, std::strlen(value));
  freerdp_settings_set_string(settings, key, nullptr);
}

bool isAuthError(UINT32 error) {
  switch (error) {
  case FREERDP_ERROR_AUTHENTICATION_FAILED:
  case FREERDP_ERROR_CONNECT_LOGON_FAILURE:
  case FREERDP_ERROR_CONNECT_WRONG_PASSWORD:
  case FREERDP_ERROR_CONNECT_ACCESS_DENIED:
  case FREERDP_ERROR_CONNECT_ACCOUNT_RESTRICTION:
  case FREERDP_ERROR_CONNECT_ACCOUNT_LOCKED_OUT:
  case FREERDP_ERROR_CONNECT_ACCOUNT_EXPIRED:
  case FREERDP_ERROR_CONNECT_ACCOUNT_DISABLED:
  case FREERDP_ERROR_CONNECT_LOGON_TYPE_NOT_GRANTED:
  case FREERDP_ERROR_CONNECT_NO_OR_MISSING_CREDENTIALS:
  case FREERDP_ERROR_CONNECT_PASSWORD_EXPIRED:
  case FREERDP_ERROR_CONNECT_PASSWORD_CERTAINLY_EXPIRED:
  case FREERDP_ERROR_CONNECT_PASSWORD_MUST_CHANGE:
  case FREERDP_ERROR_CONNECT_CLIENT_REVOKED:
  case FREERDP_ERROR_SERVER_FRESH_CREDENTIALS_REQUIRED:
    return true;
  default:
    return false;
  }
}

} // namespace

namespace {
using S = RdpSession::State;
constexpr auto kStates =
    makeStateTable<S>({"idle", "connecting", "connected", "finished"},
                      {
                          {S::Idle, S::Connecting, "start()"},
                          {S::Idle, S::Finished, "abort() before start()"},
                          {S::Connecting, S::Connected, "the session is up"},
                          {S::Connecting, S::Finished, "the connect failed or was aborted"},
                          {S::Connected, S::Finished, "lost, finished or aborted"},
                          {S::Finished, S::Finished, "abort() after a failed start"},
                      });
} // namespace

namespace {
using E = RdpSession::Ending;
// Only forward: an ending that got further stays (abort() after the worker ended on its own).
constexpr auto kEndings = makeStateTable<E>(
    {"running", "half-closed", "disconnecting", "aborting", "worker done"},
    {
        {E::Running, E::HalfClosed, "finishGracefully(): the goodbye, the writing side shut"},
        {E::Running, E::Disconnecting, "abort() of a live session: the worker says goodbye"},
        {E::Running, E::Aborting, "abort() of a session not (or not yet) connected"},
        {E::HalfClosed, E::HalfClosed, "finishGracefully() again, after its bound passed"},
        {E::HalfClosed, E::Aborting, "abort() after the goodbye: nothing more to say"},
        {E::Aborting, E::Aborting, "abort() again"},
        {E::Running, E::WorkerDone, "the guest closed or broke a rule, or connecting failed"},
        {E::HalfClosed, E::WorkerDone, "the guest closed after the goodbye"},
        {E::Disconnecting, E::WorkerDone, "the worker said goodbye and stopped"},
        {E::Aborting, E::WorkerDone, "the worker stopped"},
    });
} // namespace

QString RdpSession::stateName(State state) {
  return kStates.name(state);
}

QString RdpSession::endingName(Ending ending) {
  return kEndings.name(ending);
}

RdpSession::RdpSession(std::span<uchar> desktopMemory, QObject* parent)
    : QObject(parent),
      m_surface(desktopMemory.empty() ? nullptr : std::make_unique<DesktopSurface>(desktopMemory)),
      m_gfx(std::make_unique<GraphicsPipeline>()) {
  qRegisterMetaType<gc::Failure>();
  qRegisterMetaType<gc::DesktopSurface::Changes>();
}

// Idle -> Connecting -> Connected -> Finished; Idle and Connecting may also end at once, and
// ending again is a no-op (abort() after a failed start).
bool RdpSession::setState(State to) {
  State from = m_state.load();
  while (true) {
    if (!kStates.allows(from, to)) {
      qCWarning(lcRdp).noquote() << "RdpSession: refused state change" << stateName(from) << "->"
                                 << stateName(to);
      return false;
    }
    if (m_state.compare_exchange_weak(from, to)) {
      if (from != to)
        qCInfo(lcRdp).noquote() << "RdpSession:" << stateName(from) << "->" << stateName(to);
      return true;
    }
  }
}

bool RdpSession::setEnding(Ending to) {
  {
    std::lock_guard lock(m_endMutex); // a waiter for WorkerDone cannot miss it
    const Ending from = m_ending.load();
    if (!kEndings.allows(from, to)) {
      if (from != Ending::WorkerDone)
        qCWarning(lcRdp).noquote() << "RdpSession: refused ending" << endingName(from) << "->"
                                   << endingName(to);
      return false;
    }
    m_ending = to;
    if (from != to)
      qCInfo(lcRdp).noquote() << "RdpSession: ending" << endingName(from) << "->" << endingName(to);
  }
  m_endCv.notify_all();
  return true;
}

bool RdpSession::stopping() const {
  const Ending e = m_ending.load();
  return e == Ending::Disconnecting || e == Ending::Aborting || e == Ending::WorkerDone;
}

RdpSession::~RdpSession() {
  abort();
}

void RdpSession::start(RdpConfig config, RdpCredentials credentials) {
  // Whatever happens below, the caller's secrets do not outlive this call.
  struct Wipe {
    RdpCredentials& c;
    ~Wipe() {
      c.username.clear();
      c.password.clear();
      c.domain.clear();
    }
  } wipe{credentials};

  std::lock_guard lifecycle(m_lifecycleMutex);
  const auto fail = [this](Refusal code, QString message) {
    setState(State::Finished);
    if (m_config.socketFd >= 0)
      ::close(std::exchange(m_config.socketFd, -1));
    postToMain([this, f = Failure{code, std::move(message)}] { emit failed(f); });
  };
  if (m_state != State::Idle) {
    qCWarning(lcRdp) << "RdpSession::start called twice";
    return;
  }
  m_config = std::move(config);
  m_guard.allow(m_config.host, m_config.port);
  if (m_config.host != QStringLiteral("127.0.0.1"))
    return fail(Refusal::RdpRuleNotLoopback, QStringLiteral("the RDP host must be 127.0.0.1"));
  if (!m_config.unpinned && m_config.pinSha256.size() != 32)
    return fail(Refusal::Internal, QStringLiteral("the certificate pin must be 32 bytes"));
  if (m_config.configDir.isEmpty() && m_config.socketFd < 0)
    return fail(Refusal::Internal, QStringLiteral("no private FreeRDP config directory"));

  // Needles for the post-login scrub: the password (valid UTF-8: it arrived as JSON text)
  // and what NTLM derives from it (NT hash, NTOWFv2).
  auto needles = CredentialNeedles::of(credentials);
  if (!needles.ok())
    return fail(Refusal::PrivacyViolation, QStringLiteral("cannot hold the password's scrub needles"));
  m_residueNeedles = std::move(needles.value());

  if (!m_surface) {
    // No shared desktop given (tests): one sized for the largest desktop the grant allows,
    // its pixel count.
    const QSize requested(int(m_config.desktop.width ? m_config.desktop.width : 1920),
                          int(m_config.desktop.height ? m_config.desktop.height : 1080));
    m_surface = std::make_unique<DesktopSurface>(qsizetype(requested.width()) * requested.height() *
                                                 DesktopSurface::kBytesPerPixel);
  }
  // The RDPGFX client draws into the surface of record within the grant's bounds.
  m_gfx->prepare(
      FrontGuard::limitsFor(m_config), *m_surface, [this] { desktopFrameBegan(); },
      [this] { desktopFrameEnded(); });
  // Each EndFrame asks the pacing (worker, under m_ioMutex: drdynvc runs inside the event
  // processing); what it holds goes out from releaseDueAcknowledgements().
  {
    std::lock_guard io(m_ioMutex);
    FramePacer::Timing timing = m_pacer.timing();
    timing.maxHeld = std::max<std::size_t>(1, FrontGuard::limitsFor(m_config).maxFramesInFlight / 2);
    m_pacer.setTiming(timing);
  }
  // The lock's ladder: its requests, and the answer of its gfx_caps rung (worker, under
  // m_ioMutex).
  m_gfx->gfxChannel()->client().setCapsConfirmed([this] { m_guestSync.noteCapsConfirm(); });
  m_guestSync.setAsk([this](SyncConfirmation rung) { return askGuest(rung); },
                     [this] {
                       std::lock_guard alive(m_lifecycleMutex);
                       std::lock_guard ioLock(m_ioMutex);
                       applySuppressOutput(); // what the ladder held back
                     },
                     [this] { return pipelineState(); });
  m_gfx->gfxChannel()->client().setPacing([this](uint32_t) {
    m_pacer.noteHanded(m_handed);
    return m_pacer.ackNow(std::chrono::steady_clock::now(),
                          m_gfx->gfxChannel()->client().deferredAcknowledgements());
  });

  WLogRouter::install();

  RDP_CLIENT_ENTRY_POINTS entry = SessionSetup::entryPoints();
  m_context = freerdp_client_context_new(&entry);
  if (!m_context)
    return fail(Refusal::Internal, QStringLiteral("cannot create the FreeRDP context"));
  reinterpret_cast<RdpContext*>(m_context)->session = static_cast<SessionHooks*>(this);
  reinterpret_cast<RdpContext*>(m_context)->pipeline = m_gfx.get();
  reinterpret_cast<RdpContext*>(m_context)->gfxChannel = m_gfx->gfxChannel();
  m_front = std::make_unique<FrontGuard>(FrontGuard::limitsFor(m_config));
  reinterpret_cast<RdpContext*>(m_context)->front = m_front.get();

  const bool ok = SessionSetup::configure(m_context->settings, m_config, credentials);
  if (!ok) {
    freeContext();
    return fail(Refusal::Internal, QStringLiteral("cannot configure FreeRDP"));
  }

  setState(State::Connecting);
  const quint64 generation = m_generation;
  QTimer::singleShot(m_config.connectTimeoutMs, this, [this, generation] {
    std::lock_guard guard(m_lifecycleMutex);
    if (generation == m_generation && m_state == State::Connecting && m_context) {
      m_timedOut = true;
      freerdp_abort_connect_context(m_context);
    }
  });
  m_worker = std::thread([this] { run(); });
}

void RdpSession::run() {
  struct SignalDone {
    RdpSession* self;
    ~SignalDone() {
      self->setEnding(Ending::WorkerDone); // finishGracefully() and abort() see the session gone
      self->m_guestSync.noteSessionEnded();
    }
  } signalDone{this};
  freerdp* instance = m_context->instance;
  const BOOL ok = freerdp_connect(instance);
  // FreeRDP has used its copies; do not keep them for the session's lifetime.
  wipeSecretSetting(m_context->settings, FreeRDP_Password);
  wipeSecretSetting(m_context->settings, FreeRDP_Username);
  wipeSecretSetting(m_context->settings, FreeRDP_Domain);

  if (!ok || stopping()) {
    const Failure failure = m_gfx->gfxFailure().value_or(classifyConnectFailure());
    freerdp_disconnect(instance);
    scrubCredentialResidue(); // an auth failure leaves the same copies as a login
    setState(State::Finished);
    if (!stopping()) {
      postToMain([this, failure] {
        reapWorker();
        emit failed(failure);
      });
    }
    return;
  }
  scrubCredentialResidue();
  m_gfx->noteConnected(instance);

  const QSize desktop = m_surface->size();
  m_selectedProtocol = freerdp_settings_get_uint32(m_context->settings, FreeRDP_SelectedProtocol);
  m_inputCaps = serverInputCaps(m_context->settings);
  setState(State::Connected);
  {
    std::lock_guard io(m_ioMutex);
    applySuppressOutput(); // a mode set while connecting
  }
  postToMain([this, desktop] { emit connected(desktop); });

  QString reason;
  std::optional<WLogRouter::ExpectedErrors> expected; // once half-closed: the guest's EOF is the plan
  while (!stopping()) {
    // Between events: a requested lease is granted here, at a frame boundary; while it is
    // held the guest's PDUs wait unread (input still goes out on the main thread).
    serveLease();
    if (stopping())
      break;
    HANDLE handles[MAXIMUM_WAIT_OBJECTS] = {};
    DWORD count = freerdp_get_event_handles(m_context, handles, ARRAYSIZE(handles) - 1);
    if (count == 0) {
      reason = QStringLiteral("no FreeRDP event handles");
      break;
    }
    handles[count++] = m_lease.event();
    // Bounded wait: the abort event is among the handles, the timeout is only a backstop.
    WaitForMultipleObjects(count, handles, FALSE, 100);
    std::lock_guard io(m_ioMutex);
    if (stopping())
      break;
    // Checked here, under the lock finishGracefully() half-closes with: a guest that closes at
    // once is read in this very pass.
    if (ending() == Ending::HalfClosed && !expected)
      expected.emplace();
    if (!freerdp_check_event_handles(m_context) || freerdp_shall_disconnect_context(m_context)) {
      const UINT32 error = freerdp_get_last_error(m_context);
      reason =
          QString::fromUtf8(error ? freerdp_get_last_error_name(error) : "the server closed the connection");
      break;
    }
    // A frame the server never ends is handed out anyway after kFrameHold.
    if (m_lease.frameOpen() && m_lease.atFrameBoundary() && m_surface->hasChanges())
      sayFrameReady();
    // Held frame acknowledgements whose time has come (the poll wakes at least every 100 ms).
    releaseDueAcknowledgements();
  }

  setState(State::Finished);
  {
    std::lock_guard io(m_ioMutex);
    std::optional<WLogRouter::ExpectedErrors> closing; // our own close: FreeRDP's complaints are noise
    if (stopping())
      closing.emplace();
    // abort() of a live session: say goodbye (the ultimatum, then TLS close_notify inside
    // freerdp_disconnect) while the socket is still open; abort() bounds how long it waits.
    if (ending() == Ending::Disconnecting)
      m_ultimatumSent = DisconnectUltimatum::send(m_context);
    freerdp_disconnect(instance);
  }
  if (!stopping()) {
    // A front refused a PDU, a desktop check refused a size, the guest redirected, or it
    // simply went away.
    const std::optional<Failure> refused = m_front->failure();
    const Failure failure = refused               ? *refused
                            : violation().isSet() ? violationFailure()
                            : m_guard.redirectionRefused()
                                ? Failure{Refusal::RdpRedirectRefused, m_guard.describe()}
                                : m_gfx->gfxFailure().value_or(Failure{Refusal::RdpLost, reason});
    postToMain([this, failure] {
      reapWorker();
      emit lost(failure);
    });
  }
}

void RdpSession::serveLease() {
  m_lease.serve(
      m_surface->hasChanges(),
      [this](quint64 serial) {
        m_handed = serial; // the pacing counts the frames handed to the console
        DesktopSurface::Changes changes = m_surface->takeChanges();
        postToMain([this, serial, changes = std::move(changes)] { emit leased(serial, changes); });
      },
      [this] { return stopping(); });
}

void RdpSession::sayFrameReady() {
  if (m_lease.takeReadyToSay())
    postToMain([this] { emit frameReady(); });
}

void RdpSession::requestLease(SurfaceLease::When when) {
  m_lease.request(when);
}

void RdpSession::returnLease() {
  m_lease.giveBack();
}

void RdpSession::setPacingTiming(FramePacer::Timing timing) {
  std::lock_guard io(m_ioMutex);
  m_pacer.setTiming(timing);
}

void RdpSession::setPacing(PacingMode mode) {
  std::lock_guard lifecycle(m_lifecycleMutex); // m_context stays alive
  std::lock_guard io(m_ioMutex);
  if (m_pacer.mode() != mode)
    qCInfo(lcRdp).noquote() << "frame pacing:" << pacingModeName(mode);
  m_pacer.setMode(mode);
  applySuppressOutput();
  releaseDueAcknowledgements();
}

void RdpSession::notePresented(quint64 upto) {
  std::lock_guard lifecycle(m_lifecycleMutex);
  std::lock_guard io(m_ioMutex);
  m_pacer.notePresented(std::min<quint64>(upto, m_handed)); // nothing beyond what was handed
  releaseDueAcknowledgements();
}

RdpSession::PacingState RdpSession::pacing() const {
  std::lock_guard io(m_ioMutex);
  PacingState p;
  p.mode = m_pacer.mode();
  p.handed = m_handed;
  p.presented = m_pacer.presented();
  p.outputSuppressed = m_outputSuppressed;
  if (gfx::GfxChannel* channel = m_gfx->gfxChannel()) {
    p.deferred = channel->client().deferredAcknowledgements();
    p.acknowledged = channel->client().acknowledgementsSent();
  }
  return p;
}

void RdpSession::releaseDueAcknowledgements() {
  gfx::GfxChannel* channel = m_gfx->gfxChannel();
  if (!channel || m_state != State::Connected || !m_context || ending() != Ending::Running)
    return;
  gfx::GfxClient& client = channel->client();
  m_pacer.noteHanded(m_handed);
  const auto now = std::chrono::steady_clock::now();
  if (!m_pacer.releaseDue(now, client.deferredAcknowledgements()))
    return;
  client.acknowledgeDeferred();
  m_pacer.noteReleased(now);
}

void RdpSession::applySuppressOutput() {
  if (m_state != State::Connected || !m_context || !m_context->update || ending() != Ending::Running)
    return;
  const bool suppress = m_pacer.mode() == PacingMode::NoPanel;
  if (suppress == m_outputSuppressed)
    return;
  // Leaving NoPanel for the lock (Unpaced): the output is allowed again by the lock's guest
  // sync, after the drained input (askGuest). Allowed now, before some of that input, the
  // server's repaint could arrive after the sync's request and pass for its answer.
  if (!suppress && m_pacer.mode() == PacingMode::Unpaced)
    return;
  // Not while the lock's ladder waits for its answer: the repaint would pass for it. The
  // ladder's end applies it (GuestSync's Asked).
  if (m_guestSync.rungPending())
    return;
  // The server's General Capability Set said whether it takes the PDU (MS-RDPBCGR 2.2.7.1.1).
  if (!freerdp_settings_get_bool(m_context->settings, FreeRDP_SuppressOutput))
    return;
  const QSize size = m_surface->size();
  // TS_SUPPRESS_OUTPUT_PDU (MS-RDPBCGR 2.2.11.3.1): allow = true names the desktop to send
  // again (TS_RECTANGLE16, right and bottom inclusive).
  const RECTANGLE_16 area{0, 0, UINT16(std::max(size.width(), 1) - 1),
                          UINT16(std::max(size.height(), 1) - 1)};
  if (m_context->update->SuppressOutput(m_context, suppress ? 0 : 1, suppress ? nullptr : &area))
    m_outputSuppressed = suppress;
  else
    qCWarning(lcRdp) << "the Suppress Output PDU could not be written";
}

void RdpSession::desktopFrameBegan() {
  m_lease.frameBegan();
}

void RdpSession::desktopFrameEnded() {
  m_lease.frameEnded();
  const DesktopSurface::Note note = m_surface->takeNote();
  // The guest sync arms its request under m_ioMutex, which this update holds: the frame's
  // end is wholly before the request or wholly after it (a frame open across the request is
  // told apart by the sync: askGuest). Every frame's end, touched or not, closes that.
  m_guestSync.noteUpdate(std::span<const QRect>(note.touched.constData(), std::size_t(note.touched.size())),
                         note.changed);
  if (m_surface->hasChanges())
    sayFrameReady();
}

bool RdpSession::admitDesktopSize(QSize size, const char* pdu) {
  const auto refuse = [&](Refusal code, const char* rule) {
    noteViolation(ProtocolViolation{code, QString::fromLatin1(pdu), QString::fromLatin1(rule), QSize()});
    return false;
  };
  if (size.width() < 1 || size.height() < 1)
    return refuse(Refusal::RdpProtocolViolation, "an empty desktop");
  if (size.width() > int(front::Limits::kMaxSide) || size.height() > int(front::Limits::kMaxSide))
    return refuse(Refusal::RdpResourceLimit, "a desktop side beyond 8192 pixels");
  if (!m_surface->fits(size)) {
    if (m_config.sizeFromServer)
      return refuse(Refusal::RdpResourceLimit, "a desktop larger than the grant's pixel count");
    // The grant fixes the size and this is not it: the console judges (and records) the size
    // it was shown, as for any other size than the grant's, while the session ends here.
    if (m_state == State::Connected)
      noteDesktopResized(size);
    return refuse(Refusal::RdpDesktopMismatch, "a desktop size other than the grant's, larger than it");
  }
  // A size other than the grant's that fits is the console's to judge, with its evidence:
  // every size reaches it (desktopResized).
  return true;
}

void RdpSession::noteViolation(ProtocolViolation violation) {
  std::lock_guard lock(m_violationMutex);
  if (!m_violation.isSet()) {
    qCWarning(lcRdp).noquote() << "refused the guest's" << violation.pdu << ":" << violation.rule;
    m_violation = std::move(violation);
  }
}

void RdpSession::noteDesktopResized(QSize size) {
  postToMain([this, size] { emit desktopResized(size); });
}

// In the order the failure is reported (run(), classifyConnectFailure()): the RDPGFX client,
// the validating fronts, then the session's own desktop check.
ProtocolViolation RdpSession::violation() const {
  const auto fromFront = [](std::optional<front::Violation> v, std::optional<Failure> failure) {
    if (!v || !failure)
      return ProtocolViolation{};
    return ProtocolViolation{failure->code, QString::fromLatin1(v->pdu.data(), qsizetype(v->pdu.size())),
                             QString::fromLatin1(v->rule.data(), qsizetype(v->rule.size())), QSize()};
  };
  if (ProtocolViolation g = fromFront(m_gfx->gfxViolation(), m_gfx->gfxFailure()); g.isSet())
    return g;
  if (m_front) {
    if (ProtocolViolation f = fromFront(m_front->violation(), m_front->failure()); f.isSet()) {
      if (const auto size = m_front->refusedDesktop())
        f.desktop = QSize(int(size->width), int(size->height));
      return f;
    }
  }
  std::lock_guard lock(m_violationMutex);
  return m_violation;
}

Failure RdpSession::violationFailure() const {
  const ProtocolViolation v = violation();
  return Failure{v.code, QStringLiteral("the guest's %1 broke a rule: %2").arg(v.pdu, v.rule)};
}

void RdpSession::scrubCredentialResidue() {
  m_residue = m_residueNeedles.scrubAndWipe();
  qCInfo(lcRdp).nospace() << "credential residue after login: " << m_residue.copiesWiped << " cop"
                          << (m_residue.copiesWiped == 1 ? "y" : "ies") << " wiped, "
                          << m_residue.copiesUnwritable << " unwritable, "
                          << m_residue.bytesScanned / (1024 * 1024) << " MiB scanned in "
                          << m_residue.elapsedUs / 1000 << " ms";
}

Failure RdpSession::classifyConnectFailure() const {
  if (const std::optional<Failure> refused = m_front ? m_front->failure() : std::nullopt)
    return *refused; // a front refused a PDU before FreeRDP parsed it
  if (violation().isSet())
    return violationFailure();
  if (m_guard.redirectionRefused())
    return {Refusal::RdpRedirectRefused, m_guard.describe()};
  if (m_certChecked && !m_certAccepted)
    return {Refusal::GuestCertMismatch, QStringLiteral("the guest's certificate does not match the pin")};
  if (m_timedOut)
    return {Refusal::RdpUnreachable, QStringLiteral("connecting timed out")};
  const UINT32 error = freerdp_get_last_error(m_context);
  const QString name = QString::fromUtf8(freerdp_get_last_error_name(error));
  if (isAuthError(error))
    return {Refusal::AuthFailed, name};
  switch (error) {
  case FREERDP_ERROR_CONNECT_FAILED:
  case FREERDP_ERROR_DNS_ERROR:
  case FREERDP_ERROR_DNS_NAME_NOT_FOUND:
    return {Refusal::RdpUnreachable, name};
  case FREERDP_ERROR_CONNECT_TRANSPORT_FAILED:
  case FREERDP_ERROR_TLS_CONNECT_FAILED:
    // Before a certificate was seen the server never completed a TLS handshake.
    if (!m_certChecked)
      return {Refusal::RdpUnreachable, name};
    break;
  default:
    break;
  }
  return {Refusal::RdpProtocol, name};
}

void RdpSession::abort() {
  bool hadStarted = false;
  {
    std::lock_guard lifecycle(m_lifecycleMutex);
    ++m_generation; // drops queued worker posts: after abort() only closed() is emitted
    hadStarted = m_state != State::Idle && (m_context || m_worker.joinable());
    // A live session gets a proper disconnect from the worker (run()). Half-closed
    // (finishGracefully) it is past saying anything.
    const bool polite = m_state == State::Connected && ending() == Ending::Running && m_worker.joinable() &&
                        m_worker.get_id() != std::this_thread::get_id();
    setEnding(polite ? Ending::Disconnecting : Ending::Aborting);
    m_lease.wake(); // a worker waiting for a lease's return sees it
    if (m_context) {
      WLogRouter::ExpectedErrors cancelling;    // FreeRDP logs ERRCONNECT_CONNECT_CANCELLED for it
      freerdp_abort_connect_context(m_context); // wakes the worker's event wait
    }
    if (polite) {
      // The guest need not answer; only our writes must get out. A guest that stopped
      // reading cannot hold us: after the bound the socket is shut down as before.
      std::unique_lock lock(m_endMutex);
      m_endCv.wait_for(lock, kDisconnectBound, [this] { return ending() == Ending::WorkerDone; });
    }
    m_socket.shutdown(); // wakes FreeRDP out of any blocking read
    if (m_worker.joinable()) {
      if (m_worker.get_id() == std::this_thread::get_id())
        m_worker.detach(); // cannot happen via queued signals; never self-join
      else
        m_worker.join();
    }
    freeContext();
    setState(State::Finished);
  }
  if (hadStarted)
    QMetaObject::invokeMethod(
        this, [this] { emit closed(); }, Qt::QueuedConnection);
}

RdpSession::Finish RdpSession::finishGracefully(std::chrono::milliseconds bound) {
  QElapsedTimer clock;
  clock.start();
  if (m_state != State::Connected)
    return {};
  {
    std::lock_guard lifecycle(m_lifecycleMutex); // m_context stays alive
    // Not in the middle of a PDU: sendKey/sendPointer write whole PDUs under m_ioMutex.
    std::lock_guard io(m_ioMutex);
    // The goodbye goes after the last input, in order (a 9-byte PDU, written like a key):
    // the guest reads everything, then the ultimatum, and closes its side itself.
    if (m_context && !stopping())
      m_ultimatumSent = DisconnectUltimatum::send(m_context);
    if (!m_socket.shutWriting()) // FIN after every byte already written
      return {};
    setEnding(Ending::HalfClosed);
  }
  // The worker keeps reading (and drawing into the desktop) until the guest closes. It writes
  // nothing more (SessionSetup::writePdu): a write into the shut socket would fail, end the
  // session at once, and the reset would destroy whatever the guest has not read yet.
  std::unique_lock lock(m_endMutex);
  const bool closed = m_endCv.wait_for(lock, bound, [this] { return ending() == Ending::WorkerDone; });
  return {closed, clock.elapsed(), m_writesAfterGoodbye.load()};
}

void RdpSession::startGuestSync(GuestSync::Timing timing, GuestSync::Done done) {
  bool connected = false;
  QRect corner;
  quint8 offered = 0;
  bool suppressFirst = false;
  {
    std::lock_guard lifecycle(m_lifecycleMutex); // m_context stays alive
    std::lock_guard io(m_ioMutex);
    if (m_state == State::Connected && !stopping() && m_context && !m_surface->size().isEmpty()) {
      connected = true;
      const QRect desktop = m_surface->rect();
      corner = lockCorner(desktop);
      // What the server's General Capability Set advertised (MS-RDPBCGR 2.2.7.1.1), and the
      // pipeline once its caps are confirmed.
      if (freerdp_settings_get_bool(m_context->settings, FreeRDP_RefreshRect))
        offered |= syncRungBit(SyncConfirmation::RefreshRect);
      if (freerdp_settings_get_bool(m_context->settings, FreeRDP_SuppressOutput))
        offered |= syncRungBit(SyncConfirmation::SuppressOutput);
      // A pipeline still opening or coming up is offered too: the ladder asks it once its caps
      // are confirmed (a lock right after the connect).
      if (gfx::GfxChannel* channel = m_gfx->gfxChannel();
          timing.mayRestartGraphics && channel &&
          (channel->client().front().caps() || pipelineState() != GuestSync::Pipeline::Steady))
        offered |= syncRungBit(SyncConfirmation::GfxCaps);
      suppressFirst = m_outputSuppressed && m_pacer.mode() != PacingMode::NoPanel;
    }
  }
  if (!connected) {
    // The session is gone. From the event loop, like every other outcome.
    QMetaObject::invokeMethod(
        this,
        [done = std::move(done)] {
          done(Failure{Refusal::DrainFailed, QStringLiteral("the guest session is gone")});
        },
        Qt::QueuedConnection);
    return;
  }
  m_guestSync.start(corner, offered, suppressFirst, timing, std::move(done));
}

GuestSync::Request RdpSession::askGuest(SyncConfirmation rung) {
  using Request = GuestSync::Request;
  std::lock_guard lifecycle(m_lifecycleMutex); // m_context stays alive
  std::lock_guard io(m_ioMutex);               // after every input written before us
  if (m_state != State::Connected || stopping() || !m_context || !m_context->update ||
      ending() != Ending::Running)
    return Request::Failed;
  gfx::GfxChannel* channel = m_gfx->gfxChannel();
  if (rung == SyncConfirmation::GfxCaps && !(channel && channel->client().front().caps()))
    return Request::Unavailable; // the pipeline did not come up: nothing to advertise again
  const QRect desktop = m_surface->rect();
  const QRect corner = lockCorner(desktop);
  m_guestSync.armRung(rung, m_lease.frameOpen());
  if (rung != SyncConfirmation::SuppressOutput && m_outputSuppressed &&
      m_pacer.mode() != PacingMode::NoPanel) {
    // The un-suppress held back since the lock began (applySuppressOutput), now after the
    // drained input: a repaint it brings is as causal as the rung's answer.
    const RECTANGLE_16 area{0, 0, UINT16(desktop.right()), UINT16(desktop.bottom())};
    if (!m_context->update->SuppressOutput(m_context, 1, &area))
      return Request::Failed;
    m_outputSuppressed = false;
  }
  const auto written = [](bool ok) { return ok ? Request::Written : Request::Failed; };
  switch (rung) {
  case SyncConfirmation::RefreshRect: {
    // TS_RECTANGLE16 of the Refresh Rect PDU: right and bottom inclusive.
    const RECTANGLE_16 area{UINT16(corner.left()), UINT16(corner.top()), UINT16(corner.right()),
                            UINT16(corner.bottom())};
    return written(m_context->update->RefreshRect(m_context, 1, &area));
  }
  case SyncConfirmation::SuppressOutput: {
    // Off, then on with the whole desktop: the server sends it again (MS-RDPBCGR 2.2.11.3.1).
    // The pacer's own state is what the server now has: output allowed.
    const RECTANGLE_16 area{0, 0, UINT16(desktop.right()), UINT16(desktop.bottom())};
    const bool ok = m_context->update->SuppressOutput(m_context, 0, nullptr) &&
                    m_context->update->SuppressOutput(m_context, 1, &area);
    m_outputSuppressed = false;
    return written(ok);
  }
  case SyncConfirmation::GfxCaps:
    return written(channel->client().readvertise());
  case SyncConfirmation::SettleOnly:
    break;
  }
  return Request::Failed;
}

GuestSync::Pipeline RdpSession::pipelineState() {
  // Atomics, not m_ioMutex: the ladder's look must not wait for the worker's update.
  using Pipeline = GuestSync::Pipeline;
  gfx::GfxChannel* channel = m_gfx->gfxChannel();
  if (!channel)
    return Pipeline::Steady;
  if (channel->client().comingUp())
    return Pipeline::ComingUp;
  if (m_gfx->advertised() && !channel->client().everOpened())
    return Pipeline::Opening;
  return Pipeline::Steady;
}

void RdpSession::reapWorker() {
  std::lock_guard lifecycle(m_lifecycleMutex);
  if (m_worker.joinable())
    m_worker.join(); // the worker posted this as its last act
  freeContext();
}

void RdpSession::freeContext() {
  if (m_context) {
    freerdp_client_context_free(m_context);
    m_context = nullptr;
  }
  m_socket.close(); // the worker is gone (joined or detached) or never ran
  if (m_config.socketFd >= 0) {
    ::close(m_config.socketFd); // handed over but never adopted (the session ended before connecting)
    m_config.socketFd = -1;
  }
  if (m_surface)
    m_surface->wipe(); // guest pixels: the shared desktop holds nothing after the session
}

void RdpSession::socketConnected(int fd) {
  if (!m_socket.adopt(fd)) {
    qCWarning(lcRdp) << "cannot duplicate the RDP socket; abort falls back to FreeRDP's abort event";
    return;
  }
  // abort() changes the ending before it shuts the socket down: one of us sees the other.
  if (stopping())
    m_socket.shutdown();
}

void RdpSession::postToMain(std::function<void()> fn) {
  const quint64 generation = m_generation;
  QMetaObject::invokeMethod(
      this,
      [this, generation, fn = std::move(fn)] {
        if (generation == m_generation)
          fn();
      },
      Qt::QueuedConnection);
}

Status RdpSession::sendKey(quint16 scancode, bool down) {
  const quint8 prefix = quint8(scancode >> 8);
  if (prefix != 0x00 && prefix != 0xE0)
    return Failure{Refusal::InputInvalid, QStringLiteral("unsupported scancode prefix")};
  std::lock_guard lifecycle(m_lifecycleMutex); // m_context stays alive
  std::lock_guard io(m_ioMutex);
  if (m_state != State::Connected || stopping() || !m_context)
    return Failure{Refusal::InputSendFailed, QStringLiteral("not connected")};
  return m_input.sendKey(m_context->input, scancode, down);
}

Status RdpSession::sendUnicode(quint16 codeUnit, bool down) {
  std::lock_guard lifecycle(m_lifecycleMutex); // m_context stays alive
  std::lock_guard io(m_ioMutex);
  if (m_state != State::Connected || stopping() || !m_context)
    return Failure{Refusal::InputSendFailed, QStringLiteral("not connected")};
  if (!(m_inputCaps.load() & 0x1u))
    return Failure{Refusal::ActionUnsupported, QStringLiteral("the server does not advertise Unicode input")};
  return m_input.sendUnicode(m_context->input, codeUnit, down);
}

Status RdpSession::sendPointer(quint16 x, quint16 y, quint8 buttons, qint16 wheel, int* written,
                               bool horizontal) {
  int sent = 0;
  struct Report {
    int* out;
    int& n;
    ~Report() {
      if (out)
        *out = n;
    }
  } report{written, sent};
  std::lock_guard lifecycle(m_lifecycleMutex); // m_context stays alive
  std::lock_guard io(m_ioMutex);
  if (m_state != State::Connected || stopping() || !m_context)
    return Failure{Refusal::InputSendFailed, QStringLiteral("not connected")};
  if ((horizontal && wheel != 0 && !(m_inputCaps.load() & 0x2u)) ||
      ((buttons & 0x18) && !(m_inputCaps.load() & 0x4u)))
    return Failure{Refusal::ActionUnsupported,
                   QStringLiteral("the server does not advertise the horizontal wheel or extended buttons")};
  return m_input.sendPointer(m_context->input, x, y, buttons, wheel, sent, horizontal);
}

RdpSession::Released RdpSession::held() const {
  std::lock_guard io(m_ioMutex);
  const InputState::Held h = m_input.held();
  return {int(h.keys.count() + size_t(h.units.size())), int(std::bitset<8>(h.buttons).count())};
}

Outcome<RdpSession::Released> RdpSession::releaseHeld() {
  Released released;
  InputState::Held h;
  {
    std::lock_guard io(m_ioMutex);
    h = m_input.held();
  }
  // Only the main thread sends, so nothing can be pressed between the copy and the sends.
  for (std::size_t i = 0; i < h.keys.size(); ++i) {
    if (!h.keys.test(i))
      continue;
    const auto scancode = quint16((i >= 256 ? 0xE000 : 0) | (i & 0xFF));
    if (Status s = sendKey(scancode, false); !s.ok())
      return s.failure();
    ++released.keys;
  }
  for (quint16 unit : h.units) {
    if (Status s = sendUnicode(unit, false); !s.ok())
      return s.failure();
    ++released.keys;
  }
  if (h.buttons) {
    if (Status s = sendPointer(h.x, h.y, 0, 0); !s.ok())
      return s.failure();
    released.buttons = int(std::bitset<8>(h.buttons).count());
  }
  return released;
}

ChannelReport::Snapshot RdpSession::channelReport() const {
  return m_gfx->report();
}

QString RdpSession::securityProtocol() const {
  // MS-RDPBCGR 2.2.1.2.1 selectedProtocol (FreeRDP keeps the constants in a private header).
  switch (m_selectedProtocol.load()) {
  case 0x00000000:
    return QStringLiteral("rdp");
  case 0x00000001: // PROTOCOL_SSL
    return QStringLiteral("tls");
  case 0x00000002: // PROTOCOL_HYBRID
  case 0x00000008: // PROTOCOL_HYBRID_EX
    return QStringLiteral("nla");
  case 0x00000004:
    return QStringLiteral("rdstls");
  case 0x00000010:
    return QStringLiteral("aad");
  default:
    return QString();
  }
}

bool RdpSession::judgeCertificate(const std::optional<QByteArray>& leafSha256) {
  m_certChecked = true;
  const bool accept =
      leafSha256 && (m_config.unpinned || CertificatePin::matches(*leafSha256, m_config.pinSha256));
  m_certAccepted = accept;
  return accept;
}

bool RdpSession::admitWrite() {
  if (m_socket.writingShut()) {
    // After the goodbye (finishGracefully) the socket is shut for writing; what FreeRDP still
    // answers (frame acknowledgements) is not written, and counts as written so the session
    // reads on until the guest closes.
    ++m_writesAfterGoodbye;
    return false;
  }
  ++(m_certChecked ? m_pdusAfterCert : m_pdusBeforeCert);
  return true;
}

ConnectTrace RdpSession::connectTrace() const {
  return {m_certChecked, m_certAccepted, m_pdusBeforeCert, m_pdusAfterCert, m_socket.everConnected()};
}

} // namespace gc
