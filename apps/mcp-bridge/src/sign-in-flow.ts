import { type SignInPoll, type SignInStarted as Started } from '@tollgate/contracts';
import { ConfigStore, type SavedCredentials } from './config-store';

export interface GatewayTarget {
  /** The gateway's base address, e.g. http://127.0.0.1:3000 */
  gateway: string;
  /** The MCP URL's slug: /mcp/<slug> */
  slug: string;
  deviceName: string;
}

export type SignInState =
  | { kind: 'idle' }
  | { kind: 'pending'; approvalUrl: string; userCode: string; expiresAt: string }
  | { kind: 'ended'; reason: 'expired' | 'failed'; approvalUrl?: string }
  | { kind: 'connected'; credentials: SavedCredentials };

export class GatewayUnreachable extends Error {}

/**
 * One device sign-in against the gateway (G2): start it, poll until the owner
 * approves or it expires, save the credential. It never reopens or restarts
 * an ended sign-in by itself: the user runs the terminal command for that.
 */
export class SignInFlow {
  private state: SignInState = { kind: 'idle' };
  private stopped = false;

  constructor(
    private readonly target: GatewayTarget,
    private readonly store: ConfigStore,
    private readonly onConnected: (c: SavedCredentials) => void,
  ) {}

  get current(): SignInState {
    return this.state;
  }

  connectedWith(c: SavedCredentials): void {
    this.state = { kind: 'connected', credentials: c };
  }

  /** Starts a sign-in; the lock must be free (see ConfigStore.tryLock). */
  async start(): Promise<{ kind: 'pending'; approvalUrl: string; userCode: string } | { kind: 'other-window'; userCode: string }> {
    let started: Started;
    try {
      const res = await fetch(`${this.target.gateway}/signin/device`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ deviceName: this.target.deviceName, slug: this.target.slug }),
      });
      if (!res.ok) throw new GatewayUnreachable(`the gateway refused the sign-in (HTTP ${res.status})`);
      started = (await res.json()) as Started;
    } catch (e) {
      throw e instanceof GatewayUnreachable ? e : new GatewayUnreachable('the gateway cannot be reached');
    }
    const lock = this.store.tryLock({ requestId: started.requestId, approvalUrl: started.approvalUrl, userCode: started.userCode, expiresAt: started.expiresAt });
    if (!lock.taken) return { kind: 'other-window', userCode: lock.heldBy.userCode };
    this.state = { kind: 'pending', approvalUrl: started.approvalUrl, userCode: started.userCode, expiresAt: started.expiresAt };
    void this.pollUntilDone(started);
    return { kind: 'pending', approvalUrl: started.approvalUrl, userCode: started.userCode };
  }

  stop(): void {
    this.stopped = true;
    if (this.state.kind === 'pending') this.store.releaseLock();
  }

  /** Waits for the approval in the foreground (the terminal command). */
  async waitForOutcome(): Promise<SignInState> {
    while (this.state.kind === 'pending') await sleep(200);
    return this.state;
  }

  private async pollUntilDone(s: Started): Promise<void> {
    const url = `${this.target.gateway}/signin/device/${s.requestId}/poll`;
    while (!this.stopped) {
      await sleep(s.intervalMs);
      let out: SignInPoll;
      try {
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pollToken: s.pollToken }) });
        out = (await res.json()) as typeof out;
      } catch {
        if (Date.parse(s.expiresAt) < Date.now()) out = { status: 'expired' } as SignInPoll;
        else continue; // the gateway may be restarting: keep polling until the request expires
      }
      if (out.status === 'pending') continue;
      this.store.releaseLock();
      if (out.status === 'approved') {
        const credentials: SavedCredentials = { gateway: this.target.gateway, slug: this.target.slug, credential: out.credential, agentId: out.agentId, savedAt: new Date().toISOString() };
        this.store.saveCredentials(credentials);
        this.state = { kind: 'connected', credentials };
        this.onConnected(credentials);
      } else {
        this.state = { kind: 'ended', reason: out.status === 'expired' ? 'expired' : 'failed', approvalUrl: s.approvalUrl };
      }
      return;
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
