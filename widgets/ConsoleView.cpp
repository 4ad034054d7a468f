#include "widgets/ConsoleView.h"

#include "widgets/ConsoleClient.h"
#include "widgets/InputCapture.h"

#include <QPainter>

#include <algorithm>
#include <cmath>

namespace gc {
namespace {

// First non-empty string among `keys`, as a short lowercase prefix without colons (like the
// webview: enough to compare by eye, nothing more).
QString shortDigest(const QJsonObject& identity, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    const QString v = identity.value(QLatin1String(key)).toString();
    if (!v.isEmpty())
      return v.toLower().remove(QLatin1Char(':')).left(12);
  }
  return QStringLiteral("—");
}

QColor phaseColour(const QString& phase) {
  if (phase == QLatin1String("SETUP"))
    return QColor(0x2e, 0x7d, 0x32);
  if (phase == QLatin1String("CLOSED") || phase.isEmpty())
    return QColor(0x55, 0x55, 0x55);
  if (phase == QLatin1String("LOCKING"))
    return QColor(0xef, 0x6c, 0x00);
  return QColor(0xc6, 0x28, 0x28); // read-only phases
}

} // namespace

ConsoleView::ConsoleView(ConsoleClient* client, QWidget* parent) : QWidget(parent), m_client(client) {
  setAttribute(Qt::WA_OpaquePaintEvent);
  setFocusPolicy(Qt::NoFocus);
  setMouseTracking(true);
  connect(client, &ConsoleClient::phaseChanged, this, &ConsoleView::onPhase);
  connect(client, &ConsoleClient::frameReady, this, &ConsoleView::onFrame);
  connect(client, &ConsoleClient::countersChanged, this, qOverload<>(&QWidget::update));
  connect(client, &ConsoleClient::welcomed, this, [this](const panel::Welcome& w) {
    m_identity = QStringLiteral("%1  ·  grant %2  ·  cert %3")
                     .arg(w.vm.isEmpty() ? QStringLiteral("—") : w.vm,
                          shortDigest(w.identity, {"grant_digest", "grant_sha256", "grant"}),
                          shortDigest(w.identity, {"cert_sha256", "cert_fingerprint", "cert"}));
    if (w.identity.value(QStringLiteral("cert_pin")) == QJsonValue(false))
      m_banner = tr("Warning: this grant does not pin the guest certificate.");
    if (w.width > 0 && w.height > 0)
      m_desktop = QSize(w.width, w.height);
    updateGeometry();
    update();
  });
  connect(client, &ConsoleClient::drained, this, [this](quint64 upto) {
    m_banner = tr("All setup input delivered (up to #%1).").arg(upto);
    update();
  });
  connect(client, &ConsoleClient::consoleError, this, [this](const QString& code, const QString& message) {
    m_banner = code + QStringLiteral(": ") + message;
    update();
  });
}

ConsoleView::~ConsoleView() {
  detachInput();
}

void ConsoleView::setFitToWindow(bool fit) {
  m_fit = fit;
  update();
}

QSize ConsoleView::sizeHint() const {
  const QSize desktop = m_desktop.isValid() ? m_desktop : QSize(1024, 768);
  return QSize(desktop.width(), desktop.height() + kBandHeight);
}

QRect ConsoleView::frameRect() const {
  const QRect area(0, kBandHeight, width(), qMax(0, height() - kBandHeight));
  if (!m_desktop.isValid() || m_desktop.isEmpty())
    return QRect(area.topLeft(), QSize(0, 0));
  if (!m_fit)
    return QRect(area.topLeft(), m_desktop);
  const QSize scaled = m_desktop.scaled(area.size(), Qt::KeepAspectRatio);
  return QRect(area.x() + (area.width() - scaled.width()) / 2,
               area.y() + (area.height() - scaled.height()) / 2, qMax(1, scaled.width()),
               qMax(1, scaled.height()));
}

QPoint ConsoleView::mapToDesktop(QPointF position) const {
  const QRect frame = frameRect();
  if (frame.isEmpty())
    return QPoint(0, 0);
  const double sx = double(m_desktop.width()) / frame.width();
  const double sy = double(m_desktop.height()) / frame.height();
  const int x = int(std::floor((position.x() - frame.x()) * sx));
  const int y = int(std::floor((position.y() - frame.y()) * sy));
  return QPoint(std::clamp(x, 0, m_desktop.width() - 1), std::clamp(y, 0, m_desktop.height() - 1));
}

bool ConsoleView::isReadOnlyOverlayShown() const {
  return !m_phase.isEmpty() && m_phase != QLatin1String("SETUP");
}

QString ConsoleView::phaseLabel() const {
  if (m_phase.isEmpty())
    return QStringLiteral("CONNECTING");
  return QString(m_phase).replace(QLatin1Char('_'), QLatin1Char('-'));
}

void ConsoleView::requestLock() {
  if (!m_input)
    return;
  m_input->releaseAll();
  detachInput();
  m_client->requestLock();
}

void ConsoleView::attachInput() {
  if (m_input)
    return;
  m_input = new InputCapture(this, m_client, [this](QPointF p) { return mapToDesktop(p); });
  setFocusPolicy(Qt::StrongFocus);
  setFocus(Qt::OtherFocusReason);
}

void ConsoleView::detachInput() {
  delete m_input; // removes the event filter: no input path remains
  m_input = nullptr;
  setFocusPolicy(Qt::NoFocus);
}

void ConsoleView::onPhase(const QString& phase, const QString& reason) {
  m_phase = phase;
  if (phase == QLatin1String("SETUP")) {
    attachInput();
    if (!reason.isEmpty())
      m_banner = reason;
  } else {
    // Nothing returns to SETUP: the console would refuse any input now, so none is sent,
    // not even key releases.
    detachInput();
    if (phase == QLatin1String("CLOSED")) {
      m_frame = QImage(); // nothing of the guest stays on screen after the close
      m_banner = tr("Closed: %1").arg(reason.isEmpty() ? m_client->closeReason() : reason);
    } else {
      m_banner = reason.isEmpty() ? tr("Read-only: input to the guest is off.")
                                  : tr("Read-only: input to the guest is off (%1).").arg(reason);
    }
  }
  update();
}

void ConsoleView::onFrame(const QImage& frame) {
  if (m_phase == QLatin1String("CLOSED"))
    return;
  m_frame = frame;
  if (frame.size() != m_desktop) {
    m_desktop = frame.size();
    updateGeometry();
  }
  update();
}

bool ConsoleView::focusNextPrevChild(bool next) {
  if (m_input)
    return false; // Tab belongs to the guest while input is captured
  return QWidget::focusNextPrevChild(next);
}

void ConsoleView::paintBand(QPainter& painter) {
  const QRect band(0, 0, width(), kBandHeight);
  painter.fillRect(band, QColor(0x20, 0x20, 0x24));
  QFont bold = font();
  bold.setBold(true);
  bold.setPointSizeF(bold.pointSizeF() * 1.3);
  painter.setFont(bold);
  const QString label = phaseLabel();
  const int pillWidth = painter.fontMetrics().horizontalAdvance(label) + 24;
  const QRect pill(6, 6, pillWidth, kBandHeight - 12);
  painter.setPen(Qt::NoPen);
  painter.setBrush(phaseColour(m_phase));
  painter.drawRoundedRect(pill, 6, 6);
  painter.setPen(Qt::white);
  painter.drawText(pill, Qt::AlignCenter, label);

  painter.setFont(font());
  const QString counters = tr("sent %1   acked %2   refused %3   frames %4")
                               .arg(m_client->lastSeq())
                               .arg(m_client->acked())
                               .arg(m_client->refusedCount())
                               .arg(m_client->framesPresented());
  const QRect text = band.adjusted(pill.right() + 12, 0, -8, 0);
  painter.setPen(QColor(0xe0, 0xe0, 0xe0));
  painter.drawText(text, Qt::AlignVCenter | Qt::AlignLeft, m_identity);
  painter.drawText(text, Qt::AlignVCenter | Qt::AlignRight, counters);
}

void ConsoleView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), QColor(0x10, 0x10, 0x10));
  paintBand(painter);
  const QRect frame = frameRect();
  if (!m_frame.isNull() && !frame.isEmpty()) {
    painter.setRenderHint(QPainter::SmoothPixmapTransform, m_fit);
    if (frame.size() == m_frame.size())
      painter.drawImage(frame.topLeft(), m_frame);
    else
      painter.drawImage(frame, m_frame);
  }
  if (m_banner.isEmpty() && !isReadOnlyOverlayShown())
    return;
  const bool closed = m_phase == QLatin1String("CLOSED");
  const QRect area = frame.isEmpty() ? rect().adjusted(0, kBandHeight, 0, 0) : frame;
  if (isReadOnlyOverlayShown() && !closed) {
    // A frame around the desktop that cannot be missed; the picture itself stays readable.
    painter.setPen(QPen(phaseColour(m_phase), 6));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(area.adjusted(3, 3, -3, -3));
  }
  if (!m_banner.isEmpty()) {
    QFont bold = font();
    bold.setBold(true);
    painter.setFont(bold);
    const int h = painter.fontMetrics().height() + 16;
    const QRect strip = closed ? QRect(area.x(), area.center().y() - h / 2, area.width(), h)
                               : QRect(area.x(), area.bottom() - h - 6, area.width(), h);
    painter.fillRect(strip, QColor(0, 0, 0, 190));
    painter.setPen(Qt::white);
    painter.drawText(strip.adjusted(12, 0, -12, 0), Qt::AlignCenter | Qt::TextSingleLine, m_banner);
  }
}

} // namespace gc
