// One `guest-console open --grant <path>` child: spawn without a shell, the JSON-line
// control channel on its stdio, and teardown of exactly this PID (never by name).
// Lives on the extension host's event loop.

import * as childProcess from 'child_process';
import type { ChildProcess, SpawnOptions } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { ClosedEvent, CloseReason, ControlCommand, ControlEvent, CredentialsRequiredEvent, ErrorEvent, isPhase } from '../shared/protocol';
import { Disposable, Emitter, toDisposable } from './Disposable';
import { redact } from './redact';

export type SpawnFunction = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

export interface ConsoleProcessOptions {
  binaryPath: string;
  grantPath: string;
  /** Exact web origins the panel may present besides vscode-webview:// (web hosts). */
  allowOrigins?: readonly string[];
  /** Who signs grants (see GrantTrust). */
  trust?: GrantTrust;
  log: (line: string) => void;
  spawn?: SpawnFunction;
  /** Environment to filter; defaults to process.env. */
  parentEnv?: NodeJS.ProcessEnv;
  /** SIGTERM -> SIGKILL grace for an orderly stop. */
  terminateGraceMs?: number;
  /** How long panic waits for the console to exit by itself before SIGKILL. */
  panicGraceMs?: number;
  maxLineBytes?: number;
}

export interface ConsoleExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when no console ran at all: why it could not be started (no secret in it). */
  startFailure?: string;
}

/** Environment variables the console may need; everything else stays in the host. */
const ENV_ALLOWLIST = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'XDG_RUNTIME_DIR',
  'XDG_STATE_HOME',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_CACHE_HOME',
]);
const SECRET_LOOKING_NAME = /PASS|SECRET|TOKEN|CRED|CAPAB|KEY|AUTH|COOKIE/i;

/** Where the .deb installs the console; looked in after PATH (a desktop session's PATH may be short). */
export const INSTALLED_BIN_DIRS: readonly string[] = ['/usr/bin'];

export type ConsoleBinary = { ok: true; path: string } | { ok: false; reason: string };

function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * `guestConsole.binaryPath` -> the absolute path that is spawned (no shell is involved).
 * An absolute path is taken as it is. A bare command name (the default, `guest-console`) is
 * looked up in PATH's absolute directories, then in INSTALLED_BIN_DIRS; relative PATH
 * entries ('', '.') are skipped, as is a relative path with a slash: either would depend on
 * the extension host's working directory.
 */
export function resolveConsoleBinary(
  setting: string,
  env: NodeJS.ProcessEnv = process.env,
  installedDirs: readonly string[] = INSTALLED_BIN_DIRS,
): ConsoleBinary {
  if (path.isAbsolute(setting)) {
    return { ok: true, path: setting };
  }
  if (setting === '' || setting.includes('/')) {
    return { ok: false, reason: `guestConsole.binaryPath must be an absolute path or a command name, not "${setting}"` };
  }
  const dirs = [...(env['PATH'] ?? '').split(path.delimiter).filter((d) => path.isAbsolute(d)), ...installedDirs];
  for (const dir of dirs) {
    const candidate = path.join(dir, setting);
    if (isExecutableFile(candidate)) {
      return { ok: true, path: candidate };
    }
  }
  return { ok: false, reason: `no executable "${setting}" in PATH or ${installedDirs.join(', ')}; install the guest-console package or set guestConsole.binaryPath` };
}

/** The two machine-scoped settings that decide which grants the console accepts. */
export interface GrantTrust {
  /** The issuer's Ed25519 public key (PEM); "" or absent = the console's /etc default. */
  issuerKeyPath?: string;
  /** Development only: accept unsigned grants (the panel and the evidence say so). */
  allowUnsignedGrants?: boolean;
}

export function buildConsoleArgv(
  grantPath: string,
  allowOrigins: readonly string[] = [],
  trust: GrantTrust = {},
): string[] {
  // Bounded and fixed: the grant path, the web host's origin and the issuer key's path are
  // the only variable parts (none is a secret). The console learns credentials on stdin and
  // issues the capability itself.
  return [
    'open',
    '--grant',
    grantPath,
    ...allowOrigins.flatMap((o) => ['--allow-origin', o]),
    ...(trust.issuerKeyPath ? ['--issuer-key', trust.issuerKeyPath] : []),
    ...(trust.allowUnsignedGrants === true ? ['--allow-unsigned-grants'] : []),
  ];
}

export function buildConsoleEnv(parent: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) {
      continue;
    }
    const wanted = ENV_ALLOWLIST.has(name) || (name.startsWith('GC_') && !SECRET_LOOKING_NAME.test(name));
    if (wanted) {
      env[name] = value;
    }
  }
  return env;
}

/** Validates one parsed stdout object; returns undefined for anything not in the contract. */
export function parseControlEvent(value: unknown): ControlEvent | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return undefined;
  }
  const v = value as Record<string, unknown>;
  const isUint = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;
  switch (v['event']) {
    case 'ready': {
      const panel = v['panel'] as Record<string, unknown> | undefined;
      const port = panel?.['port'];
      const capability = panel?.['capability'];
      if (
        typeof v['run'] !== 'string' ||
        !isUint(port) ||
        port < 1 ||
        port > 65535 ||
        typeof capability !== 'string' ||
        !/^[0-9a-fA-F]{64}$/.test(capability)
      ) {
        return undefined;
      }
      return { event: 'ready', run: v['run'], panel: { port, capability } };
    }
    case 'credentials_required': {
      const username = v['username'];
      if (!isUint(v['attempt']) || (username !== undefined && username !== null && typeof username !== 'string')) {
        return undefined;
      }
      const asked: CredentialsRequiredEvent = { event: 'credentials_required', attempt: v['attempt'] };
      if (typeof username === 'string') asked.username = username;
      if (isUint(v['max_attempts'])) asked.max_attempts = v['max_attempts'];
      return asked;
    }
    case 'phase': {
      const reason = v['reason'];
      if (!isPhase(v['phase']) || (reason !== undefined && reason !== null && typeof reason !== 'string')) {
        return undefined;
      }
      return { event: 'phase', phase: v['phase'], reason: typeof reason === 'string' ? reason : '' };
    }
    case 'drained':
      return isUint(v['upto']) ? { event: 'drained', upto: v['upto'] } : undefined;
    case 'receipt':
      return { ...v, event: 'receipt' };
    case 'closed': {
      const closed: ClosedEvent = { event: 'closed', reason: typeof v['reason'] === 'string' ? v['reason'] : '' };
      if (typeof v['message'] === 'string') {
        closed.message = v['message'];
      }
      if (typeof v['evidence_head'] === 'string') {
        closed.evidence_head = v['evidence_head'];
      }
      if (typeof v['evidence'] === 'string') {
        closed.evidence = v['evidence'];
      }
      return closed;
    }
    case 'error': {
      if (typeof v['code'] !== 'string') {
        return undefined;
      }
      const error: ErrorEvent = { event: 'error', code: v['code'], message: typeof v['message'] === 'string' ? v['message'] : '' };
      if (typeof v['evidence'] === 'string') {
        error.evidence = v['evidence'];
      }
      return error;
    }
    default:
      return undefined;
  }
}

/** Splits a byte stream into bounded lines; an oversize line is dropped whole. */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private discarding = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOversize: (bytes: number) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      const piece = chunk.subarray(start, nl === -1 ? chunk.length : nl);
      if (!this.discarding) {
        if (this.pendingBytes + piece.length > this.maxLineBytes) {
          this.discarding = true;
          this.onOversize(this.pendingBytes + piece.length);
          this.pending = [];
          this.pendingBytes = 0;
        } else if (piece.length > 0) {
          this.pending.push(piece);
          this.pendingBytes += piece.length;
        }
      }
      if (nl === -1) {
        return;
      }
      if (!this.discarding) {
        const line = Buffer.concat(this.pending).toString('utf8');
        this.pending = [];
        this.pendingBytes = 0;
        this.onLine(line);
      }
      this.discarding = false;
      start = nl + 1;
    }
  }
}

export class ConsoleProcess extends Disposable {
  private readonly child: ChildProcess | undefined;
  private readonly exitPromise: Promise<ConsoleExit>;
  private exitInfo: ConsoleExit | undefined;
  private terminating: Promise<unknown> | undefined;
  private readonly onEventEmitter = this.register(new Emitter<ControlEvent>());
  private readonly onExitEmitter = this.register(new Emitter<ConsoleExit>());
  readonly onEvent = this.onEventEmitter.event;
  readonly onExit = this.onExitEmitter.event;
  /** The exact PID this object will ever signal. */
  readonly pid: number;
  private readonly log: (line: string) => void;
  private readonly terminateGraceMs: number;
  private readonly panicGraceMs: number;

  constructor(options: ConsoleProcessOptions) {
    super();
    this.log = options.log;
    this.terminateGraceMs = options.terminateGraceMs ?? 2000;
    this.panicGraceMs = options.panicGraceMs ?? 40;
    const spawn: SpawnFunction = options.spawn ?? childProcess.spawn;
    const parentEnv = options.parentEnv ?? process.env;
    const binary = resolveConsoleBinary(options.binaryPath, parentEnv);
    if (!binary.ok) {
      // Nothing is spawned; reported like a spawn failure, after the caller subscribed.
      this.log(`console could not start: ${binary.reason}`);
      this.child = undefined;
      this.exitInfo = { code: null, signal: null, startFailure: binary.reason };
      const exit = this.exitInfo;
      this.exitPromise = Promise.resolve(exit);
      setImmediate(() => this.onExitEmitter.fire(exit));
      this.pid = -1;
      return;
    }
    const child = spawn(binary.path, buildConsoleArgv(options.grantPath, options.allowOrigins, options.trust), {
      shell: false,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: buildConsoleEnv(parentEnv),
      windowsHide: true,
    });
    this.child = child;
    this.exitPromise = new Promise<ConsoleExit>((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
        this.onExitEmitter.fire(this.exitInfo);
      });
      child.once('error', (err) => {
        // spawn failure (ENOENT, EACCES): there will be no 'exit'.
        if (child.pid === undefined && !this.exitInfo) {
          this.log(`console could not start: ${redact(err.message)}`);
          this.exitInfo = { code: null, signal: null, startFailure: `${binary.path}: ${redact(err.message)}` };
          resolve(this.exitInfo);
          this.onExitEmitter.fire(this.exitInfo);
        }
      });
    });
    this.pid = child.pid ?? -1;

    const maxLineBytes = options.maxLineBytes ?? 64 * 1024;
    const stdout = new LineSplitter(
      maxLineBytes,
      (line) => this.handleStdoutLine(line),
      (bytes) => this.log(`console stdout line over ${maxLineBytes} bytes dropped (${bytes}+ bytes)`),
    );
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    const stderr = new LineSplitter(
      maxLineBytes,
      (line) => this.log(`console: ${redact(line)}`),
      () => this.log('console stderr line too long, dropped'),
    );
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    // EPIPE after the child is gone is expected; never crash the host for it.
    child.stdin?.on('error', () => undefined);
    this.register(toDisposable(() => void this.terminate()));
  }

  get exited(): boolean {
    return this.exitInfo !== undefined;
  }

  get exit(): Promise<ConsoleExit> {
    return this.exitPromise;
  }

  /** Writes one command line. The credentials line is zeroed once the pipe took it. */
  send(command: ControlCommand): boolean {
    const stdin = this.child?.stdin;
    if (this.exited || !stdin || stdin.destroyed || !stdin.writable) {
      return false;
    }
    const bytes = Buffer.from(`${JSON.stringify(command)}\n`, 'utf8');
    stdin.write(bytes, () => bytes.fill(0));
    return true;
  }

  sendCredentials(username: string, password: string, domain: string | undefined): boolean {
    return this.send(domain ? { cmd: 'credentials', username, password, domain } : { cmd: 'credentials', username, password });
  }

  /**
   * Panic: tell the console first (it tears the session down itself), then make sure:
   * if this PID has not exited within the panic grace, SIGKILL it. Resolves once it is gone.
   */
  async panic(): Promise<ConsoleExit> {
    if (this.exited) {
      return this.exitPromise;
    }
    this.send({ cmd: 'panic' });
    const timer = setTimeout(() => this.signal('SIGKILL'), this.panicGraceMs);
    const exit = await this.exitPromise;
    clearTimeout(timer);
    return exit;
  }

  /**
   * Orderly stop of this PID: `close` on stdin and EOF (the console treats EOF as "parent
   * gone") so it can record its close reason; SIGTERM if it has not exited after a short
   * wait; SIGKILL after the grace period. Resolves when this PID has exited.
   */
  terminate(graceMs = this.terminateGraceMs, reason?: CloseReason): Promise<ConsoleExit> {
    if (!this.exited && !this.terminating) {
      // The default needs no word (the console's is OPERATOR_CLOSE).
      this.send(reason && reason !== 'OPERATOR_CLOSE' ? { cmd: 'close', reason } : { cmd: 'close' });
      this.child?.stdin?.end();
      const politeMs = Math.min(500, Math.floor(graceMs / 2));
      const term = setTimeout(() => this.signal('SIGTERM'), politeMs);
      const kill = setTimeout(() => this.signal('SIGKILL'), politeMs + graceMs);
      this.terminating = this.exitPromise.finally(() => {
        clearTimeout(term);
        clearTimeout(kill);
      });
    }
    return this.exitPromise;
  }

  private signal(sig: NodeJS.Signals): void {
    // ChildProcess.kill signals exactly child.pid, and is a no-op once it was reaped,
    // so a recycled PID is never hit.
    if (!this.exited && this.pid > 0) {
      this.child?.kill(sig);
    }
  }

  private handleStdoutLine(line: string): void {
    const trimmed = line.trim();
    if (trimmed.length === 0) {
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      this.log(`malformed console line ignored: ${redact(trimmed)}`);
      return;
    }
    const event = parseControlEvent(parsed);
    if (!event) {
      this.log(`unexpected console line ignored: ${redact(trimmed)}`);
      return;
    }
    this.onEventEmitter.fire(event);
  }
}
