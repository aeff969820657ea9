import { type CallProgressedPayload, MAX_PROGRESS_MESSAGE_CHARS } from '@tollgate/contracts';
import { type UpstreamProgress } from '@tollgate/mcp-runtime';

/** Most progress notices relayed for one attempt: a provider cannot flood the broker or the agent through a call. */
export const MAX_PROGRESS_PER_ATTEMPT = 100;

/**
 * Which of a provider's progress notifications of one attempt travel on, as CallProgressed: only values that increase
 * (MCP requires it; a provider that repeats or goes back is not echoed), bounded in number and message length, and
 * only well-formed numbers. Pure: the caller publishes what `accept` returns.
 */
export class ProgressGate {
  private last = -Infinity;
  private sent = 0;

  constructor(private readonly intentId: string, private readonly attempt: number) {}

  accept(p: UpstreamProgress): CallProgressedPayload | undefined {
    if (!Number.isFinite(p.progress) || p.progress < 0 || p.progress <= this.last || this.sent >= MAX_PROGRESS_PER_ATTEMPT) return undefined;
    this.last = p.progress;
    this.sent++;
    const total = typeof p.total === 'number' && Number.isFinite(p.total) && p.total > 0 ? p.total : undefined;
    const message = typeof p.message === 'string' && p.message.length > 0 ? p.message.slice(0, MAX_PROGRESS_MESSAGE_CHARS) : undefined;
    return { intentId: this.intentId, attempt: this.attempt, progress: p.progress, ...(total !== undefined ? { total } : {}), ...(message ? { message } : {}) };
  }

  /** The attempt's last notice (its call returned): the last value again, or 0 when none went out. */
  end(): CallProgressedPayload {
    return { intentId: this.intentId, attempt: this.attempt, progress: this.sent > 0 ? this.last : 0, ended: true };
  }
}

export interface ProgressRelay {
  /** The callback the upstream call gets. */
  listen(p: UpstreamProgress): void;
  /**
   * The provider's call returned: the closing notice is published after every notice heard (in order), and the
   * promise resolves once all are published (or lost). The attempt's outcome is reported after it.
   */
  end(): Promise<void>;
}

/**
 * What an attempt gives the upstream call when its agent asked for progress: what the gate lets through is published
 * in order (one publish after the other), then the closing notice; a failed publish only loses that notice (a request
 * that waits for a lost closing notice answers after a bounded wait).
 */
export function relayProgress(intentId: string, attempt: number, publish: (p: CallProgressedPayload) => Promise<void>, onLost: (err: unknown) => void): ProgressRelay {
  const gate = new ProgressGate(intentId, attempt);
  let chain = Promise.resolve();
  return {
    listen: (p) => {
      const notice = gate.accept(p);
      if (notice) chain = chain.then(() => publish(notice)).catch(onLost);
    },
    end: () => (chain = chain.then(() => publish(gate.end())).catch(onLost)),
  };
}
