// The viewer's names for the console → panel messages: the panel protocol's one reader
// (bridge/panel/PanelMessage.h), the same validators the console parses panels with.
#pragma once

#include "bridge/panel/PanelMessage.h"

namespace gc::viewer {

using panel::Bye;
using panel::ConsoleError;
using panel::ConsoleMessage;
using panel::Drained;
using panel::InputAck;
using panel::InputRefused;
using panel::parseConsoleMessage;
using panel::PhaseChange;
using panel::phaseNames;
using panel::Welcome;

} // namespace gc::viewer
