'use strict';
// While panel, RDP and the MCP relay are connected, every inet socket of the console is loopback
// and its one listener is the panel port; the relay reaches the running console.
// (TEST-135 items 2 and 7.)
const { P, report, check, Mcp } = require('../lib/harness');

// What this item takes from the run (the runner's setup or an earlier item) and gives on.
const needs = ['S'];
const gives = ['mcp', 'init', 'mcpOk'];

async function run(ctx) {
  const { S } = ctx;
  const mcp = new Mcp(S.run);
  const init = await mcp.call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'gc-battery', version: '1' } }).catch((e) => ({ failed: String(e.message) }));
  const mcpOk = !init.failed;
  if (mcpOk) mcp.notify('notifications/initialized');
  const socks = P.inetSocketsOf(S.pid);
  report.sessions.main.sockets = socks.inet;
  check(2, 'every inet socket of the running console is bound to and talks to loopback', socks.inet.length >= 2 && socks.inet.every((s) => P.isLoopback(s.local) && (s.state === 'LISTEN' || P.isLoopback(s.remote))), socks);
  check(2, 'it listens only on 127.0.0.1 (the panel port), nothing else', socks.inet.filter((s) => s.state === 'LISTEN').every((s) => s.local === '127.0.0.1' && s.localPort === S.readyEvent.panel.port) && !socks.inet.some((s) => s.proto.startsWith('udp')), { listening: socks.inet.filter((s) => s.state === 'LISTEN') });
  check(7, 'MCP relay connects to the running console; initialize answers 2025-11-25', mcpOk && init.result && init.result.protocolVersion === '2025-11-25', { init: init.result || init.error || init.failed });
  return { mcp, init, mcpOk };
};

module.exports = { needs, gives, run };
