// Offers the active run's MCP server (`guest-console mcp --run RUN`) to VS Code.
// vscode.lm.registerMcpServerDefinitionProvider is final only from VS Code 1.101 (in
// 1.100 it is a proposed API), so everything here is looked up at run time and the
// extension works without it.

import { Disposable, Emitter, IDisposable } from './Disposable';

export const MCP_PROVIDER_ID = 'guestConsole.mcp';

type StdioDefinitionCtor = new (label: string, command: string, args?: string[], env?: Record<string, string>, version?: string) => unknown;
interface McpProvider {
  onDidChangeMcpServerDefinitions: (listener: () => void) => IDisposable;
  provideMcpServerDefinitions: () => unknown[];
  resolveMcpServerDefinition: (definition: unknown) => unknown;
}
interface McpLm {
  registerMcpServerDefinitionProvider(id: string, provider: McpProvider): IDisposable;
}

export class McpRegistration extends Disposable {
  private activeRun: string | undefined;
  private readonly changed = this.register(new Emitter<void>());
  readonly available: boolean;

  /** @param vscodeApi the `vscode` module (or a fake); only `lm` and `McpStdioServerDefinition` are read. */
  constructor(
    vscodeApi: unknown,
    private readonly binaryPath: () => string,
    private readonly version: string,
    log: (line: string) => void,
  ) {
    super();
    const api = vscodeApi as { lm?: Partial<McpLm>; McpStdioServerDefinition?: StdioDefinitionCtor } | undefined;
    const lm = api?.lm;
    const ctor = api?.McpStdioServerDefinition;
    if (typeof lm?.registerMcpServerDefinitionProvider !== 'function' || typeof ctor !== 'function') {
      this.available = false;
      log('MCP server registration is not available in this VS Code; use `guest-console mcp --run RUN` directly');
      return;
    }
    try {
      this.register(
        lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
          onDidChangeMcpServerDefinitions: (listener) => this.changed.event(() => listener()),
          provideMcpServerDefinitions: () =>
            this.activeRun === undefined ? [] : [new ctor(`Guest Console (${this.activeRun})`, this.binaryPath(), ['mcp', '--run', this.activeRun], {}, this.version)],
          resolveMcpServerDefinition: (definition) => definition,
        }),
      );
      this.available = true;
    } catch (err) {
      this.available = false;
      log(`MCP server registration failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  get run(): string | undefined {
    return this.activeRun;
  }

  setActiveRun(run: string | undefined): void {
    if (run !== this.activeRun) {
      this.activeRun = run;
      this.changed.fire();
    }
  }

  clearRun(run: string): void {
    if (this.activeRun === run) {
      this.setActiveRun(undefined);
    }
  }
}
