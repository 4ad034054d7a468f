// The run's evidence (DESIGN.md §10): append-only JSON lines, hash-chained. Lives on the
// main thread. Records what happened — phases, counts, hashes, the receipt — never
// payloads: no input codes or coordinates, no frames, no credentials, no capability.
//
// Line format (one JSON object, keys in this order):
//   {"seq":N,"time":"…Z","event":"…",<fields…>,"prev":"<hash of line N-1>","hash":"<hash>"}
// hash = SHA-256( prev-hash-hex || the line's bytes up to, excluding, `,"hash"` ).
// The first line's prev is 64 zeros. The chain is unkeyed: it proves order and integrity
// only relative to a head obtained out of band (the receipt's and the closed event's
// evidence_head); anyone who can write the file can re-chain an edited log, and a cut log
// verifies on its own. `guest-console evidence verify --head` checks against that anchor.
#pragma once

#include "common/Outcome.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>

namespace gc {

class EvidenceLog : public QObject {
  Q_OBJECT
public:
  explicit EvidenceLog(QObject* parent = nullptr);
  ~EvidenceLog() override;

  // Creates <dir>/<name>.jsonl (dir 0700, file 0600, O_EXCL|O_NOFOLLOW): evidence is never
  // appended to a file we did not create.
  Status open(const QString& dir, const QString& name);
  bool isOpen() const { return m_fd >= 0; }
  QString path() const { return m_path; }

  // Appends one event; fields must not use the reserved keys seq/time/event/prev/hash.
  // Each line is written with one write(2) and fsync'd.
  Status append(const QString& event, const QJsonObject& fields = {});
  QByteArray headHash() const { return m_prev; }
  quint64 count() const { return m_seq; }
  void close();

  struct Verification {
    bool ok = false;
    quint64 lines = 0;
    QByteArray head;
    QList<QByteArray> hashes; // each intact line's hash, in order (head is the last)
    QString error;            // "line 3: prev does not match line 2"
  };
  static Verification verifyFile(const QString& path);
  static Verification verify(const QByteArray& contents);

private:
  int m_fd = -1;
  QString m_path;
  QByteArray m_prev;
  quint64 m_seq = 0;
};

} // namespace gc
