// Per rectangle: lossless PNG for text, UI and small areas; lossy JPEG only for large areas
// that keep changing (video, animation, scrolling), where PNG is slow and large and the eye
// does not resolve the loss. JPEG quality steps down 80 -> 60 -> 40 while the panel lags.
// Lossy areas are refined losslessly once quiet (see FrameEncoder / FramePipeline).
// Lives on the encoder thread.
#pragma once

#include <QtGlobal>

namespace gc {

class TileMap;
struct MergedRect;

// The GCF1 record encodings (FramePacket.h). Copy is never chosen here: it is a move of
// pixels the panel already has (FrameEncoder's move search).
enum class Encoding : quint8 { Png = 1, Jpeg = 2, Copy = 3 };

struct EncoderDecision {
  Encoding encoding = Encoding::Png;
  int quality = 0; // JPEG only
};

class EncoderChoice {
public:
  struct Policy {
    qint64 minLossyArea = 256 * 128; // pixels; below this PNG is cheap enough
    int window = 8;                  // frames of history considered
    int hotChanges = 3;              // a tile is "hot" when it changed in this many of them
    int qualities[3] = {80, 60, 40}; // normal, lagging, lagging for two frames or more
  };

  EncoderChoice() = default;
  explicit EncoderChoice(const Policy& policy) : m_policy(policy) {}

  // Once per encoded frame: steps the quality ladder down while the panel lags.
  void beginFrame(bool panelLagging);
  int quality() const { return m_policy.qualities[m_step]; }

  EncoderDecision choose(const MergedRect& rect, const TileMap& tiles) const;
  const Policy& policy() const { return m_policy; }

private:
  Policy m_policy;
  int m_step = 0;
};

} // namespace gc
