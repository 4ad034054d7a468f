// The real thing, end to end: gc-test-guest plays the VM's RDP server behind a libvirt
// test-driver node (gc-demo-vm), gc-issue-grant issues a fresh grant pinned to the guest's
// certificate, and `guest-console open` connects to it. The MCP host (the official SDK's
// client) then spawns `guest-console mcp --run RUN --runtime-dir R`.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { WebSocket } from 'ws';

// Under ASan on two shared cores an RDP connect can take several seconds.
export const TIMEOUT_MS = 60000;

function buildDir(): string {
  const value = process.env.GC_BUILD_DIR;
  if (!value) throw new Error('GC_BUILD_DIR is not set (run through tests/mcp/run-tests)');
  return value;
}

export const BIN = {
  console: join(buildDir(), 'bin', 'guest-console'),
  guest: join(buildDir(), 'tests', 'fixtures', 'gc-test-guest'),
  issueGrant: join(buildDir(), 'bin', 'gc-issue-grant'),
  demoVm: join(buildDir(), 'bin', 'gc-demo-vm'),
};

// Never appears in argv, env or any file; the evidence is searched for it.
export const SENTINEL_PASSWORD = `sentinel-${randomUUID()}`;
const USERNAME = 'gc-tester';

export type Line = { [key: string]: unknown };

// JSON lines (or messages) one peer emitted, keyed by their discriminator, with a way to
// wait for one.
export class EventLog {
  readonly lines: Line[] = [];
  private waiters: Array<() => void> = [];
  private ended = false;

  constructor(
    private readonly who: string,
    private readonly key: string = 'event',
  ) {}

  push(line: Line): void {
    this.lines.push(line);
    this.wake();
  }
  end(): void {
    this.ended = true;
    this.wake();
  }
  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
  of(kind: string): Line[] {
    return this.lines.filter((l) => l[this.key] === kind);
  }
  async waitFor(kind: string, match: (l: Line) => boolean = () => true, what = kind): Promise<Line> {
    const deadline = Date.now() + TIMEOUT_MS;
    for (;;) {
      const found = this.of(kind).find(match);
      if (found) return found;
      if (this.ended) throw new Error(`${this.who} ended without ${what}; it said: ${this.tail()}`);
      if (Date.now() > deadline) throw new Error(`${this.who} never said ${what}; it said: ${this.tail()}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 250).unref();
      });
    }
  }
  tail(): string {
    return this.lines
      .slice(-8)
      .map((l) => JSON.stringify(l))
      .join('\n');
  }
}

// The environment every spawned binary gets: nothing of ours beyond the basics and the
// sanitizer settings (no XDG_*: paths are given explicitly).
export function minimalEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', 'ASAN_OPTIONS', 'LSAN_OPTIONS', 'UBSAN_OPTIONS']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

const SANITIZER_REPORT = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: \w+Sanitizer/;

export function assertNoSanitizerReport(who: string, stderr: string): void {
  const m = SANITIZER_REPORT.exec(stderr);
  assert.equal(m, null, `${who}: sanitizer report on stderr:\n${stderr.slice(Math.max(0, (m?.index ?? 0) - 200))}`);
}

// A child speaking JSON lines on stdout; stderr is kept for the sanitizer check.
class LineProcess {
  readonly log: EventLog;
  readonly exited: Promise<number | null>;
  stderr = '';
  private exitCode: number | null | undefined;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    this.log = new EventLog(name);
    child.stdin!.on('error', () => {}); // the child may be gone before we write
    child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let parsed: Line;
      try {
        parsed = JSON.parse(line) as Line;
      } catch {
        parsed = { event: '<not json>', text: line };
      }
      this.log.push(parsed);
    });
    this.exited = new Promise((resolve) =>
      child.on('close', (code) => {
        this.exitCode = code;
        this.log.end();
        resolve(code);
      }),
    );
  }
  get running(): boolean {
    return this.exitCode === undefined;
  }
  send(line: object): void {
    if (this.running && this.child.stdin!.writable) this.child.stdin!.write(JSON.stringify(line) + '\n');
  }
  async finish(): Promise<number | null> {
    this.child.stdin!.end();
    const code = await this.exited;
    assertNoSanitizerReport(this.name, this.stderr);
    return code;
  }
}

export function run(
  command: string,
  args: string[],
  input = '',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: minimalEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface Candidate {
  id: string;
  label: string;
  action: { type: string; x: number; y: number };
}

export interface ConsoleOptions {
  candidates?: Candidate[];
  tool?: string;
  width?: number;
  height?: number;
  captureSize?: [number, number]; // the grant's capture.size (issue 25.4)
}

export interface ConsoleHandle {
  root: string;
  runtimeDir: string;
  stateDir: string;
  grantPath: string;
  grantDigest: string; // SHA-256 of the grant file
  runId: string;
  taskId: string;
  vmName: string;
  vmUuid: string;
  mcpServer: string;
  marker: number;
  width: number;
  height: number;
  ready: Line; // the console's ready line
  console: LineProcess;
  guest: LineProcess;
  // `input` events the guest reported (every one, in order).
  guestInputs(): Line[];
  lock(): void;
  // Closes whatever still runs; resolves with the exit codes once every line is read.
  stop(): Promise<{ console: number | null; guest: number | null }>;
  evidenceFiles(): string[];
}

let launches = 0;

export async function launchConsole(options: ConsoleOptions = {}): Promise<ConsoleHandle> {
  const n = ++launches;
  const root = mkdtempSync(join(tmpdir(), 'gc-mcp-')); // 0700
  const runtimeDir = join(root, 'runtime');
  const stateDir = join(root, 'state');
  mkdirSync(runtimeDir, { mode: 0o700 });
  mkdirSync(stateDir, { mode: 0o700 });
  const width = options.width ?? 800;
  const height = options.height ?? 600;
  // A distinctive marker per launch: a capture proves it came from this guest.
  const marker = (0x4d435000 + n * 0x111) >>> 0;

  const guest = new LineProcess(
    'gc-test-guest',
    spawn(
      BIN.guest,
      ['--port', '0', '--width', String(width), '--height', String(height), '--marker', `0x${marker.toString(16)}`],
      { env: minimalEnv(), stdio: ['pipe', 'pipe', 'pipe'] },
    ),
  );
  guest.send({ username: USERNAME, password: SENTINEL_PASSWORD, domain: '' });
  const guestReady = await guest.log.waitFor('ready');
  const port = guestReady.port as number;

  const vmName = `gc-mcp-vm-${n}`;
  const vmUuid = randomUUID();
  const nodeXml = join(root, 'node.xml');
  const demo = await run(BIN.demoVm, ['--out', nodeXml, '--port', String(port), '--uuid', vmUuid, '--name', vmName]);
  assert.equal(demo.code, 0, `gc-demo-vm: ${demo.stderr}`);
  const libvirtUri = /test:\/\/\/\S+/.exec(demo.stdout)?.[0];
  assert.ok(libvirtUri, `gc-demo-vm printed no URI: ${demo.stdout}`);

  const runId = `run-mcp-${process.pid}-${n}`;
  const taskId = `task-mcp-${n}`;
  const mcpServer = 'guest-console-sdk-test';
  const grantPath = join(root, 'grant.json');
  const grantArgs = [
    '--out', grantPath,
    '--vm-uuid', vmUuid,
    '--vm-name', vmName,
    '--port', String(port),
    '--cert-from-guest-ready-line', '-',
    '--desktop', `${width}x${height}`, // the guest's fixed size (--width/--height)
    '--libvirt-uri', libvirtUri,
    '--run', runId,
    '--task', taskId,
    '--panel', `username=${USERNAME}`,
    '--mcp-server', mcpServer,
    '--mcp-tool', options.tool ?? 'perform_action',
  ];
  if (options.captureSize) grantArgs.push('--capture-size', `${options.captureSize[0]}x${options.captureSize[1]}`);
  for (const c of options.candidates ?? [])
    grantArgs.push('--candidate', `${c.id}:${c.label}:${JSON.stringify(c.action)}`);
  // A key made for this console signs the grant; the console trusts only its public half.
  const keyDir = join(root, 'issuer');
  mkdirSync(keyDir, { mode: 0o700 });
  const issuerKey = join(keyDir, 'issuer.pub');
  const keygen = await run(BIN.issueGrant, ['keygen', '--out-private', join(keyDir, 'issuer.key'), '--out-public', issuerKey]);
  assert.equal(keygen.code, 0, `gc-issue-grant keygen: ${keygen.stderr}`);
  grantArgs.push('--sign-key', join(keyDir, 'issuer.key'));
  const issued = await run(BIN.issueGrant, grantArgs, JSON.stringify(guestReady) + '\n');
  assert.equal(issued.code, 0, `gc-issue-grant: ${issued.stderr}`);
  const grantDigest = createHash('sha256').update(readFileSync(grantPath)).digest('hex');

  const console_ = new LineProcess(
    'guest-console open',
    spawn(BIN.console, ['open', '--grant', grantPath, '--state-dir', stateDir, '--runtime-dir', runtimeDir,
      '--issuer-key', issuerKey, '--test-ledger-dir', join(root, 'ledger')], {
      env: minimalEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  const ready = await console_.log.waitFor('ready');
  const asked = await console_.log.waitFor('credentials_required');
  assert.equal(asked.username, USERNAME);
  console_.send({ cmd: 'credentials', username: USERNAME, password: SENTINEL_PASSWORD, domain: '' });
  const connected = (l: Line) => l.phase === 'SETUP' && l.reason === 'guest connected';
  await console_.log.waitFor('phase', connected, 'SETUP "guest connected"');

  const handle: ConsoleHandle = {
    root,
    runtimeDir,
    stateDir,
    grantPath,
    grantDigest,
    runId,
    taskId,
    vmName,
    vmUuid,
    mcpServer,
    marker,
    width,
    height,
    ready,
    console: console_,
    guest,
    guestInputs: () => guest.log.of('input'),
    lock: () => console_.send({ cmd: 'lock' }),
    stop: async () => {
      console_.send({ cmd: 'close' });
      const consoleCode = await console_.finish();
      guest.send({ cmd: 'quit' });
      const guestCode = await guest.finish();
      return { console: consoleCode, guest: guestCode };
    },
    evidenceFiles: () => {
      const dir = join(stateDir, 'evidence');
      return readdirSync(dir)
        .filter((f) => f.endsWith('.jsonl'))
        .map((f) => join(dir, f));
    },
  };
  return handle;
}

export function removeRoot(handle: ConsoleHandle): void {
  rmSync(handle.root, { recursive: true, force: true });
}

// A panel on the console's WebSocket, authorized with the capability from the ready line.
export class Panel {
  readonly log = new EventLog('panel', 'type');
  binaryFrames = 0;
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        ++this.binaryFrames;
        return;
      }
      this.log.push(JSON.parse(data.toString()) as Line);
    });
    ws.on('close', () => this.log.end());
    ws.on('error', () => this.log.end());
  }

  static async connect(handle: ConsoleHandle): Promise<Panel> {
    const panelInfo = handle.ready.panel as { port: number; capability: string };
    const ws = new WebSocket(`ws://127.0.0.1:${panelInfo.port}`); // no Origin, like the Qt viewer
    const panel = new Panel(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    panel.send({
      type: 'hello',
      run: handle.runId,
      task: handle.taskId,
      capability: panelInfo.capability,
      client: { kind: 'gc-mcp-sdk-test', version: '1' },
    });
    await panel.log.waitFor('welcome');
    return panel;
  }

  send(message: object): void {
    this.ws.send(JSON.stringify(message));
  }
  close(): void {
    this.ws.close();
  }
}
