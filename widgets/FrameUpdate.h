// The viewer's name for one GCF1 frame update: the frame library's one reader
// (bridge/frames/FrameReader.h), parsed strictly and applied as a whole.
#pragma once

#include "bridge/frames/FrameReader.h"

namespace gc::viewer {

using FrameUpdate = gc::FrameReader;

} // namespace gc::viewer
