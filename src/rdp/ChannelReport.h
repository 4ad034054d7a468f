// ChannelReport: what happened on the session's virtual channels, for the evidence — the
// static channels the client asked for in the MCS Connect Initial and the server joined, the
// graphics pipeline (opened, the capability version it confirmed, the codecs its frames used,
// frames decoded), and every dynamic channel the server asked to create: the one opened
// (RDPGFX) and the refused, counted by name.
//
// A hostile guest controls the names: each is sanitised (printable ASCII, others as '?', at
// most kMaxNameLength characters, a longer one cut and marked with '~') and at most
// kMaxDistinctNames distinct names are kept; creates for further names are counted together
// as the overflow. Nothing grows with what the guest sends.
//
// Thread affinity: written on the RDP worker, read on any thread; one mutex, a leaf.
// Qt types only: the console reads the snapshot.
#pragma once

#include <QByteArrayView>
#include <QJsonObject>
#include <QMap>
#include <QString>
#include <QStringList>

#include <mutex>

namespace gc {

class ChannelReport {
public:
  static constexpr int kMaxNameLength = 64;
  static constexpr int kMaxDistinctNames = 16;

  struct Snapshot {
    QStringList staticRequested;  // the Connect Initial's channel list
    QStringList staticJoined;     // those the server assigned (and the client joined)
    QStringList advertisedCodecs; // what the client offered the graphics pipeline
    bool gfxOpened = false;       // the RDPGFX channel opened and the GDI decodes it
    quint32 gfxCapsVersion = 0;   // RDPGFX_CAPVERSION_* the server confirmed; 0: none
    QStringList gfxCodecsUsed;    // codec of every surface command seen
    quint64 gfxFrames = 0;        // End Frame PDUs decoded
    QStringList dynamicOpened;    // dynamic channels opened (at most the pipeline)
    QMap<QString, int> refused;   // sanitised name -> create requests refused
    int refusedOverflow = 0;      // refused creates for names beyond kMaxDistinctNames
    int refusedTotal() const;

    QJsonObject connectedJson() const; // for the `connected` evidence entry
    QJsonObject closedJson() const;    // for the `closed` evidence entry
  };

  static QString sanitise(QByteArrayView raw);
  // An MS-RDPEGFX 2.2.3.1 codec identifier by the name the evidence and docs use.
  static QString codecName(int id);

  void setStaticChannels(QStringList requested, QStringList joined);
  void setAdvertisedCodecs(QStringList codecs);
  void noteDynamicOpened(const QString& name);
  void noteRefused(QByteArrayView rawName);
  void noteGfxOpened(bool opened);
  void noteGfxCapsVersion(quint32 version);
  void noteGfxCodec(quint16 codecId);
  void noteGfxFrame();

  Snapshot snapshot() const;

private:
  mutable std::mutex m_mutex;
  Snapshot m_data;
  quint32 m_codecBits = 0; // bit per RDPGFX_CODECID_* below 32
};

} // namespace gc
