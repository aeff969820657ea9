import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ProtocolError, ProtocolErrorCode, Server, type Tool } from '@modelcontextprotocol/server';
import { ConfigStore, LockUnavailable, type SavedCredentials, SettingsUnreadable } from './config-store';
import { type GatewayTarget, GatewayUnreachable, SignInFlow } from './sign-in-flow';

export const CONNECTED_TEXT = 'Assay is connected. Its tools are listed here.';

const SIGN_IN_TOOL: Tool = {
  name: 'assay_sign_in',
  description: 'Connects this app to your Tollgate account. Returns a link to approve this device; the tools appear once it is approved. Free.',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  annotations: { readOnlyHint: false, openWorldHint: true },
};

/**
 * The local MCP server of desktop clients: stdio towards the client, Streamable
 * HTTP towards the gateway. Not signed in, it lists only assay_sign_in; once
 * the owner approves the device it lists the gateway's tools (and tells the
 * client with notifications/tools/list_changed) and forwards calls unchanged.
 * Both MCP eras: `serveStdio` asks `createServer` for the
 * instance of the connection (2026-07-28 or 2025, as the client opens it), and
 * the gateway is reached in its newest era.
 */
export class BridgeServer {
  private upstream?: Client;
  private readonly flow: SignInFlow;
  /** The instances serving the client (the connection's, and briefly the SDK's era probe). */
  private readonly servers = new Set<Server>();

  constructor(
    private readonly target: GatewayTarget,
    private readonly store: ConfigStore,
    private readonly terminalCommand: string,
  ) {
    this.flow = new SignInFlow(target, store, (c) => void this.connect(c).then(() => this.toolsChanged()).catch(() => undefined));
  }

  /** An MCP server for one stdio connection (the factory `serveStdio` calls). */
  createServer(): Server {
    const server = new Server({ name: 'tollgate-mcp', version: '0.1.0' }, { capabilities: { tools: { listChanged: true } } });
    server.setRequestHandler('tools/list', async () => {
      if (!this.upstream) return { tools: [SIGN_IN_TOOL] };
      const { tools } = await this.upstream.listTools(undefined, { cacheMode: 'bypass' });
      return { tools: [...tools, SIGN_IN_TOOL] };
    });
    server.setRequestHandler('tools/call', async (req) => {
      if (req.params.name === SIGN_IN_TOOL.name) return { content: [{ type: 'text', text: await this.signIn() }] };
      if (!this.upstream) {
        return { isError: true, content: [{ type: 'text', text: 'Not signed in to Tollgate. Call assay_sign_in first.' }] };
      }
      // Payment and idempotency metadata travel in _meta unchanged; the result comes back as the gateway sent it.
      return (await this.upstream.callTool({ name: req.params.name, arguments: req.params.arguments ?? {}, ...(req.params._meta ? { _meta: req.params._meta } : {}) })) as never;
    });
    server.onclose = () => this.servers.delete(server);
    this.servers.add(server);
    return server;
  }

  private toolsChanged(): void {
    for (const server of this.servers) void server.sendToolListChanged().catch(() => undefined);
  }

  /** Connects with a saved credential, if there is one for this gateway and URL. Unreadable settings leave it signed out. */
  async resume(): Promise<void> {
    let saved: SavedCredentials | undefined;
    try {
      saved = this.store.readCredentials(this.target.gateway, this.target.slug);
    } catch {
      return;
    }
    if (saved) await this.connect(saved).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.flow.stop();
    await this.upstream?.close().catch(() => undefined);
    await Promise.all([...this.servers].map((s) => s.close().catch(() => undefined)));
  }

  private async connect(c: SavedCredentials): Promise<void> {
    const client = new Client({ name: 'tollgate-mcp', version: '0.1.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${this.target.gateway}/mcp/${this.target.slug}`), {
      requestInit: { headers: { Authorization: `Bearer ${c.credential}` } },
    }));
    this.upstream = client;
    this.flow.connectedWith(c);
  }

  /** G2's answers, in order: connected; this window's sign-in in progress; ended (terminal command); another window; start one. */
  private async signIn(): Promise<string> {
    if (this.upstream) return CONNECTED_TEXT;
    const state = this.flow.current;
    if (state.kind === 'pending') return approvalText(state.approvalUrl, state.userCode);
    if (state.kind === 'ended') {
      return [
        state.reason === 'expired' ? 'The sign-in expired before it was approved.' : 'The sign-in ended without approval.',
        'To sign in, run this in a terminal, then restart this app:', `  ${this.terminalCommand}`,
        ...(state.approvalUrl ? [`The last approval link (open it yourself if it is still valid): ${state.approvalUrl}`] : []),
      ].join('\n');
    }
    try {
      // Settings that exist but cannot be read stop the sign-in: never overwrite what cannot be read.
      this.store.readCredentials(this.target.gateway, this.target.slug);
      const other = this.store.liveLockOfOthers();
      if (other) return otherWindowText(other.userCode);
      const started = await this.flow.start();
      return started.kind === 'other-window' ? otherWindowText(started.userCode) : approvalText(started.approvalUrl, started.userCode);
    } catch (e) {
      if (e instanceof SettingsUnreadable || e instanceof LockUnavailable || e instanceof GatewayUnreachable) {
        throw new ProtocolError(ProtocolErrorCode.InternalError, `Could not start the sign-in: ${e.message}.`);
      }
      throw new ProtocolError(ProtocolErrorCode.InternalError, 'Could not start the sign-in.');
    }
  }
}

function approvalText(url: string, code: string): string {
  return [
    'To connect Tollgate, open this link and approve this device:', url,
    `The page shows the code ${code}; check that it matches.`,
    'Then come back here: the tools are listed once the approval is done (restart the app if they do not appear).',
  ].join('\n');
}

function otherWindowText(code: string): string {
  return `Another window is already signing in to Tollgate. Approve the request there (code ${code}), then come back here.`;
}
