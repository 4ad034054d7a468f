// Real processes for the extension's integration tests: the test guest (gc-test-guest),
// a demo grant for it (gc-demo-vm + gc-issue-grant) and a real `guest-console open`.
// Binaries come from the C++ build: $GC_BUILD_DIR (default ../build/asan from the
// repository root), bin/ and tests/fixtures/.

import { ChildProcess, execFile, spawn } from 'child_process';
import { randomBytes, randomUUID } from 'crypto';
import { promises as fs } from 'fs';
import * as path from 'path';
import { promisify } from 'util';
import { LineSplitter } from '../../src/ConsoleProcess';
import { PACKAGE_ROOT, waitFor } from '../helpers';

const run = promisify(execFile);

export const BUILD_DIR = path.resolve(process.env['GC_BUILD_DIR'] ?? path.join(PACKAGE_ROOT, '..', 'build', 'asan'));
export const BIN = {
  console: path.join(BUILD_DIR, 'bin', 'guest-console'),
  issueGrant: path.join(BUILD_DIR, 'bin', 'gc-issue-grant'),
  demoVm: path.join(BUILD_DIR, 'bin', 'gc-demo-vm'),
  guest: path.join(BUILD_DIR, 'tests', 'fixtures', 'gc-test-guest'),
};

/** Fails with one clear line when the C++ build is missing (this is not a skip reason). */
export async function requireBuild(): Promise<void> {
  for (const [name, file] of Object.entries(BIN)) {
    try {
      await fs.access(file, fs.constants.X_OK);
    } catch {
      throw new Error(`${name} not built at ${file}; build the C++ targets first (GC_BUILD_DIR=${BUILD_DIR})`);
    }
  }
}

/** Sanitizer settings the repo's scripts/test uses, so an ASan build reports, not hangs. */
export function sanitizerEnv(): NodeJS.ProcessEnv {
  const supp = path.join(PACKAGE_ROOT, '..', 'tests', 'sanitizer', 'lsan.supp');
  return {
    ASAN_OPTIONS: process.env['ASAN_OPTIONS'] ?? 'detect_leaks=1:abort_on_error=1',
    UBSAN_OPTIONS: process.env['UBSAN_OPTIONS'] ?? 'print_stacktrace=1:halt_on_error=1',
    LSAN_OPTIONS: process.env['LSAN_OPTIONS'] ?? `suppressions=${supp}:print_suppressions=0`,
  };
}

type Json = Record<string, unknown>;

/** A child speaking JSON lines on stdout; keeps every event and the stderr tail. */
class JsonLineChild {
  readonly events: Json[] = [];
  readonly stderr: string[] = [];
  exitCode: number | null | undefined;
  exitSignal: NodeJS.Signals | null = null;
  protected readonly exited: Promise<void>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    const out = new LineSplitter(1 << 20, (line) => {
      if (line.trim() === '') return;
      try {
        this.events.push(JSON.parse(line) as Json);
      } catch {
        this.stderr.push(`[stdout] ${line}`);
      }
    }, () => undefined);
    child.stdout?.on('data', (c: Buffer) => out.push(c));
    const err = new LineSplitter(1 << 16, (line) => {
      this.stderr.push(line);
      if (this.stderr.length > 400) this.stderr.shift();
    }, () => undefined);
    child.stderr?.on('data', (c: Buffer) => err.push(c));
    child.stdin?.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitCode = code;
        this.exitSignal = signal;
        resolve();
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  of(event: string): Json[] {
    return this.events.filter((e) => e['event'] === event);
  }

  async next(event: string, timeoutMs: number, where: (e: Json) => boolean = () => true): Promise<Json> {
    return waitFor(() => this.of(event).find(where) ?? (!this.running ? this.fail(`exited before ${event}`) : undefined), timeoutMs, `${this.name} ${event}`);
  }

  write(line: Json): void {
    const bytes = Buffer.from(`${JSON.stringify(line)}\n`);
    this.child.stdin?.write(bytes, () => bytes.fill(0));
  }

  async waitExit(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.exited, new Promise<void>((_, reject) => (timer = setTimeout(() => reject(new Error(`${this.name} did not exit within ${timeoutMs} ms`)), timeoutMs)))]);
    clearTimeout(timer);
  }

  /** Ends this exact child (never anything by name). */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.child.stdin?.end();
    const term = setTimeout(() => this.child.kill('SIGTERM'), 2000);
    const kill = setTimeout(() => this.child.kill('SIGKILL'), 6000);
    await this.exited;
    clearTimeout(term);
    clearTimeout(kill);
  }

  diagnostics(): string {
    return `${this.name} (pid ${this.pid}, exit ${String(this.exitCode)}/${String(this.exitSignal)})\n  events: ${this.events.map((e) => JSON.stringify(e)).slice(-15).join('\n          ')}\n  stderr: ${this.stderr.slice(-25).join('\n          ')}`;
  }

  private fail(why: string): never {
    throw new Error(`${this.name} ${why}\n${this.diagnostics()}`);
  }
}

export interface GuestOptions {
  marker: number;
  width?: number;
  height?: number;
  username?: string;
  password?: string;
}

/** gc-test-guest on an ephemeral loopback port, logging every input event it decodes. */
export class TestGuest extends JsonLineChild {
  readyLine = '';
  port = 0;
  certSha256 = '';
  /** The guest's fixed desktop (--width/--height), from its ready line: what its grants name. */
  width = 0;
  height = 0;

  static async start(o: GuestOptions): Promise<TestGuest> {
    const args = ['--port', '0', '--marker', `0x${o.marker.toString(16).padStart(8, '0')}`, '--width', String(o.width ?? 640), '--height', String(o.height ?? 400)];
    const child = spawn(BIN.guest, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...sanitizerEnv() } });
    const guest = new TestGuest('gc-test-guest', child);
    guest.write({ username: o.username ?? 'op', password: o.password ?? '', domain: '' });
    const ready = await guest.next('ready', 15000);
    guest.readyLine = JSON.stringify(ready);
    guest.port = Number(ready['port']);
    guest.certSha256 = String(ready['cert_sha256']);
    guest.width = Number(ready['width']);
    guest.height = Number(ready['height']);
    return guest;
  }

  inputs(): Json[] {
    return this.of('input');
  }

  keys(): Array<{ code: number; up: boolean }> {
    return this.inputs()
      .filter((e) => e['kind'] === 'key')
      .map((e) => ({ code: Number(e['code']), up: (Number(e['flags']) & 0x8000) !== 0 }));
  }

  /** Button-1 presses as the guest decoded them (PTR_FLAGS_DOWN | PTR_FLAGS_BUTTON1). */
  leftPresses(): Array<{ x: number; y: number }> {
    return this.inputs()
      .filter((e) => e['kind'] === 'pointer' && (Number(e['flags']) & 0x9000) === 0x9000)
      .map((e) => ({ x: Number(e['x']), y: Number(e['y']) }));
  }
}

export interface DemoGrant {
  path: string;
  run: string;
  task: string;
  vmName: string;
  vmUuid: string;
  digest: string;
  title: string;
  /** The public key that verifies this grant's signature. */
  issuerKey: string;
}

export interface IssuerKeys {
  /** The private key (PEM) gc-issue-grant signs with; in a 0700 directory. */
  privateKey: string;
  /** The public key (PEM) the console verifies with: --issuer-key / guestConsole.issuerKeyPath. */
  publicKey: string;
}

/** The run's issuer key pair under `${dir}/issuer` (0700), made once by `gc-issue-grant keygen`. */
export async function issuerKeys(dir: string): Promise<IssuerKeys> {
  const keyDir = path.join(dir, 'issuer');
  const keys = { privateKey: path.join(keyDir, 'issuer.key'), publicKey: path.join(keyDir, 'issuer.pub') };
  if (!(await exists(keys.publicKey))) {
    await fs.mkdir(keyDir, { mode: 0o700 });
    await run(BIN.issueGrant, ['keygen', '--out-private', keys.privateKey, '--out-public', keys.publicKey]);
  }
  return keys;
}

/** A fresh grant for the guest behind a libvirt test-driver demo VM, signed with the run's key. */
export async function issueDemoGrant(dir: string, guest: TestGuest, title = 'Guest Console e2e'): Promise<DemoGrant> {
  const keys = await issuerKeys(dir);
  const tag = randomBytes(4).toString('hex');
  const vmUuid = randomUUID();
  const vmName = `gc-demo-${tag}`;
  const node = path.join(dir, `node-${tag}.xml`);
  const { stdout: uriOut } = await run(BIN.demoVm, ['--out', node, '--port', String(guest.port), '--uuid', vmUuid, '--name', vmName]);
  const libvirtUri = uriOut.trim().split('\n').pop() ?? '';
  const readyFile = path.join(dir, `guest-ready-${tag}.json`);
  await fs.writeFile(readyFile, `${guest.readyLine}\n`);
  const grant = path.join(dir, `grant-${tag}.json`);
  const run_ = `run-e2e-${tag}`;
  const task = `task-e2e-${tag}`;
  const { stdout: digestOut } = await run(BIN.issueGrant, [
    '--out', grant,
    '--vm-uuid', vmUuid,
    '--vm-name', vmName,
    '--port', String(guest.port),
    '--cert-from-guest-ready-line', readyFile,
    '--desktop', `${guest.width}x${guest.height}`,
    '--libvirt-uri', libvirtUri,
    '--run', run_,
    '--task', task,
    '--title', title,
    '--panel', 'username=op',
    '--sign-key', keys.privateKey,
    '--print-digest',
  ]);
  return { path: grant, run: run_, task, vmName, vmUuid, digest: digestOut.trim().toLowerCase(), title, issuerKey: keys.publicKey };
}

export interface ConsoleOptions {
  grant: string;
  runtimeDir: string;
  stateDir: string;
  /** --issuer-key: the public key of issueDemoGrant's signer. */
  issuerKey: string;
  /** --test-ledger-dir (test builds): a private consumed-grants ledger; default: the state dir. */
  ledgerDir?: string;
  allowOrigins?: string[];
}

/** `guest-console open` driven over its control channel, as the extension does. */
export class RealConsole extends JsonLineChild {
  static start(o: ConsoleOptions): RealConsole {
    const args = [
      'open',
      '--grant', o.grant,
      '--runtime-dir', o.runtimeDir,
      '--state-dir', o.stateDir,
      '--issuer-key', o.issuerKey,
      '--test-ledger-dir', o.ledgerDir ?? o.stateDir,
      ...(o.allowOrigins ?? []).flatMap((origin) => ['--allow-origin', origin]),
    ];
    const child = spawn(BIN.console, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env['PATH'], HOME: process.env['HOME'], ...sanitizerEnv() } });
    return new RealConsole('guest-console', child);
  }

  /** ready → credentials (on stdin) → SETUP with the guest connected. */
  async signIn(password: string, timeoutMs = 30000): Promise<{ port: number; capability: string; run: string }> {
    const ready = await this.next('ready', timeoutMs);
    await this.next('credentials_required', timeoutMs);
    this.write({ cmd: 'credentials', username: 'op', password, domain: '' });
    await this.next('phase', timeoutMs, (e) => e['phase'] === 'SETUP');
    const panel = ready['panel'] as { port: number; capability: string };
    return { port: panel.port, capability: panel.capability, run: String(ready['run']) };
  }

  phases(): string[] {
    return this.of('phase').map((e) => String(e['phase']));
  }
}

/** A private 0700 directory tree for one test: runtime/ and state/. */
export async function privateDirs(prefix: string): Promise<{ root: string; runtime: string; state: string }> {
  const root = await fs.mkdtemp(path.join(process.env['TMPDIR'] ?? '/tmp', prefix));
  const runtime = path.join(root, 'runtime');
  const state = path.join(root, 'state');
  await fs.mkdir(runtime, { mode: 0o700 });
  await fs.mkdir(state, { mode: 0o700 });
  await fs.chmod(root, 0o700);
  return { root, runtime, state };
}

export async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}
