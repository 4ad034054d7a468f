#include "action/ActionService.h"

#include "action/ActionPlan.h"
#include "action/CaptureScaler.h"
#include "action/dialects/Dialects.h"
#include "audit/EvidenceLog.h"
#include "bridge/frames/PngEncoder.h"
#include "common/QuietSpell.h"
#include "privacy/SecureZero.h"
#include "session/InputSink.h"
#include "session/LockBarrier.h"
#include "session/PhaseController.h"

#include <QCryptographicHash>
#include <QEventLoop>
#include <QJsonArray>
#include <QLoggingCategory>
#include <QRandomGenerator>
#include <QTimer>
#include <QUuid>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

namespace gc {

Q_LOGGING_CATEGORY(lcAction, "gc.action")

namespace {

const QString kOpCapture = QStringLiteral("capture_desktop");
const QString kOpZoom = QStringLiteral("zoom_desktop");
const QString kOpPerform = QStringLiteral("perform_action");
const QString kOpLock = QStringLiteral("request_lock");

// Frame bytes must not linger in freed heap memory after the PNG is handed on.
void wipe(QImage& image) {
  if (!image.isNull() && image.isDetached())
    secureZero(image.bits(), size_t(image.sizeInBytes()));
  image = QImage();
}

} // namespace

ActionService::ActionService(const Grant& grant, VmIdentity vm, PhaseController* phases, LockBarrier* barrier,
                             EvidenceLog* evidence, InputSink* sink, FrameSource currentFrame,
                             QObject* parent)
    : QObject(parent), m_grant(grant), m_vm(std::move(vm)), m_phases(phases), m_barrier(barrier),
      m_evidence(evidence), m_sink(sink), m_currentFrame(std::move(currentFrame)) {
  m_textKey.resize(32);
  QRandomGenerator::system()->generate(reinterpret_cast<quint32*>(m_textKey.data()),
                                       reinterpret_cast<quint32*>(m_textKey.data() + m_textKey.size()));
}

ActionService::~ActionService() = default;

QJsonObject ActionService::status() const {
  QJsonObject json{{QStringLiteral("phase"), phaseName(m_phases->phase())},
                   {QStringLiteral("run"), m_grant.runId},
                   {QStringLiteral("task"), m_grant.taskId},
                   {QStringLiteral("vm_name"), m_vm.name},
                   {QStringLiteral("vm_uuid"), m_vm.uuid},
                   {QStringLiteral("grant_digest"), QString::fromLatin1(m_grant.digestHex)},
                   {QStringLiteral("mcp_server"), m_grant.mcp.server},
                   {QStringLiteral("mcp_tool"), m_grant.mcp.tool},
                   {QStringLiteral("acted"), m_acted}};
  QJsonArray candidates;
  for (const Candidate& c : m_grant.candidates)
    candidates.append(QJsonObject{{QStringLiteral("id"), c.id},
                                  {QStringLiteral("label"), c.label},
                                  {QStringLiteral("action"), c.action.toJson()}});
  json.insert(QStringLiteral("candidates"), candidates);
  // The capture's size and so the actions' coordinate space.
  QJsonObject capture{{QStringLiteral("bound"), m_grant.capture.toJson()}};
  if (const Outcome<CoordinateMapping> mapping = currentMapping(); mapping.ok()) {
    capture.insert(QStringLiteral("coordinate_space"), mapping->coordinateSpaceJson());
    capture.insert(QStringLiteral("desktop"), mapping->mappedToJson());
  }
  json.insert(QStringLiteral("capture"), capture);
  if (!m_barrier->confirmation().isEmpty())
    json.insert(QStringLiteral("lock_confirmation"), m_barrier->confirmation());
  // What perform_action accepts here: the grant's kinds and limits, the dialects, and what the
  // guest's server advertised for input.
  QJsonObject accepts = m_grant.actionPolicy.toJson();
  accepts.insert(QStringLiteral("dialects"), QJsonArray::fromStringList(dialects::names()));
  const InputCaps caps = m_inputCaps ? m_inputCaps() : InputCaps{};
  accepts.insert(QStringLiteral("server_input"),
                 QJsonObject{{QStringLiteral("unicode"), caps.unicode},
                             {QStringLiteral("horizontal_wheel"), caps.horizontalWheel},
                             {QStringLiteral("extended_buttons"), caps.extendedButtons}});
  json.insert(QStringLiteral("action"), accepts);
  return json;
}

Status ActionService::admit(const QString& op) {
  if (!m_phases->closeIfExpired())
    return success();
  return Status(refuse(op, Refusal::Expired, QStringLiteral("the grant has expired")));
}

void ActionService::whenLockSettled(std::function<void(const Status&)> done) {
  if (!m_barrier->syncing()) {
    done(m_phases->isClosed() ? Status(m_phases->closeReason()) : success());
    return;
  }
  // Whichever comes first; both connections go then.
  auto connections = std::make_shared<std::pair<QMetaObject::Connection, QMetaObject::Connection>>();
  auto finish = [connections, done = std::move(done)](const Status& result) {
    QObject::disconnect(connections->first);
    QObject::disconnect(connections->second);
    done(result);
  };
  connections->first =
      connect(m_barrier, &LockBarrier::captureStarted, this, [finish] { finish(success()); });
  connections->second = connect(m_barrier, &LockBarrier::lockFailed, this,
                                [finish](const Failure& failure) { finish(Status(failure)); });
}

void ActionService::setPictureSettle(std::function<Clock::time_point()> lastChange,
                                     std::chrono::milliseconds quiet, std::chrono::milliseconds bound) {
  m_lastChange = std::move(lastChange);
  m_settleQuiet = quiet;
  m_settleBound = bound;
}

void ActionService::whenPictureSettled(std::function<void()> done) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  const Clock::time_point start = Clock::now();
  auto* timer = new QTimer(this);
  timer->setSingleShot(true);
  timer->setTimerType(Qt::PreciseTimer);
  const auto check = [this, timer, start, done = std::move(done)] {
    const Clock::time_point now = Clock::now();
    const Clock::time_point lastChange = m_lastChange ? m_lastChange() : start - m_settleQuiet;
    const QuietSpell spell = QuietSpell::at(now, lastChange, m_settleQuiet, start + m_settleBound);
    if (spell.waiting) {
      timer->start(std::max(1, QuietSpell::timerMs(spell.next, now)));
      return;
    }
    m_pictureSettle = {
        {QStringLiteral("settled"), spell.quiet},
        {QStringLiteral("waited_ms"), qint64(duration_cast<milliseconds>(now - start).count())}};
    timer->deleteLater();
    done();
  };
  connect(timer, &QTimer::timeout, this, check);
  check();
}

Outcome<CoordinateMapping> ActionService::currentMapping() const {
  QImage frame = m_currentFrame ? m_currentFrame() : QImage();
  const QSize desktop = frame.size();
  frame = QImage();
  if (desktop.isEmpty())
    return Failure{Refusal::Internal, QStringLiteral("no guest frame has arrived yet")};
  const Outcome<QSize> space = m_grant.capture.spaceFor(desktop);
  if (!space)
    return space.failure();
  return CoordinateMapping(*space, desktop);
}

bool ActionService::encode(QImage& image, Capture& capture) {
  // Our PngEncoder, not QImageWriter: its libpng/zlib memory is zeroed before it is freed and
  // its output grows without leaving stale copies (QBuffer's growth reallocates). Thorough
  // settings (one capture, not a stream), which also keep its bytes distinct from the panel's
  // frame packets.
  if (image.depth() != 32)
    image = image.convertToFormat(QImage::Format_RGB32);
  capture.width = image.width();
  capture.height = image.height();
  capture.png.reserve(qsizetype(image.width()) * image.height() / 4 + 4096);
  const bool encoded = PngEncoder(PngEncoder::Settings{6, 0xf8, 0}).encode(image, image.rect(), capture.png);
  wipe(image);
  if (!encoded)
    return false;
  capture.sha256Hex = QCryptographicHash::hash(capture.png, QCryptographicHash::Sha256).toHex();
  return true;
}

Outcome<ActionService::Capture> ActionService::captureDesktop() {
  if (Status s = admit(kOpCapture); !s.ok())
    return s.failure();
  const Phase phase = m_phases->phase();
  if (phase != Phase::Capturing && phase != Phase::Reviewing)
    return refuse(kOpCapture, Refusal::CaptureNotAllowed,
                  QStringLiteral("capture is allowed from CAPTURING on, not in %1").arg(phaseName(phase)));
  QImage frame = m_currentFrame ? m_currentFrame() : QImage();
  if (frame.isNull())
    return refuse(kOpCapture, Refusal::Internal, QStringLiteral("no guest frame has arrived yet"));
  const Outcome<QSize> space = m_grant.capture.spaceFor(frame.size());
  if (!space) {
    wipe(frame);
    return refuse(kOpCapture, space.code(), space.failure().message);
  }

  Capture capture;
  capture.from = frame.size();
  if (frame.depth() != 32)
    frame = frame.convertToFormat(QImage::Format_RGB32);
  // The model gets the grant's size; without a capture section the frame's own bytes, as before.
  QImage image = CaptureScaler::scaled(frame, *space);
  if (image.constBits() != frame.constBits())
    wipe(frame);
  else
    frame = QImage();
  if (image.isNull() || !encode(image, capture))
    return refuse(kOpCapture, Refusal::Internal, QStringLiteral("the frame could not be encoded"));
  ++m_captures;
  capture.lockConfirmation = m_barrier->confirmation();
  QJsonObject entry{
      {QStringLiteral("sha256"), QString::fromLatin1(capture.sha256Hex)},
      {QStringLiteral("width"), capture.width},
      {QStringLiteral("height"), capture.height},
      {QStringLiteral("scale"),
       QJsonObject{{QStringLiteral("from"), QJsonArray{capture.from.width(), capture.from.height()}},
                   {QStringLiteral("to"), QJsonArray{capture.width, capture.height}},
                   {QStringLiteral("filter"), QLatin1StringView(CaptureScaler::kFilter)}}},
      {QStringLiteral("count"), m_captures},
      {QStringLiteral("lock_confirmation"), capture.lockConfirmation}};
  if (!m_pictureSettle.isEmpty())
    entry.insert(QStringLiteral("picture"), std::exchange(m_pictureSettle, {}));
  record(QStringLiteral("capture"), entry);
  if (phase == Phase::Capturing)
    (void)m_phases->transition(Phase::Reviewing, QStringLiteral("first capture taken"));
  return capture;
}

Outcome<ActionService::Capture> ActionService::zoomDesktop(const QJsonObject& arguments) {
  if (Status s = admit(kOpZoom); !s.ok())
    return s.failure();
  const Phase phase = m_phases->phase();
  if (phase != Phase::Capturing && phase != Phase::Reviewing)
    return refuse(kOpZoom, Refusal::CaptureNotAllowed,
                  QStringLiteral("zoom is allowed where capture is (CAPTURING, REVIEWING), not in %1")
                      .arg(phaseName(phase)));
  const auto invalid = [this](const QString& message) {
    return refuse(kOpZoom, Refusal::ObservationInvalid, QStringLiteral("region: ") + message);
  };
  const QJsonValue regionValue = arguments.value(QStringLiteral("region"));
  if (arguments.size() != 1 || !regionValue.isArray())
    return refuse(kOpZoom, Refusal::ObservationInvalid,
                  QStringLiteral("the only argument is region [x0, y0, x1, y1]"));
  const QJsonArray list = regionValue.toArray();
  if (list.size() != 4)
    return invalid(QStringLiteral("expected [x0, y0, x1, y1]"));
  int edge[4];
  for (int i = 0; i < 4; ++i) {
    const double d = list.at(i).toDouble(-1.0);
    if (!list.at(i).isDouble() || !std::isfinite(d) || std::floor(d) != d || d < 0 ||
        d > ActionSpec::kMaxCoordinate)
      return invalid(QStringLiteral("expected four integers in the capture's space"));
    edge[i] = int(d);
  }
  QImage frame = m_currentFrame ? m_currentFrame() : QImage();
  if (frame.isNull())
    return refuse(kOpZoom, Refusal::Internal, QStringLiteral("no guest frame has arrived yet"));
  const Outcome<QSize> space = m_grant.capture.spaceFor(frame.size());
  if (!space) {
    wipe(frame);
    return refuse(kOpZoom, space.code(), space.failure().message);
  }
  const CoordinateMapping mapping(*space, frame.size());
  QString why;
  if (edge[0] >= edge[2] || edge[1] >= edge[3])
    why = QStringLiteral("empty (x0 < x1 and y0 < y1, edges)");
  else if (edge[2] > space->width() || edge[3] > space->height())
    why = QStringLiteral("outside the %1x%2 capture").arg(space->width()).arg(space->height());
  const QRect rect = why.isEmpty() ? mapping.regionToDesktop(edge[0], edge[1], edge[2], edge[3]) : QRect();
  if (why.isEmpty() && !m_grant.capture.admitsZoom(rect.size(), frame.size()))
    why = QStringLiteral("%1x%2 desktop pixels exceed the grant's capture bound")
              .arg(rect.width())
              .arg(rect.height());
  if (!why.isEmpty()) {
    wipe(frame);
    return invalid(why);
  }
  Capture zoom;
  zoom.from = rect.size();
  zoom.region = rect;
  zoom.requested = QRect(QPoint(edge[0], edge[1]), QSize(edge[2] - edge[0], edge[3] - edge[1]));
  if (frame.depth() != 32)
    frame = frame.convertToFormat(QImage::Format_RGB32);
  QImage part = frame.copy(rect);
  wipe(frame);
  if (part.isNull() || !encode(part, zoom))
    return refuse(kOpZoom, Refusal::Internal, QStringLiteral("the region could not be encoded"));
  ++m_zooms;
  zoom.lockConfirmation = m_barrier->confirmation();
  record(QStringLiteral("zoom"), {{QStringLiteral("sha256"), QString::fromLatin1(zoom.sha256Hex)},
                                  {QStringLiteral("region"), QJsonArray{edge[0], edge[1], edge[2], edge[3]}},
                                  {QStringLiteral("desktop_region"),
                                   QJsonArray{rect.left(), rect.top(), rect.right() + 1, rect.bottom() + 1}},
                                  {QStringLiteral("width"), zoom.width},
                                  {QStringLiteral("height"), zoom.height},
                                  {QStringLiteral("count"), m_zooms}});
  m_pictureSettle = {};
  return zoom;
}

Outcome<ActionService::Resolved> ActionService::resolve(const QJsonObject& arguments,
                                                        const CoordinateMapping& mapping) const {
  Resolved resolved;
  resolved.mapping = mapping;
  if (m_grant.hasCandidates()) {
    if (arguments.size() != 1 || !arguments.contains(QStringLiteral("candidate_id")))
      return Failure{Refusal::ActionInvalid,
                     QStringLiteral("the grant lists candidates: the only argument is candidate_id")};
    const QJsonValue id = arguments.value(QStringLiteral("candidate_id"));
    if (!id.isString())
      return Failure{Refusal::ActionInvalid, QStringLiteral("candidate_id: expected a string")};
    const Candidate* found = m_grant.candidate(id.toString());
    if (!found)
      return Failure{Refusal::ActionInvalid, QStringLiteral("candidate_id: not a candidate of this grant")};
    resolved.candidate = found;
    resolved.spec = found->action;
    return resolved;
  }
  if (arguments.size() != 1)
    return Failure{Refusal::ActionInvalid, QStringLiteral("the only argument is action, or one dialect (%1)")
                                               .arg(dialects::names().join(u", "))};
  const QString key = arguments.constBegin().key();
  const QJsonValue value = arguments.constBegin().value();
  QJsonObject canonical;
  if (key == u"action") {
    if (!value.isObject())
      return Failure{Refusal::ActionInvalid, QStringLiteral("action: expected an object")};
    canonical = value.toObject();
  } else if (dialects::names().contains(key)) {
    // UI-TARS' coordinates are normalised: that dialect maps them onto the desktop itself, in
    // one exact step; every other dialect speaks the capture's pixels, as the canonical form.
    const bool normalised = key == u"ui_tars";
    std::optional<QPoint> pointer = m_pointer ? m_pointer() : std::nullopt;
    if (pointer && !normalised)
      pointer = mapping.toSpace(*pointer);
    const Outcome<QJsonObject> translated = dialects::translate(
        key, value, dialects::Context{normalised ? mapping.desktop() : mapping.space(), pointer});
    if (normalised)
      resolved.mapping = CoordinateMapping::normalised(mapping.desktop());
    if (!translated)
      return Failure{translated.code(), key + QStringLiteral(".") + translated.failure().message};
    canonical = *translated;
    resolved.dialect = key;
    resolved.original = value.isObject() ? value.toObject() : QJsonObject{{QStringLiteral("call"), value}};
  } else {
    return Failure{Refusal::ActionInvalid, QStringLiteral("the only argument is action, or one dialect (%1)")
                                               .arg(dialects::names().join(u", "))};
  }
  Outcome<ActionSpec> spec = ActionSpec::fromJson(canonical, m_grant.actionPolicy);
  if (!spec)
    return Failure{spec.code(),
                   (resolved.dialect.isEmpty() ? QStringLiteral("action.")
                                               : resolved.dialect + QStringLiteral(" → action.")) +
                       spec.failure().message};
  resolved.spec = std::move(spec).value();
  return resolved;
}

bool ActionService::pause(int ms, const std::function<void()>& onClose) {
  if (ms > 0 && !m_phases->isClosed()) {
    // The hold's or wait's own duration, not a synchronisation: the event loop keeps running
    // so a panic, the expiry or a lost guest ends it at once. `onClose` runs in the close
    // itself, before the queued teardown takes the session away.
    QEventLoop loop;
    QTimer timer;
    timer.setSingleShot(true);
    timer.setTimerType(Qt::PreciseTimer);
    connect(&timer, &QTimer::timeout, &loop, &QEventLoop::quit);
    const QMetaObject::Connection closing =
        connect(m_phases, &PhaseController::closed, &loop, [&loop, &onClose] {
          onClose();
          loop.quit();
        });
    timer.start(ms);
    loop.exec();
    disconnect(closing);
  }
  return !m_phases->isClosed();
}

void ActionService::releaseAll(Receipt::Release& release) {
  if (release.attempted || !m_releaseHeld)
    return;
  // Whatever the plan pressed and did not get to release: the session releases all it holds.
  release.attempted = true;
  const Outcome<Released> released = m_releaseHeld(QDeadlineTimer(m_sendTimeout));
  release.ok = released.ok();
  if (released) {
    release.keys = released->keys;
    release.buttons = released->buttons;
  } else {
    release.failure = released.failure();
  }
  QJsonObject fields{{QStringLiteral("ok"), release.ok},
                     {QStringLiteral("keys_released"), release.keys},
                     {QStringLiteral("buttons_released"), release.buttons}};
  if (!released)
    fields.insert(QStringLiteral("code"), refusalName(released.code()));
  record(QStringLiteral("action_released"), fields);
}

namespace {
// The dialect's arguments with every occurrence of the typed text replaced by its length: the
// evidence holds no text.
QJsonValue redactText(const QJsonValue& value, const QString& text, const QJsonObject& marker) {
  if (value.isString())
    return !text.isEmpty() && value.toString().contains(text) ? QJsonValue(marker) : value;
  if (value.isArray()) {
    QJsonArray out;
    for (const QJsonValue& v : value.toArray())
      out.append(redactText(v, text, marker));
    return out;
  }
  if (value.isObject()) {
    QJsonObject out;
    const QJsonObject in = value.toObject();
    for (auto it = in.constBegin(); it != in.constEnd(); ++it)
      out.insert(it.key(), redactText(it.value(), text, marker));
    return out;
  }
  return value;
}
} // namespace

Outcome<Receipt> ActionService::performAction(const QJsonObject& arguments) {
  // Checked first: after the one action nothing, not even a wrong phase, is worth more
  // than "already acted".
  if (m_acted)
    return refuse(kOpPerform, Refusal::AlreadyActed, QStringLiteral("the one action was already used"));
  if (Status s = admit(kOpPerform); !s.ok())
    return s.failure();
  if (m_phases->phase() != Phase::Reviewing)
    return refuse(kOpPerform, Refusal::PhaseWrong,
                  QStringLiteral("perform_action is allowed in REVIEWING only, not in %1")
                      .arg(phaseName(m_phases->phase())));
  // No frame at all: an empty space, so every point is outside it (keys need none).
  Outcome<CoordinateMapping> mapping = currentMapping();
  if (!mapping && mapping.code() == Refusal::Internal)
    mapping = CoordinateMapping();
  if (!mapping)
    return refuse(kOpPerform, mapping.code(), mapping.failure().message);
  const QSize desktop = mapping->desktop();
  const Outcome<Resolved> resolved = resolve(arguments, *mapping);
  if (!resolved)
    return refuse(kOpPerform, resolved.code(), resolved.failure().message);
  // The action's points from the capture's space (what the model saw) to desktop pixels.
  QJsonArray points;
  const Outcome<ActionSpec> mapped = resolved->mapping.toDesktop(resolved->spec, &points);
  if (!mapped)
    return refuse(kOpPerform, mapped.code(), mapped.failure().message);
  const ActionSpec& spec = *mapped;
  ActionPlan::Context context;
  context.caps = m_inputCaps ? m_inputCaps() : InputCaps{};
  context.textInput = m_grant.actionPolicy.textInput;
  context.keyboardLayout = m_grant.rdp.desktop.keyboardLayout;
  const Outcome<QList<InputEvent>> plan = ActionPlan::plan(spec, desktop, context);
  if (!plan)
    return refuse(kOpPerform, plan.code(), plan.failure().message);

  // From here on the action is used up, whatever happens next.
  m_acted = true;
  Receipt receipt;
  receipt.grantDigest = QString::fromLatin1(m_grant.digestHex);
  receipt.runId = m_grant.runId;
  receipt.taskId = m_grant.taskId;
  receipt.vmUuid = m_vm.uuid;
  receipt.vmName = m_vm.name;
  receipt.mcpServer = m_grant.mcp.server;
  receipt.mcpTool = m_grant.mcp.tool;
  receipt.hasCandidate = resolved->candidate != nullptr;
  if (resolved->candidate) {
    receipt.candidateId = resolved->candidate->id;
    receipt.candidateLabel = resolved->candidate->label;
  }
  receipt.action = spec.canonical();
  receipt.actionJson = spec.redactedJson(m_textKey);
  receipt.dialect = resolved->dialect;
  if (!resolved->dialect.isEmpty()) {
    const QJsonObject marker{
        {QStringLiteral("text_chars"), spec.textChars()},
        {QStringLiteral("text_hmac"), receipt.actionJson.value(QStringLiteral("text_hmac"))}};
    receipt.original = spec.kind == ActionSpec::Kind::TypeText
                           ? redactText(resolved->original, spec.text, marker).toObject()
                           : resolved->original;
  }
  receipt.eventId = QUuid::createUuid().toString(QUuid::WithoutBraces);
  receipt.desktop = desktop; // the frame the action was planned on
  receipt.coordinateSpace = resolved->mapping.coordinateSpaceJson();
  receipt.mappedTo = resolved->mapping.mappedToJson();
  receipt.mapping = resolved->mapping.mappingJson(points);
  receipt.lockConfirmation = m_barrier->confirmation();

  bool interrupted = false;
  if (Status s = m_phases->transition(Phase::Action, QStringLiteral("perform_action %1").arg(receipt.action));
      !s.ok()) {
    receipt.failure = s.failure();
  } else {
    // The lock, the capture and the action's own lines are on disk before the guest gets it.
    syncEvidence();
    // Exactly once: no retry of a failed event, no resend of the plan. events_sent counts
    // the input PDUs the sink actually wrote, also those of a partly sent event.
    for (const InputEvent& event : plan.value()) {
      if (event.kind == InputEvent::Kind::Pause) {
        if (!pause(int(event.pauseMs), [this, &receipt] { releaseAll(receipt.release); })) {
          interrupted = true;
          receipt.failure = Failure{m_phases->closeReason().code,
                                    QStringLiteral("the console closed during the action's pause: %1")
                                        .arg(m_phases->closeReason().message)};
          break;
        }
        continue;
      }
      const InputSink::Delivery sent = m_sink->deliver(event, QDeadlineTimer(m_sendTimeout));
      receipt.eventsSent += sent.written;
      if (!sent.status.ok()) {
        receipt.failure = sent.status.failure();
        interrupted = true;
        break;
      }
    }
  }
  if (interrupted)
    releaseAll(receipt.release);
  receipt.result = receipt.failure ? Receipt::Result::Failed : Receipt::Result::Executed;
  if (!receipt.failure && m_confirmGuest) {
    const GuestConfirmation confirmed = m_confirmGuest();
    receipt.confirmation =
        confirmed.confirmed ? Receipt::Confirmation::Confirmed : Receipt::Confirmation::Unconfirmed;
    receipt.confirmMs = confirmed.elapsedMs;
    if (confirmed.confirmed)
      receipt.confirmedAt = QDateTime::currentDateTimeUtc();
  }
  receipt.time = QDateTime::currentDateTimeUtc();

  record(QStringLiteral("receipt"), {{QStringLiteral("receipt"), receipt.body()}});
  syncEvidence(); // the head the receipt names is on disk
  receipt.evidenceHead = m_evidence ? m_evidence->headHash() : QByteArray();
  emit receiptIssued(receipt.toJson());

  if (receipt.failure)
    m_phases->close(receipt.failure->code, QStringLiteral("action failed: %1").arg(receipt.failure->message));
  else
    m_phases->close(Refusal::ActionDone, QStringLiteral("action performed"));
  return receipt;
}

Status ActionService::requestLock() {
  if (m_acted)
    return Status(refuse(kOpLock, Refusal::AlreadyActed, QStringLiteral("the one action was already used")));
  if (Status s = admit(kOpLock); !s.ok())
    return s;
  const Status locked = m_barrier->requestLock(QStringLiteral("mcp"));
  if (!locked.ok())
    emit refused(kOpLock, locked.code());
  return locked;
}

Failure ActionService::refuse(const QString& op, Refusal code, const QString& message) {
  // Counted by code only: arguments may be model-chosen text and stay out of the evidence.
  record(QStringLiteral("mcp_refused"),
         {{QStringLiteral("op"), op}, {QStringLiteral("code"), refusalName(code)}});
  emit refused(op, code);
  return Failure{code, message};
}

void ActionService::syncEvidence() {
  if (!m_evidence)
    return;
  if (Status s = m_evidence->sync(); !s.ok())
    qCWarning(lcAction) << "evidence sync failed:" << s.failure().toString();
}

void ActionService::record(const QString& event, const QJsonObject& fields) {
  if (!m_evidence)
    return;
  if (Status s = m_evidence->append(event, fields); !s.ok())
    qCWarning(lcAction) << "evidence append failed:" << s.failure().toString();
}

} // namespace gc
