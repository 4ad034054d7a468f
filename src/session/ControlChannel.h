// The control channel of `guest-console open` (DESIGN.md §2): JSON lines on the private
// stdin/stdout pipes shared with the parent (the VS Code extension, the demo, black-box
// tests). Lives on the main thread.
//
// stdin is read straight into locked memory, one line at a time; a credentials line is
// decoded into SecureBuffers and the line is wiped — it is never echoed or logged. stdin
// EOF means the parent is gone.
#pragma once

#include "common/Refusal.h"
#include "privacy/Credentials.h"
#include "session/ControlEvents.h"

#include <QJsonObject>
#include <QObject>

class QSocketNotifier;

namespace gc {

class ControlChannel : public QObject {
  Q_OBJECT
public:
  static constexpr std::size_t kMaxLineBytes = 16 * 1024;

  // Reads `inFd`, writes `outFd` (0 and 1 in the console; pipes in tests). Does not own them.
  ControlChannel(int inFd, int outFd, QObject* parent = nullptr);
  ~ControlChannel() override;

  bool start(); // false when the line buffer cannot be locked (PRIVACY_VIOLATION)
  // Writes one event line: {"event":<name>, …fields}. "event" comes first. The events and
  // their fields are control-channel.json's: build them with session/ControlEvents.h.
  void send(const control::Event& event);
  void sendError(Refusal code, const QString& message) { send(control::error(code, message)); }

signals:
  void credentialsReceived(gc::Credentials& credentials);
  void lockRequested();
  // `reason`: OperatorClose, or why the parent closes (AuthCancelled, WindowReload).
  void closeRequested(gc::Refusal reason);
  void panicRequested();
  void parentGone();
  void refused(gc::Refusal code, const QString& message);

private:
  void onReadable();
  void processLine(QByteArrayView line);

  int m_inFd;
  int m_outFd;
  QSocketNotifier* m_notifier = nullptr;
  SecureBuffer m_buffer;
  bool m_discarding = false; // inside an oversize line: drop until its newline
  bool m_eof = false;
};

} // namespace gc
