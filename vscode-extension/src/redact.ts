// Everything the extension writes to its output channel passes through here: the
// console's stderr, malformed stdout lines, errors. Capabilities are 64-hex strings and
// passwords travel under a "password" key; neither may reach a log.

const HEX_SECRET = /\b[0-9a-fA-F]{32,}\b/g;
const SECRET_FIELD = /("(?:password|capability|token|secret)"\s*:\s*)"(?:[^"\\]|\\.)*"?/gi;
const MAX_LOGGED_CHARS = 200;

export function redact(text: string): string {
  let out = text.replace(SECRET_FIELD, '$1"<redacted>"').replace(HEX_SECRET, '<hex-redacted>');
  if (out.length > MAX_LOGGED_CHARS) {
    out = `${out.slice(0, MAX_LOGGED_CHARS)}…(${out.length} chars)`;
  }
  return out;
}
