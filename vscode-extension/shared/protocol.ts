// The message types of Guest Console, in one place:
//  - the panel protocol (webview <-> console WebSocket), kept in step with
//    resources/protocol/panel-protocol.json by test/unit/protocolSync.test.ts;
//  - the control channel of `guest-console open` (extension host <-> child stdio), kept in
//    step with resources/protocol/control-channel.json by test/unit/controlChannelSync.test.ts;
//  - the webview <-> extension host messages (postMessage).
// Imported by both bundles (src/ and media/), so it holds data and types only.

export const PANEL_PROTOCOL_NAME = 'guest-console-panel';
export const PANEL_PROTOCOL_VERSION = 1;

export const PanelLimits = {
  maxTextMessageBytes: 4096,
  helloDeadlineMs: 3000,
  maxUnackedFrames: 2,
  maxMessagesPerSecond: 2000,
} as const;

export const PHASES = ['SETUP', 'LOCKING', 'READ_ONLY', 'CAPTURING', 'REVIEWING', 'ACTION', 'CLOSED'] as const;
export type Phase = (typeof PHASES)[number];

export function isPhase(value: unknown): value is Phase {
  return typeof value === 'string' && (PHASES as readonly string[]).includes(value);
}

/** How the panel, its tab title and the status bar name each phase. */
export const PHASE_LABELS: Readonly<Record<Phase, string>> = {
  SETUP: 'SETUP',
  LOCKING: 'LOCKING',
  READ_ONLY: 'READ-ONLY',
  CAPTURING: 'CAPTURING',
  REVIEWING: 'REVIEWING',
  ACTION: 'ACTION',
  CLOSED: 'CLOSED',
};

/** Pointer button mask bits (desktop semantics, not DOM `buttons` order). */
export const enum PointerButton {
  Left = 1,
  Right = 2,
  Middle = 4,
}
export const POINTER_BUTTONS = { left: PointerButton.Left, right: PointerButton.Right, middle: PointerButton.Middle } as const;

/** Extended RDP scancodes are written as 0xE000 | code. */
export const EXTENDED_SCANCODE_PREFIX = 0xe000;

/**
 * The only scancodes the console accepts (panel-protocol.json keyboardScancodes): the keys
 * the webview (media/scancodes.ts) and the Qt viewer can produce, sorted. Any other key is
 * refused with SCANCODE_FORBIDDEN; ACPI Power/Sleep/Wake (0xe05e, 0xe05f, 0xe063) are not on it.
 */
export const KEYBOARD_SCANCODES: readonly number[] = Object.freeze([
  0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c,
  0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
  0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24,
  0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f, 0x30,
  0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x3b, 0x3c,
  0x3d, 0x3e, 0x3f, 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,
  0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f, 0x50, 0x51, 0x52, 0x53, 0x56,
  0x57, 0x58, 0x59, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c,
  0x6d, 0x6e, 0x70, 0x71, 0x72, 0x73, 0x76, 0x79, 0x7b, 0x7d, 0x7e,
  0xe010, 0xe019, 0xe01c, 0xe01d, 0xe020, 0xe021, 0xe022, 0xe024, 0xe02e, 0xe030, 0xe032, 0xe035,
  0xe037, 0xe038, 0xe047, 0xe048, 0xe049, 0xe04b, 0xe04d, 0xe04f, 0xe050, 0xe051, 0xe052, 0xe053,
  0xe05b, 0xe05c, 0xe05d, 0xe065, 0xe066, 0xe067, 0xe068, 0xe069, 0xe06a, 0xe06b, 0xe06c, 0xe06d,
]);

// ---------------------------------------------------------------------------
// Panel protocol: panel -> console (text JSON, `type` first)

export interface HelloMessage {
  type: 'hello';
  run: string;
  task: string;
  capability: string;
  client: { kind: string; version: string };
  panel?: PanelMetadata;
  /** Frame features the panel applies; the console sends COPY records only for 'copy_rect'. */
  features?: PanelFeature[];
}
export type PanelFeature = 'copy_rect';
export const PANEL_FEATURES: readonly PanelFeature[] = ['copy_rect'];
export interface PanelMetadata {
  title: string;
  [key: string]: unknown;
}
export interface KeyMessage {
  type: 'key';
  seq: number;
  scancode: number;
  down: boolean;
}
export interface PointerMessage {
  type: 'pointer';
  seq: number;
  x: number;
  y: number;
  buttons: number;
  wheel: number;
}
export interface FrameAckMessage {
  type: 'frame_ack';
  frame: number;
}
/** The panel could not paint `frame` (0: header unreadable): send the whole desktop again. */
export interface FrameRefreshMessage {
  type: 'frame_refresh';
  frame: number;
}
export interface LockMessage {
  type: 'lock';
}
export interface CloseMessage {
  type: 'close';
}
export type PanelToConsoleMessage =
  | HelloMessage
  | KeyMessage
  | PointerMessage
  | FrameAckMessage
  | FrameRefreshMessage
  | LockMessage
  | CloseMessage;

// ---------------------------------------------------------------------------
// Panel protocol: console -> panel (text JSON)

export interface WelcomeMessage {
  type: 'welcome';
  run: string;
  task: string;
  vm: string;
  identity: Record<string, unknown>;
  phase: Phase;
  width: number;
  height: number;
  protocol: number;
}
export interface PhaseMessage {
  type: 'phase';
  phase: Phase;
  reason: string;
}
export interface InputAckMessage {
  type: 'input_ack';
  upto: number;
}
export interface InputRefusedMessage {
  type: 'input_refused';
  seq: number;
  code: string;
}
export interface DrainedMessage {
  type: 'drained';
  upto: number;
}
export interface ErrorMessage {
  type: 'error';
  code: string;
  message: string;
}
export interface ByeMessage {
  type: 'bye';
  reason: string;
}
export type ConsoleToPanelMessage =
  | WelcomeMessage
  | PhaseMessage
  | InputAckMessage
  | InputRefusedMessage
  | DrainedMessage
  | ErrorMessage
  | ByeMessage;

// Field kinds as the JSON spells them. The tables below are checked by the compiler
// against the interfaces (every field listed, no extra) and by the sync test against
// the JSON (same messages, same fields, same kinds).
export type FieldKind = 'string' | 'string[]?' | 'hex64' | 'object' | 'object?' | 'uint' | 'int' | 'bool' | 'phase' | 'refusal';
export type FieldSpec = FieldKind | { readonly [field: string]: FieldSpec };
type SchemaOf<U extends { type: string }> = {
  readonly [K in U['type']]: { readonly [F in Exclude<keyof Extract<U, { type: K }>, 'type'>]-?: FieldSpec };
};

export const PANEL_TO_CONSOLE_SCHEMA: SchemaOf<PanelToConsoleMessage> = {
  hello: { run: 'string', task: 'string', capability: 'hex64', client: { kind: 'string', version: 'string' }, panel: 'object?', features: 'string[]?' },
  key: { seq: 'uint', scancode: 'uint', down: 'bool' },
  pointer: { seq: 'uint', x: 'uint', y: 'uint', buttons: 'uint', wheel: 'int' },
  frame_ack: { frame: 'uint' },
  frame_refresh: { frame: 'uint' },
  lock: {},
  close: {},
};

export const CONSOLE_TO_PANEL_SCHEMA: SchemaOf<ConsoleToPanelMessage> = {
  welcome: {
    run: 'string',
    task: 'string',
    vm: 'string',
    identity: 'object',
    phase: 'phase',
    width: 'uint',
    height: 'uint',
    protocol: 'uint',
  },
  phase: { phase: 'phase', reason: 'string' },
  input_ack: { upto: 'uint' },
  input_refused: { seq: 'uint', code: 'refusal' },
  drained: { upto: 'uint' },
  error: { code: 'refusal', message: 'string' },
  bye: { reason: 'string' },
};

// ---------------------------------------------------------------------------
// Panel protocol: binary frame updates (console -> panel), little-endian.

export const FRAME_MAGIC = 0x31464347; // 'GCF1'
export type BinaryFieldType = 'u8' | 'u16' | 'u32';
export const BINARY_FIELD_BYTES: Readonly<Record<BinaryFieldType, number>> = { u8: 1, u16: 2, u32: 4 };

export const FRAME_HEADER_LAYOUT: ReadonlyArray<readonly [string, BinaryFieldType]> = [
  ['magic', 'u32'],
  ['frame', 'u32'],
  ['width', 'u16'],
  ['height', 'u16'],
  ['rects', 'u16'],
];
export const FRAME_RECT_LAYOUT: ReadonlyArray<readonly [string, BinaryFieldType]> = [
  ['x', 'u16'],
  ['y', 'u16'],
  ['w', 'u16'],
  ['h', 'u16'],
  ['encoding', 'u8'],
  ['length', 'u32'],
];
export const FRAME_HEADER_BYTES = 14;
export const FRAME_RECT_HEADER_BYTES = 13;

export const enum RectEncoding {
  Png = 1,
  Jpeg = 2,
  Copy = 3,
}
export const RECT_ENCODINGS = { png: RectEncoding.Png, jpeg: RectEncoding.Jpeg, copy: RectEncoding.Copy } as const;
/** A COPY record's body: the source's top-left (the record's x, y, w, h is the destination). */
export const FRAME_COPY_LAYOUT: ReadonlyArray<readonly [string, BinaryFieldType]> = [
  ['sx', 'u16'],
  ['sy', 'u16'],
];
export const FRAME_COPY_BYTES = 4;

// ---------------------------------------------------------------------------
// Control channel of `guest-console open` (JSON lines on the child's stdio). Source of
// truth: resources/protocol/control-channel.json; test/unit/controlChannelSync.test.ts
// keeps the tables below equal to it, and the compiler keeps the tables equal to the
// interfaces. A field the extension's reader does not need is optional in the interface
// (the reader tolerates its absence); its kind in the table is still the console's.

export const CONTROL_CHANNEL_NAME = 'guest-console-control';
export const CONTROL_CHANNEL_VERSION = 1;
export const ControlLimits = {
  maxCommandLineBytes: 16384,
} as const;

export interface ReadyEvent {
  event: 'ready';
  run: string;
  task?: string;
  vm?: string;
  identity?: Record<string, unknown>;
  panel: { port: number; capability: string };
}
export interface CredentialsRequiredEvent {
  event: 'credentials_required';
  username?: string;
  domain?: string;
  attempt: number;
  max_attempts?: number;
}
export interface PhaseEvent {
  event: 'phase';
  phase: Phase;
  reason?: string;
}
/** The lock barrier delivered every accepted event up to `upto`. */
export interface DrainedEvent {
  event: 'drained';
  upto: number;
}
/** The receipt's own fields (docs/mcp.md), evidence_head included. */
export interface ReceiptEvent {
  event: 'receipt';
  [key: string]: unknown;
}
export interface ClosedEvent {
  event: 'closed';
  reason: string;
  message?: string;
  /** The evidence log's head hash: `guest-console evidence verify <evidence> --head <it>`. */
  evidence_head?: string;
  /** The run's evidence log (an absolute path). */
  evidence?: string;
}
export interface ErrorEvent {
  event: 'error';
  code: string;
  message: string;
  /** On a refusal that ends the open: the log that recorded it. */
  evidence?: string;
}
export type ControlEvent =
  | ReadyEvent
  | CredentialsRequiredEvent
  | PhaseEvent
  | DrainedEvent
  | ReceiptEvent
  | ClosedEvent
  | ErrorEvent;

export interface CredentialsCommand {
  cmd: 'credentials';
  username: string;
  password: string;
  domain?: string;
}
/** Why the parent closes; absent means OPERATOR_CLOSE (control-channel.json "close_reason?"). */
export const CLOSE_REASONS = ['OPERATOR_CLOSE', 'AUTH_CANCELLED', 'WINDOW_RELOAD'] as const;
export type CloseReason = (typeof CLOSE_REASONS)[number];
export interface CloseCommand {
  cmd: 'close';
  reason?: CloseReason;
}
export type ControlCommand = CredentialsCommand | { cmd: 'lock' } | CloseCommand | { cmd: 'panic' };

// Field kinds as control-channel.json spells them ("receipt": the event is the receipt).
export type ControlFieldKind = 'string' | 'string?' | 'uint' | 'hex64' | 'object' | 'phase' | 'refusal' | 'close_reason?';
export type ControlFieldSpec = ControlFieldKind | { readonly [field: string]: ControlFieldSpec };
type ControlFieldsOf<T, D extends string> = { readonly [F in Exclude<keyof T, D>]-?: ControlFieldSpec };
type ControlEventSchema = {
  readonly [K in Exclude<ControlEvent['event'], 'receipt'>]: ControlFieldsOf<Extract<ControlEvent, { event: K }>, 'event'>;
} & { readonly receipt: 'receipt' };
type ControlCommandSchema = {
  readonly [K in ControlCommand['cmd']]: ControlFieldsOf<Extract<ControlCommand, { cmd: K }>, 'cmd'>;
};

export const CONTROL_EVENT_SCHEMA: ControlEventSchema = {
  ready: { run: 'string', task: 'string', vm: 'string', identity: 'object', panel: { port: 'uint', capability: 'hex64' } },
  credentials_required: { username: 'string?', domain: 'string?', attempt: 'uint', max_attempts: 'uint' },
  phase: { phase: 'phase', reason: 'string' },
  drained: { upto: 'uint' },
  receipt: 'receipt',
  error: { code: 'refusal', message: 'string', evidence: 'string?' },
  closed: { reason: 'refusal', message: 'string', evidence_head: 'string', evidence: 'string' },
};

export const CONTROL_COMMAND_SCHEMA: ControlCommandSchema = {
  credentials: { username: 'string?', password: 'string', domain: 'string?' },
  lock: {},
  close: { reason: 'close_reason?' },
  panic: {},
};

// ---------------------------------------------------------------------------
// Webview <-> extension host (postMessage). The capability travels only here.

export interface ConnectInfo {
  type: 'connect';
  wsUrl: string;
  run: string;
  task: string;
  capability: string;
  clientVersion: string;
  panel: PanelMetadata;
}
export interface HostPhaseInfo {
  type: 'host_phase';
  phase: Phase;
  reason: string;
}
/** What the run came to, for the panel's summary (the receipt travels only host -> webview). */
export interface RunSummary {
  /** The close reason's code, and its words and next step (src/refusalGuide.ts). */
  reason: string;
  headline: string;
  next: string;
  /** The evidence log and its head; "" when the console wrote none or did not say. */
  evidence: string;
  evidenceHead: string;
  receipt?: ReceiptSummary;
}
export interface ReceiptSummary {
  /** The receipt's canonical action, e.g. `click(480,200)`. */
  action: string;
  /** `executed` or `failed` (then `failure`). */
  outcome: string;
  failure?: string;
  /** `confirmed` (the guest read it all and closed), `unconfirmed`, `not_attempted`. */
  confirmation: string;
  confirmMs?: number;
  eventsSent?: number;
}
export interface HostSummaryInfo {
  type: 'host_summary';
  summary: RunSummary;
}
export interface HostVerifyInfo {
  type: 'host_verify';
  ok: boolean;
  text: string;
}
/** Before the guest connects: what the host is doing (connecting, signing in). */
export interface HostProgressInfo {
  type: 'host_progress';
  text: string;
}
export type HostToWebviewMessage = ConnectInfo | HostPhaseInfo | HostProgressInfo | HostSummaryInfo | HostVerifyInfo;

export interface PanelStatus {
  type: 'status';
  phase: Phase;
  acked: number;
  refused: number;
}
export type WebviewToHostMessage =
  | { type: 'webview_ready' }
  | { type: 'request_close' }
  | { type: 'request_panic' }
  | { type: 'request_open_evidence' }
  | { type: 'request_verify_evidence' }
  | PanelStatus;
