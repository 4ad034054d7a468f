// VS Code's theme colours as a webview receives them (--vscode-* on <html>, a class on
// <body>), for the contrast checks of the browser lane: the variables view.css uses, as
// code-server 4.100.3 (VS Code 1.100.3) set them in the panel's webview under its four
// default themes (dumped by test/e2e/operator.test.ts to $GC_ARTIFACTS_DIR/
// e2e-theme-variables.json, which measures the same checks in the live workbench). A
// variable a theme leaves unset is absent here too, as in VS Code: view.css's fallback applies.
export interface ThemeColours {
  name: string;
  bodyClass: string;
  vars: Record<string, string>;
}

export const THEMES: readonly ThemeColours[] = [
  { name: 'the fallbacks alone', bodyClass: 'vscode-dark', vars: {} },
  {
    name: 'Dark Modern',
    bodyClass: 'vscode-dark',
    vars: {
      '--vscode-button-background': "#0078d4",
      '--vscode-button-border': "rgba(255, 255, 255, 0.07)",
      '--vscode-button-foreground': "#ffffff",
      '--vscode-button-hoverBackground': "#026ec1",
      '--vscode-descriptionForeground': "#9d9d9d",
      '--vscode-editor-background': "#1f1f1f",
      '--vscode-editor-font-family': "'Droid Sans Mono', 'monospace', monospace",
      '--vscode-errorForeground': "#f85149",
      '--vscode-focusBorder': "#0078d4",
      '--vscode-font-family': "system-ui, \"Ubuntu\", \"Droid Sans\", sans-serif",
      '--vscode-font-size': "13px",
      '--vscode-foreground': "#cccccc",
      '--vscode-inputValidation-errorBackground': "#5a1d1d",
      '--vscode-inputValidation-errorBorder': "#be1100",
      '--vscode-inputValidation-warningBackground': "#352a05",
      '--vscode-inputValidation-warningBorder': "#b89500",
      '--vscode-panel-border': "#2b2b2b",
    },
  },
  {
    name: 'Light Modern',
    bodyClass: 'vscode-light',
    vars: {
      '--vscode-button-background': "#005fb8",
      '--vscode-button-border': "rgba(0, 0, 0, 0.1)",
      '--vscode-button-foreground': "#ffffff",
      '--vscode-button-hoverBackground': "#0258a8",
      '--vscode-descriptionForeground': "#3b3b3b",
      '--vscode-editor-background': "#ffffff",
      '--vscode-editor-font-family': "'Droid Sans Mono', 'monospace', monospace",
      '--vscode-errorForeground': "#f85149",
      '--vscode-focusBorder': "#005fb8",
      '--vscode-font-family': "system-ui, \"Ubuntu\", \"Droid Sans\", sans-serif",
      '--vscode-font-size': "13px",
      '--vscode-foreground': "#3b3b3b",
      '--vscode-inputValidation-errorBackground': "#f2dede",
      '--vscode-inputValidation-errorBorder': "#be1100",
      '--vscode-inputValidation-warningBackground': "#f6f5d2",
      '--vscode-inputValidation-warningBorder': "#b89500",
      '--vscode-panel-border': "#e5e5e5",
    },
  },
  {
    name: 'Dark High Contrast',
    bodyClass: 'vscode-high-contrast',
    vars: {
      '--vscode-button-border': "#6fc3df",
      '--vscode-button-foreground': "#ffffff",
      '--vscode-contrastActiveBorder': "#f38518",
      '--vscode-contrastBorder': "#6fc3df",
      '--vscode-descriptionForeground': "rgba(255, 255, 255, 0.7)",
      '--vscode-editor-background': "#000000",
      '--vscode-editor-font-family': "'Droid Sans Mono', 'monospace', monospace",
      '--vscode-errorForeground': "#f48771",
      '--vscode-focusBorder': "#f38518",
      '--vscode-font-family': "system-ui, \"Ubuntu\", \"Droid Sans\", sans-serif",
      '--vscode-font-size': "13px",
      '--vscode-foreground': "#ffffff",
      '--vscode-inputValidation-errorBackground': "#000000",
      '--vscode-inputValidation-errorBorder': "#6fc3df",
      '--vscode-inputValidation-warningBackground': "#000000",
      '--vscode-inputValidation-warningBorder': "#6fc3df",
      '--vscode-panel-border': "#6fc3df",
    },
  },
  {
    name: 'Light High Contrast',
    bodyClass: 'vscode-high-contrast-light',
    vars: {
      '--vscode-button-background': "#0f4a85",
      '--vscode-button-border': "#0f4a85",
      '--vscode-button-foreground': "#ffffff",
      '--vscode-button-hoverBackground': "#0f4a85",
      '--vscode-contrastActiveBorder': "#006bbd",
      '--vscode-contrastBorder': "#0f4a85",
      '--vscode-descriptionForeground': "rgba(41, 41, 41, 0.7)",
      '--vscode-editor-background': "#ffffff",
      '--vscode-editor-font-family': "'Droid Sans Mono', 'monospace', monospace",
      '--vscode-errorForeground': "#b5200d",
      '--vscode-focusBorder': "#006bbd",
      '--vscode-font-family': "system-ui, \"Ubuntu\", \"Droid Sans\", sans-serif",
      '--vscode-font-size': "13px",
      '--vscode-foreground': "#292929",
      '--vscode-inputValidation-errorBackground': "#ffffff",
      '--vscode-inputValidation-errorBorder': "#0f4a85",
      '--vscode-inputValidation-warningBackground': "#ffffff",
      '--vscode-inputValidation-warningBorder': "#0f4a85",
      '--vscode-panel-border': "#0f4a85",
    },
  },
];
