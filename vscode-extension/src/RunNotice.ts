// What the operator is told when a run fails or ends: one notification per refusal or close,
// worded for a person, with the next step docs/troubleshooting.md gives (src/refusalGuide.ts,
// generated from it) and the buttons that make sense for it. Pure functions: ConsoleSession
// shows the notice and carries out the button the operator picks.

import { REFUSAL_GUIDE, RefusalCode } from './refusalGuide';
import { redact } from './redact';

export type NoticeSeverity = 'error' | 'warning' | 'info';

/** The buttons a notice can carry (their labels, as VS Code shows them). */
export const NoticeAction = {
  evidence: 'Show Evidence',
  verify: 'Verify Evidence',
  docs: 'Open Docs',
  newGrant: 'New Grant…',
  retry: 'Retry',
  log: 'Show Log',
  settings: 'Open Settings',
} as const;
export type NoticeActionLabel = (typeof NoticeAction)[keyof typeof NoticeAction];

export interface RunNotice {
  severity: NoticeSeverity;
  message: string;
  actions: NoticeActionLabel[];
  /** The refusal code, when the notice is about one. */
  code?: string;
}

export interface NoticeContext {
  /** The VM the grant names (for "Guest Console — <vm>: …"). */
  vm?: string;
  /** The evidence log that recorded it, when the console said. */
  evidence?: string;
  /** The console reached `ready`: the grant is consumed, so only a new grant runs again. */
  grantSpent: boolean;
  attempt?: number;
  maxAttempts?: number;
}

export function isRefusalCode(code: string): code is RefusalCode {
  return Object.prototype.hasOwnProperty.call(REFUSAL_GUIDE, code);
}

// Refusals that come from the grant itself: opening the same file again cannot help.
const GRANT_INTRINSIC = new Set<string>([
  'GRANT_SCHEMA',
  'GRANT_EXPIRED',
  'GRANT_STALE',
  'GRANT_LIFETIME',
  'GRANT_REUSED',
  'GRANT_SIGNATURE',
  'LIBVIRT_URI_FORBIDDEN',
  'VM_NAME_MISMATCH',
  'RDP_PORT_MISMATCH',
  'GUEST_CERT_MISMATCH',
]);
// Ends of a run that are not a failure.
const ORDINARY_CLOSE = new Set<string>(['ACTION_DONE', 'OPERATOR_CLOSE', 'WINDOW_RELOAD', 'PARENT_GONE']);
const OPERATOR_CHOICE = new Set<string>(['PANIC', 'AUTH_CANCELLED']);

// FreeRDP's names for why a login failed (the console's AUTH_FAILED message), in words.
const CREDENTIAL_WORDS: Readonly<Record<string, string>> = {
  ERRCONNECT_AUTHENTICATION_FAILED: 'the user name or password is wrong',
  ERRCONNECT_LOGON_FAILURE: 'the user name or password is wrong',
  ERRCONNECT_WRONG_PASSWORD: 'the password is wrong',
  ERRCONNECT_ACCESS_DENIED: 'this account may not sign in to the guest',
  ERRCONNECT_ACCOUNT_RESTRICTION: 'an account restriction prevents the sign-in',
  ERRCONNECT_ACCOUNT_LOCKED_OUT: 'the account is locked out',
  ERRCONNECT_ACCOUNT_EXPIRED: 'the account has expired',
  ERRCONNECT_ACCOUNT_DISABLED: 'the account is disabled',
  ERRCONNECT_LOGON_TYPE_NOT_GRANTED: 'this account may not sign in remotely',
  ERRCONNECT_NO_OR_MISSING_CREDENTIALS: 'no user name or password reached the guest',
  ERRCONNECT_PASSWORD_EXPIRED: 'the password has expired',
  ERRCONNECT_PASSWORD_CERTAINLY_EXPIRED: 'the password has expired',
  ERRCONNECT_PASSWORD_MUST_CHANGE: 'the password must be changed first',
  ERRCONNECT_CLIENT_REVOKED: "the account's credentials were revoked",
  ERRINFO_SERVER_FRESH_CREDENTIALS_REQUIRED: 'the guest asks for fresh credentials',
};
const LIBRARY_ERROR_NAME = /\bERR(?:CONNECT|INFO)_[A-Z0-9_]+\b/;

/** Why the guest refused a login, in words; never FreeRDP's internal error name. */
export function credentialWords(consoleMessage: string): string {
  const name = LIBRARY_ERROR_NAME.exec(consoleMessage)?.[0];
  return (name && CREDENTIAL_WORDS[name]) ?? 'the guest refused the user name or password';
}

function sentence(text: string): string {
  const t = text.trim();
  return t.length === 0 ? '' : `${t[0]?.toUpperCase() ?? ''}${t.slice(1)}${/[.!?]$/.test(t) ? '' : '.'}`;
}

/** The headline of a refusal: its words, and the console's detail where that adds something. */
export function refusalHeadline(code: string, consoleMessage: string, ctx: NoticeContext): string {
  const of = ctx.maxAttempts ? ` of ${ctx.maxAttempts}` : '';
  switch (code) {
    case 'AUTH_FAILED':
      return sentence(`The guest refused the sign-in: ${credentialWords(consoleMessage)}${ctx.attempt ? ` (attempt ${ctx.attempt}${of})` : ''}`);
    case 'AUTH_EXHAUSTED':
      return sentence(`The guest refused the sign-in too often (${credentialWords(consoleMessage)}); the console closed`);
    case 'AUTH_CANCELLED':
      return 'The sign-in was cancelled; the console closed.';
    default:
      break;
  }
  const summary = isRefusalCode(code) ? REFUSAL_GUIDE[code].summary : `refused (${code})`;
  const detail = consoleMessage.replace(LIBRARY_ERROR_NAME, '').trim();
  const adds = detail.length > 0 && detail !== summary && !/^[:;,.\s-]*$/.test(detail);
  return sentence(adds ? `${summary}: ${redact(detail)}` : summary);
}

/** The doc's next step for a code ("" when it lists none). */
export function nextStep(code: string): string {
  return isRefusalCode(code) ? REFUSAL_GUIDE[code].next : '';
}

function compose(ctx: NoticeContext, headline: string, code: string | undefined, next: string): string {
  const where = ctx.vm ? `Guest Console — ${ctx.vm}: ` : 'Guest Console: ';
  return `${where}${headline}${code ? ` (${code})` : ''}${next ? ` ${sentence(next)}` : ''}`;
}

/** A refusal from the console: an `error` event (`closing` false) or the `closed` event's reason. */
export function refusalNotice(code: string, consoleMessage: string, ctx: NoticeContext, closing: boolean): RunNotice {
  const actions: NoticeActionLabel[] = [];
  if (ctx.evidence) actions.push(NoticeAction.evidence);
  if (code === 'ACTION_DONE') {
    if (ctx.evidence) actions.push(NoticeAction.verify);
  } else if (code === 'OPERATOR_CLOSE') {
    actions.push(NoticeAction.newGrant);
  } else if (!ORDINARY_CLOSE.has(code)) {
    actions.push(NoticeAction.docs);
    // An `error` before `ready` ends the open; after it the run goes on (the close says more).
    const ends = closing || !ctx.grantSpent;
    // A consumed grant never opens again; a refusal before `ready` did not consume it.
    if (ends) actions.push(ctx.grantSpent || GRANT_INTRINSIC.has(code) ? NoticeAction.newGrant : NoticeAction.retry);
  }
  const severity: NoticeSeverity = ORDINARY_CLOSE.has(code)
    ? 'info'
    : OPERATOR_CHOICE.has(code) || code === 'AUTH_FAILED' || code === 'PHASE_WRONG'
      ? 'warning'
      : 'error';
  let next = nextStep(code);
  if (closing && ctx.grantSpent && code !== 'ACTION_DONE' && !/new grant|grant is used up/i.test(next)) {
    next = `${sentence(next)} The grant is used up: a new run needs a new grant.`.trim();
  }
  return { severity, message: compose(ctx, refusalHeadline(code, consoleMessage, ctx), code, next), actions, code };
}

/** No console ran: the binary could not be found or started. */
export function startFailureNotice(reason: string, ctx: NoticeContext): RunNotice {
  return {
    severity: 'error',
    message: compose(ctx, sentence(`The console could not be started: ${redact(reason)}`), undefined, 'Install the guest-console package, or set guestConsole.binaryPath to the console executable.'),
    actions: [NoticeAction.settings, NoticeAction.log],
  };
}

/** The console ended without saying why (no `closed`, no `error`): a crash or a kill. */
export function unexpectedExitNotice(code: number | null, signal: string | null, ctx: NoticeContext): RunNotice {
  const how = signal ? `was ended by ${signal}` : `exited with status ${String(code)}`;
  return {
    severity: 'error',
    message: compose(ctx, sentence(`The console ${how} without reporting a close reason`), undefined, `${ctx.grantSpent ? 'The grant is used up. ' : ''}See the Guest Console output for its last lines.`),
    actions: [NoticeAction.log, ...(ctx.grantSpent ? [NoticeAction.newGrant] : [NoticeAction.retry])],
  };
}
