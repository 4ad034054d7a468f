// A minimal MCP client over `guest-console mcp --run RUN` (newline-delimited JSON-RPC on
// stdio), for the lanes that play the model: capture the desktop, perform the one action.
import { spawn } from 'child_process';
import { LineSplitter } from '../../src/ConsoleProcess';
import { waitFor } from '../helpers';
import { BIN, sanitizerEnv } from './rig';

type Json = Record<string, unknown>;

export class McpClient {
  private readonly responses = new Map<number, Json>();
  private readonly stderr: string[] = [];
  private nextId = 1;
  private readonly child;
  private exited = false;

  /** The relay for `run`, seeing the console's runtime directory. */
  constructor(run: string, runtimeDir: string) {
    this.child = spawn(BIN.console, ['mcp', '--run', run, '--runtime-dir', runtimeDir], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env['PATH'], HOME: process.env['HOME'], ...sanitizerEnv() },
    });
    const out = new LineSplitter(1 << 24, (line) => {
      if (line.trim() === '') return;
      const m = JSON.parse(line) as Json;
      if (typeof m['id'] === 'number') this.responses.set(m['id'], m);
    }, () => undefined);
    this.child.stdout.on('data', (c: Buffer) => out.push(c));
    this.child.stderr.on('data', (c: Buffer) => this.stderr.push(c.toString()));
    this.child.once('exit', () => (this.exited = true));
  }

  private send(message: Json): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  }

  async request(method: string, params: Json, timeoutMs = 60000): Promise<Json> {
    const id = this.nextId++;
    this.send({ id, method, params });
    const reply = await waitFor(() => this.responses.get(id) ?? (this.exited ? this.fail(`exited before answering ${method}`) : undefined), timeoutMs, `MCP ${method}`);
    if (reply['error']) throw new Error(`MCP ${method}: ${JSON.stringify(reply['error'])}`);
    return reply['result'] as Json;
  }

  async initialize(): Promise<void> {
    await this.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'gc-extension-test', version: '1' } });
    this.send({ method: 'notifications/initialized' });
  }

  /** tools/call; resolves with structuredContent (throws on isError). */
  async call(tool: string, args: Json = {}, timeoutMs = 60000): Promise<Json> {
    const result = await this.request('tools/call', { name: tool, arguments: args }, timeoutMs);
    if (result['isError'] === true) throw new Error(`${tool}: ${JSON.stringify(result['structuredContent'])}`);
    return result['structuredContent'] as Json;
  }

  async close(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise((r) => this.child.once('exit', r));
    this.child.stdin.end();
    const kill = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(kill);
  }

  private fail(why: string): never {
    throw new Error(`guest-console mcp ${why}: ${this.stderr.join('').slice(-2000)}`);
  }
}
