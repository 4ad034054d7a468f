// Asks the operator for the guest login when the console reports credentials_required,
// and hands the answer straight to the console's stdin. Nothing is stored anywhere:
// no SecretStorage, settings, globalState or log; the password string is only held in
// this function's locals until the line is written.

import type { InputBoxOptions } from 'vscode';

export interface CredentialPrompter {
  showInputBox(options: InputBoxOptions): PromiseLike<string | undefined>;
}

export interface CredentialSink {
  sendCredentials(username: string, password: string, domain: string | undefined): boolean;
}

export interface CredentialRequest {
  /** Username suggested by the console event, else by the grant's panel metadata. */
  username?: string;
  attempt: number;
  maxAttempts?: number;
  vmName?: string;
  /** Why the guest refused the previous attempt, in words (RunNotice.credentialWords). */
  lastRefusal?: string;
}

/** Said in every box, before anything is typed: cancelling is not free. */
export const CANCEL_USES_THE_GRANT = 'Esc cancels and ends the run: the grant is single use.';

export type CredentialOutcome = 'sent' | 'cancelled' | 'console-gone';

export async function runCredentialFlow(
  ui: CredentialPrompter,
  sink: CredentialSink,
  request: CredentialRequest,
): Promise<CredentialOutcome> {
  const where = request.vmName ? ` to ${request.vmName}` : '';
  const of = request.maxAttempts ? ` of ${request.maxAttempts}` : '';
  const retry = request.attempt > 1 ? ` (attempt ${request.attempt}${of})` : '';
  const refused = request.lastRefusal && request.attempt > 1 ? ` The guest refused the last attempt: ${request.lastRefusal}.` : '';
  const username = await ui.showInputBox({
    title: `Guest Console: sign in${where}${retry}`,
    prompt: `Guest username.${refused} ${CANCEL_USES_THE_GRANT}`,
    value: request.username ?? '',
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim().length === 0 ? 'A username is required' : undefined),
  });
  if (username === undefined) {
    return 'cancelled';
  }
  const domain = await ui.showInputBox({
    title: `Guest Console: sign in${where}${retry}`,
    prompt: `Domain (optional; leave empty for a local account). ${CANCEL_USES_THE_GRANT}`,
    value: '',
    ignoreFocusOut: true,
  });
  if (domain === undefined) {
    return 'cancelled';
  }
  let password: string | undefined = await ui.showInputBox({
    title: `Guest Console: sign in${where}${retry}`,
    prompt: `Password for ${username.trim()}. ${CANCEL_USES_THE_GRANT}`,
    password: true,
    ignoreFocusOut: true,
  });
  if (password === undefined) {
    return 'cancelled';
  }
  const sent = sink.sendCredentials(username.trim(), password, domain.trim() === '' ? undefined : domain.trim());
  // Drop the only reference we hold; JS strings cannot be wiped in place.
  password = undefined;
  return sent ? 'sent' : 'console-gone';
}
